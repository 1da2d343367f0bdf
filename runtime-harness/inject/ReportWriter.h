//===--- ReportWriter.h - JSON lines that survive a crash -------*- C++ -*-===//
//
// Each report line is written with one write(2) on an O_APPEND descriptor as
// soon as the event happens, so a target that crashes or aborts afterwards
// loses nothing, and several processes can share one file.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_HARNESS_INJECT_REPORTWRITER_H
#define CUDAGRAPH_HARNESS_INJECT_REPORTWRITER_H

#include <mutex>
#include <string>

namespace cudagraph {
namespace harness {

class ReportWriter {
public:
  /// Opens the file named by PathTemplate ("%p" becomes the pid); "-" or ""
  /// writes to stderr. Returns false (and says why on stderr) on failure.
  bool open(const std::string &PathTemplate);
  /// Writes Line plus a newline.
  void writeLine(std::string Line);
  /// Writes Size bytes with write(2) alone: no lock, no allocation, so a
  /// fatal-signal handler may call it.
  void writeFromSignal(const char *Data, size_t Size) const;
  /// Held across fork(): a child must not inherit the lock taken by a
  /// thread that does not exist in it.
  void lock() { Mutex.lock(); }
  void unlock() { Mutex.unlock(); }
  const std::string &path() const { return Path; }

private:
  int Fd = -1;
  std::string Path;
  std::mutex Mutex;
};

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_INJECT_REPORTWRITER_H
