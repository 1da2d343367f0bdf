//===--- PrintSource.cpp - the unit a fuzz input becomes ------------------===//
//
//   cudagraph-fuzz-source FILE     prints the translation unit FILE becomes
//   cudagraph-fuzz-source --random N SEED DIR
//                                  writes N random inputs of 32 to 512 bytes
//                                  to DIR (grammar seeds)
//
//===----------------------------------------------------------------------===//

#include "SourceGrammar.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

int main(int Argc, char **Argv) {
  if (Argc == 5 && std::string(Argv[1]) == "--random") {
    int Count = std::atoi(Argv[2]);
    std::mt19937 Random(static_cast<unsigned>(std::atoi(Argv[3])));
    for (int I = 0; I < Count; ++I) {
      std::vector<char> Bytes(32 + Random() % 481);
      for (char &B : Bytes)
        B = static_cast<char>(Random() & 0xff);
      if (Bytes[0] % 8 == 0) // Grammar seeds, not raw text.
        Bytes[0] = 1;
      std::string Name = std::string(Argv[4]) + "/grammar-" + std::to_string(I);
      std::ofstream(Name, std::ios::binary).write(Bytes.data(), Bytes.size());
    }
    return 0;
  }
  if (Argc != 2) {
    std::fprintf(stderr, "usage: %s FILE | --random N SEED DIR\n", Argv[0]);
    return 2;
  }
  std::ifstream In(Argv[1], std::ios::binary);
  if (!In) {
    std::fprintf(stderr, "cudagraph-fuzz-source: cannot read '%s'\n", Argv[1]);
    return 2;
  }
  std::vector<char> Bytes((std::istreambuf_iterator<char>(In)),
                          std::istreambuf_iterator<char>());
  std::fputs(cudagraph::fuzz::sourceFor(
                 reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size())
                 .c_str(),
             stdout);
  return 0;
}
