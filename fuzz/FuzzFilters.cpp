//===--- FuzzFilters.cpp - baseline and diff readers under a fuzzer -------===//
//
// The two files users hand the driver: a baseline (JSON) and a unified diff
// (--changed-lines). The first input byte picks which reader gets the rest;
// both must refuse bad input with a message, never crash.
//
//===----------------------------------------------------------------------===//

#include "FindingLog.h"

#include <cstdint>
#include <string>

using namespace clang::tidy::cudagraph;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  std::string Text(reinterpret_cast<const char *>(Data + 1), Size - 1);
  FindingFilters Filters;
  std::string Error;
  if (Data[0] % 2)
    (void)Filters.loadBaselineText(Text, "fuzz.json", Error);
  else
    (void)Filters.loadChangedLines(Text, "/cudagraph-fuzz", Error);
  return 0;
}
