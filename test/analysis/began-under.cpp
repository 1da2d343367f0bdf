// What the begin's own conditions fix holds in the code the capture runs.
// Members: an early exit before the begin (`if (!enabled_ || cfg_.mode != 0)
// return;`) rules out, in the methods the region calls on the same object,
// the arms that need the opposite. The stream a capture runs on is never 0:
// a helper's `if (stream == 0)` fallback is dead when it is given that
// stream, by parameter or as the member the capture began on.
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- -- -std=c++17 -isystem %cuda_stubs

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

struct Config {
  int mode = 0;
  bool verbose = false;
};

void copyIn(float *dst, const float *src, size_t n, cudaStream_t stream) {
  if (stream == 0)
    cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice);
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:5: warning: 'cudaMemcpy' copies synchronously{{.*}}during CUDA graph capture
  else
    cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice,
                    stream);
}

void copyTwice(float *dst, const float *src, size_t n, cudaStream_t stream) {
  copyIn(dst, src, n, stream);
  if (!stream)
    cudaDeviceSynchronize();
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host until all work on the device finishes during CUDA graph capture
}

// Another object's stream field is not the captured one, though it is the
// same field of the same type.
struct Context {
  cudaStream_t stream = nullptr;
};

void copyOut(float *dst, const float *src, size_t n, cudaStream_t stream) {
  if (!stream)
    cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice);
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:5: warning: 'cudaMemcpy' copies synchronously{{.*}}during CUDA graph capture
  else
    cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice,
                    stream);
}

void captureOnContext(Context *ctx, const Context *other, float *d,
                      const float *s, size_t n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(ctx->stream, cudaStreamCaptureModeGlobal);
  copyOut(d, s, n, other->stream);
  cudaStreamEndCapture(ctx->stream, &g);
}

// Each shape below that is silent has a twin that is reported, with the
// same callees, where the fact does not hold.
class Pipeline {
public:
  void step(float *out, const float *in, size_t n, cudaStream_t s) {
    if (!enabled_ || cfg_.mode != 0) {
      body(out, in, n, s);
      return;
    }
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    body(out, in, n, s);
    cudaStreamEndCapture(s, &g);
  }

  // A check whose failure does not return is an early exit too.
  void stepChecked(cudaStream_t s) {
    if (!enabled_) {
      std::fprintf(stderr, "graphs are off\n");
      std::abort();
    }
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    fallback(s);
    cudaStreamEndCapture(s, &g);
  }

  // Captured on the member stream: methods testing it see it set.
  void stepOnMember() {
    cudaGraph_t g;
    cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
    drainIfDefault();
    copyTwice(out_, in_, n_, stream_);
    cudaStreamEndCapture(stream_, &g);
  }

private:
  void body(float *out, const float *in, size_t n, cudaStream_t s) {
    copyTwice(out, in, n, s);
    if (cfg_.mode == 1)
      modeOne(s);
    if (!enabled_)
      fallback(s);
  }
  void modeOne(cudaStream_t s) { cudaStreamSynchronize(s); }
  void fallback(cudaStream_t s) {
    if (!enabled_)
      cudaStreamSynchronize(s);
  }
  void drainIfDefault() {
    if (stream_ == nullptr)
      cudaDeviceSynchronize();
  }

  Config cfg_;
  bool enabled_ = true;
  cudaStream_t stream_ = nullptr;
  float *out_ = nullptr;
  const float *in_ = nullptr;
  size_t n_ = 0;
};

class Twin {
public:
  // The guard's member is changed before the begin: it says nothing there.
  void stepRetuned(cudaStream_t s, int next) {
    if (cfg_.mode != 0)
      return;
    cfg_.mode = next;
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    ifModeOne(s);
    cudaStreamEndCapture(s, &g);
  }

  // A check that returns is not an exit.
  void stepWarned(cudaStream_t s) {
    if (!enabled_)
      std::fprintf(stderr, "graphs are off\n");
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    fallback(s);
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:5: note: 'Twin::fallback' is called here during capture
    cudaStreamEndCapture(s, &g);
  }

  // Captured on another stream than the member the methods test.
  void stepOnSide(cudaStream_t side) {
    cudaGraph_t g;
    cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal);
    drainIfDefault();
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:5: note: 'Twin::drainIfDefault' is called here during capture
    copyTwice(out_, in_, n_, stream_);
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:5: note: 'copyTwice' is called here during capture
    cudaStreamEndCapture(side, &g);
  }

private:
  void ifModeOne(cudaStream_t s) {
    if (cfg_.mode == 1)
      cudaStreamSynchronize(s);
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:7: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
  }
  void fallback(cudaStream_t s) {
    if (!enabled_)
      cudaStreamSynchronize(s);
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:7: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
  }
  void drainIfDefault() {
    if (stream_ == nullptr)
      cudaDeviceSynchronize();
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:7: warning: 'cudaDeviceSynchronize' blocks the host until all work on the device finishes during CUDA graph capture
  }

  Config cfg_;
  bool enabled_ = true;
  cudaStream_t stream_ = nullptr;
  float *out_ = nullptr;
  const float *in_ = nullptr;
  size_t n_ = 0;
};

// A method called on the object between the begin and a call may change
// what the begin's condition said: a setter of the member does, one of
// another member does not.
class Retuned {
public:
  void step(cudaStream_t s, int next) {
    if (cfg_.mode != 0)
      return;
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    setVerbose(true);
    ifModeThree(s);
    setMode(next);
    ifModeTwo(s);
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:5: note: 'Retuned::ifModeTwo' is called here during capture
    cudaStreamEndCapture(s, &g);
  }

private:
  void setVerbose(bool v) { cfg_.verbose = v; }
  void setMode(int m) { cfg_.mode = m; }
  void ifModeThree(cudaStream_t s) {
    if (cfg_.mode == 3)
      cudaStreamSynchronize(s);
  }
  void ifModeTwo(cudaStream_t s) {
    if (cfg_.mode == 2)
      cudaStreamSynchronize(s);
    // CHECK-MESSAGES-DAG: :[[@LINE-1]]:7: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
  }

  Config cfg_;
};
