// RUN: %check_cudagraph_tidy %s cudagraph-device-alloc %t -- -- -std=c++17 -isystem %cuda_stubs

// A grow-only buffer (`if (!buf_[i] || too small) buf_[i] = make(...)`) is
// filled by the warm-up pass before the capture, and the captured pass
// reuses it. When the same function empties the container first, on every
// way to the test, the warm-up's fill does not last: the captured pass
// allocates again.

// The standard headers come first: the stub's __noinline__ is a macro.
#include <memory>
#include <vector>
#include <cuda_runtime.h>

struct Slab {
  float *data_ = nullptr;
  size_t n_ = 0;
  explicit Slab(size_t n) : n_(n) { cudaMalloc(&data_, n * sizeof(float)); }
  // CHECK-MESSAGES: :[[@LINE-1]]:37: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+29]]:24: note: 'make_unique' constructs a 'Slab' here during capture
  // CHECK-MESSAGES: :[[@LINE+38]]:14: note: 'make_unique' also constructs a 'Slab' here during capture
  ~Slab() { cudaFree(data_); }
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: 'cudaFree' allocates or frees device memory during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+19]]:15: note: 'clear' destroys a 'Slab' here during capture, which runs its destructor
  // CHECK-MESSAGES: :[[@LINE+19]]:15: note: 'resize' also destroys a 'Slab' here during capture
  // CHECK-MESSAGES: :[[@LINE+31]]:10: note: 'reset' also destroys a 'Slab' here during capture
  size_t size() const { return n_; }
  float *data() { return data_; }
};

struct Accumulator {
  cudaStream_t s_;
  std::vector<std::unique_ptr<Slab>> sums_;
  std::unique_ptr<Slab> one_;

  // Positive: the first net empties the sums, then a separate test of the
  // same condition refills them; the grow test always finds them empty.
  void sum(int nets, int parts, size_t n) {
    for (int k = 0; k < nets; k++) {
      if (k == 0) {
        if (nets == 1)
          return;
        sums_.clear();
        sums_.resize(parts);
      }
      if (k == 0) {
        for (int i = 0; i < parts; i++) {
          if (!sums_[i] || sums_[i]->size() < n)
            sums_[i] = std::make_unique<Slab>(n);
          cudaMemsetAsync(sums_[i]->data(), 0, n * sizeof(float), s_);
        }
      }
    }
  }
  // Positive: reset on the way (a default argument), then made again.
  void one(size_t n) {
    one_.reset();
    if (!one_)
      one_ = std::make_unique<Slab>(n);
  }
};

// Its memory is returned elsewhere: only the allocation can be reported.
struct Held {
  float *data_ = nullptr;
  size_t n_ = 0;
  explicit Held(size_t n) : n_(n) { cudaMalloc(&data_, n * sizeof(float)); }
  size_t size() const { return n_; }
};

struct Keeper {
  std::unique_ptr<Held> kept_[4];
  std::unique_ptr<Held> sized_[4];
  std::unique_ptr<Held> tail_;
  std::unique_ptr<Held> other_;
  bool resized_ = false;

  // Negative: grow-only without emptying; the warm-up's buffers last.
  void keep(int parts, size_t n) {
    for (int i = 0; i < parts; i++)
      if (!kept_[i] || kept_[i]->size() < n)
        kept_[i] = std::make_unique<Held>(n);
  }
  // Negative: emptied only when the geometry changed, which the warm-up
  // with the same geometry has already seen.
  void resize(int parts, size_t n) {
    if (resized_)
      tail_ = nullptr;
    if (!tail_)
      tail_ = std::make_unique<Held>(n);
  }
  // Negative: emptied after the test, or another object emptied.
  void tail(size_t n, std::unique_ptr<Held> &mine) {
    if (!other_)
      other_ = std::make_unique<Held>(n);
    mine.reset();
    if (n == 0)
      other_ = nullptr;
  }
};

void capture(Accumulator &a, Keeper &k, std::unique_ptr<Held> &mine,
             int nets, int parts, size_t n) {
  cudaGraph_t graph;
  a.sum(nets, parts, n);
  a.one(n);
  k.keep(parts, n);
  k.resize(parts, n);
  k.tail(n, mine);
  cudaStreamBeginCapture(a.s_, cudaStreamCaptureModeThreadLocal);
  a.sum(nets, parts, n);
  a.one(n);
  k.keep(parts, n);
  k.resize(parts, n);
  k.tail(n, mine);
  cudaStreamEndCapture(a.s_, &graph);
}
