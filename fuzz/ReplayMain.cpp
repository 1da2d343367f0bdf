//===--- ReplayMain.cpp - run saved fuzz inputs without libFuzzer ---------===//
//
//   cudagraph-replay-TARGET FILE|DIR...
//
// Runs each file (each file of each directory) through the target's
// LLVMFuzzerTestOneInput once, in order, and prints how many ran. A crash
// or a sanitizer report ends the process, as it would under libFuzzer.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

static bool runFile(const std::filesystem::path &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    std::fprintf(stderr, "replay: cannot read '%s'\n", Path.c_str());
    return false;
  }
  std::vector<char> Bytes((std::istreambuf_iterator<char>(In)),
                          std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(Bytes.data()),
                         Bytes.size());
  return true;
}

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIR...\n", Argv[0]);
    return 2;
  }
  unsigned Ran = 0;
  for (int I = 1; I < Argc; ++I) {
    std::error_code Error;
    std::filesystem::path Path(Argv[I]);
    if (std::filesystem::is_directory(Path, Error)) {
      std::vector<std::filesystem::path> Files;
      for (const auto &Entry : std::filesystem::directory_iterator(Path, Error))
        if (Entry.is_regular_file())
          Files.push_back(Entry.path());
      std::sort(Files.begin(), Files.end());
      for (const auto &F : Files) {
        if (!runFile(F))
          return 2;
        ++Ran;
      }
    } else {
      if (!runFile(Path))
        return 2;
      ++Ran;
    }
  }
  std::printf("replay: %u inputs ran\n", Ran);
  return 0;
}
