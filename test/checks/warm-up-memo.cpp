// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- -- -std=c++17 -isystem %cuda_stubs

// A memo kept in static state behind free functions: the first call with a
// key measures (and synchronizes), later calls with the same key return the
// stored result. A warm-up with the same work before the begin has filled
// it; without one, the captured call measures.

#include <cuda_runtime.h>
#include <map>
#include <mutex>
#include <optional>

std::map<int, int> &tuneCache() {
  static std::map<int, int> cache;
  return cache;
}
std::mutex &tuneMutex() {
  static std::mutex m;
  return m;
}
std::optional<int> lookupTuned(int key) {
  std::lock_guard<std::mutex> lock(tuneMutex());
  auto &cache = tuneCache();
  auto it = cache.find(key);
  if (it == cache.end())
    return std::nullopt;
  return it->second;
}
int storeTuned(int key, int value) {
  std::lock_guard<std::mutex> lock(tuneMutex());
  auto &cache = tuneCache();
  cache.emplace(key, value);
  return value;
}
int measure(int key, cudaStream_t s) {
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
  return key * 2;
}
int tunedConfig(int key, cudaStream_t s) {
  if (auto hit = lookupTuned(key))
    return *hit;
  return storeTuned(key, measure(key, s));
}
void launchTuned(int config, cudaStream_t s);

// Negative: the warm-up call filled the memo for the key.
void warmedUp(cudaStream_t s, cudaGraph_t *g) {
  launchTuned(tunedConfig(64, s), s);
  cudaStreamSynchronize(s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchTuned(tunedConfig(64, s), s);
  cudaStreamEndCapture(s, g);
}

// Positive: no warm-up, the first call measures under capture.
void cold(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchTuned(tunedConfig(32, s), s);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: note: 'tunedConfig' is called here during capture
  cudaStreamEndCapture(s, g);
}

// A lazy upload behind a member flag that the object's own method clears:
// the first call of devicePtr() uploads, later calls do not. A warm-up call
// before the begin has done it.
struct Mirror {
  bool hostAhead = true;
  cudaStream_t stream = nullptr;
  float *data = nullptr;
  void upload() {
    if (!data)
      return;
    cudaStreamSynchronize(stream);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
    // CHECK-MESSAGES: :[[@LINE+19]]:3: note: CUDA graph capture begins here (global mode)
    hostAhead = false;
  }
  float *devicePtr() {
    if (hostAhead)
      upload();
    return data;
  }
};
void launchOn(float *p, cudaStream_t s);
// Negative: the warm-up call uploaded.
void mirrorWarm(Mirror &m, cudaStream_t s, cudaGraph_t *g) {
  launchOn(m.devicePtr(), s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchOn(m.devicePtr(), s);
  cudaStreamEndCapture(s, g);
}
// Positive: the captured call is the first.
void mirrorCold(Mirror &m, cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchOn(m.devicePtr(), s);
  cudaStreamEndCapture(s, g);
}
