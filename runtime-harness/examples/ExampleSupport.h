// Helpers the fault and multi-GPU example programs share: a gate that
// releases its threads once all have arrived, and a checksum of result bytes
// for comparing runs with and without the harness.
#ifndef CUDAGRAPH_EXAMPLES_EXAMPLESUPPORT_H
#define CUDAGRAPH_EXAMPLES_EXAMPLESUPPORT_H

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace example {

/// Releases every thread once Count have arrived.
class Gate {
public:
  explicit Gate(int Count) : Left(Count) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> Lock(M);
    if (--Left == 0)
      Cv.notify_all();
    Cv.wait(Lock, [&] { return Left <= 0; });
  }
  /// Waits without arriving.
  void wait() {
    std::unique_lock<std::mutex> Lock(M);
    Cv.wait(Lock, [&] { return Left <= 0; });
  }

private:
  std::mutex M;
  std::condition_variable Cv;
  int Left;
};

/// FNV-1a over Size bytes.
inline uint64_t fnv1a(const void *Data, size_t Size) {
  const unsigned char *Bytes = static_cast<const unsigned char *>(Data);
  uint64_t Hash = 1469598103934665603ull;
  for (size_t I = 0; I < Size; ++I)
    Hash = (Hash ^ Bytes[I]) * 1099511628211ull;
  return Hash;
}

} // namespace example

#endif // CUDAGRAPH_EXAMPLES_EXAMPLESUPPORT_H
