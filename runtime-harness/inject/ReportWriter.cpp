//===--- ReportWriter.cpp - JSON lines that survive a crash ---------------===//

#include "ReportWriter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace cudagraph {
namespace harness {

bool ReportWriter::open(const std::string &PathTemplate) {
  Path.clear();
  for (size_t I = 0; I < PathTemplate.size(); ++I) {
    if (PathTemplate[I] == '%' && I + 1 < PathTemplate.size() &&
        PathTemplate[I + 1] == 'p') {
      Path += std::to_string(getpid());
      ++I;
    } else {
      Path += PathTemplate[I];
    }
  }
  if (Path.empty() || Path == "-") {
    Path = "<stderr>";
    Fd = STDERR_FILENO;
    return true;
  }
  Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (Fd < 0) {
    std::fprintf(stderr, "cudagraph-harness: cannot open report '%s': %s\n",
                 Path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

void ReportWriter::writeLine(std::string Line) {
  if (Fd < 0)
    return;
  Line += '\n';
  std::lock_guard<std::mutex> Lock(Mutex);
  writeFromSignal(Line.data(), Line.size());
}

void ReportWriter::writeFromSignal(const char *Data, size_t Left) const {
  if (Fd < 0)
    return;
  while (Left) {
    ssize_t N = ::write(Fd, Data, Left);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    Data += N;
    Left -= static_cast<size_t>(N);
  }
}

} // namespace harness
} // namespace cudagraph
