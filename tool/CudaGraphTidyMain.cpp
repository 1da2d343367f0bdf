//===--- CudaGraphTidyMain.cpp - cudagraph-tidy ---------------------------===//

#include "Driver.h"

int main(int Argc, const char **Argv) {
  return cudagraph::runCudaGraphTidy(Argc, Argv);
}
