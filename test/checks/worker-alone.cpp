// One worker thread that captures its own graphs: after its capture ends,
// no capture is open anywhere (the unit begins no other), so its sync and
// destroy are fine. Compare worker-pool.cpp, where several workers capture.
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-capture-unsafe-call %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <deque>
#include <functional>
#include <thread>
#include <utility>
#include <cuda_runtime.h>

struct Job {
  std::function<void()> run;
  template <typename F> explicit Job(F &&f) : run(std::forward<F>(f)) {}
};

class GraphWorker {
public:
  void start() { worker_ = std::thread([this] { serve(); }); }
  void submitCapture(cudaStream_t s) {
    jobs_.emplace_back([this, s] { captureAndRun(s); });
  }

private:
  void serve() {
    while (!jobs_.empty()) {
      Job j = std::move(jobs_.front());
      jobs_.pop_front();
      j.run();
    }
  }
  void captureAndRun(cudaStream_t s) {
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    cudaGraphExecDestroy(e);
  }
  std::thread worker_;
  std::deque<Job> jobs_;
};

// CHECK-MESSAGES: cudagraph-tidy: 0 findings in 0 files
