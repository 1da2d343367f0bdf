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
