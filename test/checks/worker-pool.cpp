// Worker pools: threads started in a loop run tasks from a queue of stored
// callables. A task that captures in global mode runs on several workers at
// once, so the calls it makes outside its own region (the sync and destroy
// after it launches the graph) meet another worker's open capture. Measured
// on another thread during a global-mode capture: cudaStreamSynchronize,
// cudaGraphInstantiate and cudaGraphExecDestroy fail with 900 (901 at that
// capture's end);
// cudaGraphLaunch succeeds. Tasks the queue holds that do not capture run
// in an order the analysis does not see and are not followed.
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-device-alloc,cudagraph-capture-unsafe-call %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <deque>
#include <functional>
#include <thread>
#include <utility>
#include <vector>
#include <cuda_runtime.h>

struct Job {
  std::function<void(int)> run;
  template <typename F> explicit Job(F &&f) : run(std::forward<F>(f)) {}
};

class GraphPool {
public:
  explicit GraphPool(int n) {
    for (int i = 0; i < n; ++i)
      workers_.emplace_back([this, i] { serve(i); });
  }
  template <typename F> void submit(F &&f) {
    jobs_.emplace_back(std::forward<F>(f));
  }
  void submitCapture(cudaStream_t s) {
    jobs_.emplace_back([this, s](int) { captureAndRun(s); });
  }

private:
  void serve(int id) {
    while (!jobs_.empty()) {
      Job j = std::move(jobs_.front());
      jobs_.pop_front();
      j.run(id);
    }
  }
  void captureAndRun(cudaStream_t s) {
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaGraphInstantiate' instantiates a graph on a thread that may run while a global-mode CUDA graph capture is open{{.*}}(hazard: graph-instantiate) [cudagraph-capture-unsafe-call]
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host until a stream drains on a thread that may run while a global-mode CUDA graph capture is open{{.*}}(hazard: stream-synchronize) [cudagraph-host-sync]
    // CHECK-MESSAGES: :[[@LINE-21]]:41: note: 'GraphPool::captureAndRun' is called here on that thread
    // CHECK-MESSAGES: :[[@LINE-14]]:7: note: the lambda runs on that thread
    // CHECK-MESSAGES: :[[@LINE-29]]:41: note: 'GraphPool::serve' is called here on that thread
    // CHECK-MESSAGES: :[[@LINE-30]]:29: note: a loop starts 'lambda' here on several threads: while one of them has its global-mode capture open, the calls the others make outside their own capture fail
    // CHECK-MESSAGES: :[[@LINE-11]]:5: note: CUDA graph capture begins here (global mode)
    cudaGraphExecDestroy(e);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaGraphExecDestroy' destroys an executable graph on a thread that may run while a global-mode CUDA graph capture is open{{.*}}(hazard: graph-exec-destroy) [cudagraph-capture-unsafe-call]
    // CHECK-MESSAGES: :[[@LINE-28]]:41: note: 'GraphPool::captureAndRun' is called here on that thread
    // CHECK-MESSAGES: :[[@LINE-21]]:7: note: the lambda runs on that thread
    // CHECK-MESSAGES: :[[@LINE-36]]:41: note: 'GraphPool::serve' is called here on that thread
    // CHECK-MESSAGES: :[[@LINE-37]]:29: note: a loop starts 'lambda' here on several threads: while one of them has its global-mode capture open, the calls the others make outside their own capture fail
    // CHECK-MESSAGES: :[[@LINE-18]]:5: note: CUDA graph capture begins here (global mode)
    cudaGraphDestroy(g);
  }
  std::vector<std::thread> workers_;
  std::deque<Job> jobs_;
};

// Queued host work: not followed on the workers.
void setUp(GraphPool &pool, void **p, cudaStream_t s) {
  pool.submit([p](int) { cudaMalloc(p, 64); });
  pool.submitCapture(s);
}

// The same pool capturing in thread-local mode: other workers are free.
struct LocalJob {
  std::function<void(int)> run;
  template <typename F> explicit LocalJob(F &&f) : run(std::forward<F>(f)) {}
};

class LocalPool {
public:
  explicit LocalPool(int n) {
    for (int i = 0; i < n; ++i)
      workers_.emplace_back([this] { serve(); });
  }
  void submitCapture(cudaStream_t s) {
    jobs_.emplace_back([this, s](int) { captureAndRun(s); });
  }

private:
  void serve() {
    while (!jobs_.empty()) {
      LocalJob j = std::move(jobs_.front());
      jobs_.pop_front();
      j.run(0);
    }
  }
  void captureAndRun(cudaStream_t s) {
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    cudaGraphExecDestroy(e);
  }
  std::vector<std::thread> workers_;
  std::deque<LocalJob> jobs_;
};
