// Other threads during a global-mode capture: a thread that may still run
// while the capture is open (started before the begin and not joined before
// it, or started inside the region) is not captured, but in global mode the
// capture prohibits unsafe calls from every thread (measured: cudaEventQuery
// and cudaMalloc in another thread fail with 900 there and end-capture with
// 901; thread-local and relaxed captures do not care).
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-status-query,cudagraph-device-alloc,cudagraph-legacy-stream,cudagraph-pinned-alloc %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <future>
#include <thread>
#include <vector>
#include <cuda_runtime.h>

static bool running = true;
static cudaStream_t side_stream;

void poll_progress(cudaEvent_t e) {
  while (running)
    cudaEventQuery(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaEventQuery' asks the host whether an event completed on a thread that may run while a global-mode CUDA graph capture is open: in global mode the capture prohibits this call from every thread, so it fails with cudaErrorStreamCaptureUnsupported (900) and end-capture fails with 901; begin the capture with cudaStreamCaptureModeThreadLocal, or make the call after the capture ends (or switch this thread to relaxed mode around it with cudaThreadExchangeStreamCaptureMode) (hazard: event-query) [cudagraph-status-query]
}

// A watchdog started before the capture and joined after it.
void watched_capture(cudaStream_t s, cudaEvent_t e) {
  std::thread watchdog(poll_progress, e);
  // CHECK-MESSAGES: :[[@LINE-1]]:24: note: 'poll_progress' starts here on another thread, which may still run while the capture is open; in global mode the capture prohibits such calls from every thread
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: CUDA graph capture begins here (global mode)
  cudaStreamEndCapture(s, &g);
  running = false;
  watchdog.join();
}

void grow_pool(void **p) {
  cudaMalloc(p, 1 << 20);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMalloc' allocates or frees device memory on a thread that may run while a global-mode CUDA graph capture is open{{.*}}(hazard: device-malloc) [cudagraph-device-alloc]
  cudaFreeAsync(*p, side_stream);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaFreeAsync' allocates or frees stream-ordered memory outside the capturing stream on a thread that may run while a global-mode CUDA graph capture is open{{.*}}(hazard: uncaptured-stream-alloc) [cudagraph-device-alloc]
  cudaMemcpy(*p, *p, 4, cudaMemcpyDeviceToDevice); // an eager copy: not the capture's business
  cudaStreamSynchronize(0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains on a thread that may run while a global-mode CUDA graph capture is open{{.*}}or make the call after the capture ends (hazard: stream-synchronize) [cudagraph-host-sync]
}

// A detached worker and a pool of workers.
void detached_capture(cudaStream_t s, void **p) {
  std::thread(grow_pool, p).detach();
  std::vector<std::thread> pool;
  pool.emplace_back([p] { cudaFree(*p); });
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: 'cudaFree' allocates or frees device memory on a thread that may run
  // CHECK-MESSAGES: :[[@LINE-2]]:21: note: 'lambda' starts here on another thread
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(s, &g);
  for (std::thread &t : pool)
    t.join();
}

// Joined, finished or not global: nothing to report.
void query_once(cudaEvent_t e) { cudaEventQuery(e); }
void malloc_once(void **p) { cudaMalloc(p, 64); }
void sync_once(cudaStream_t s) { cudaStreamSynchronize(s); }

void joined_before(cudaStream_t s, cudaEvent_t e, void **p) {
  std::thread t(query_once, e);
  t.join();
  auto f = std::async(std::launch::async, malloc_once, p);
  f.get();
  {
    auto scoped = std::async(std::launch::async, sync_once, s);
  } // the future's destructor waits
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(s, &g);
}

void thread_local_capture(cudaStream_t s, cudaEvent_t e) {
  std::thread t(query_once, e);
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cudaStreamEndCapture(s, &g);
  t.join();
}

void relaxed_capture(cudaStream_t s, void **p) {
  std::thread t(malloc_once, p);
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  cudaStreamEndCapture(s, &g);
  t.join();
}

// Started inside the region: not captured either, only prohibited calls.
void launch_eager(float *x) { cudaMemsetAsync(x, 0, 4); }

void started_inside(cudaStream_t s, cudaEvent_t e, float *x) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  std::thread q([e] { cudaStreamQuery(0); });
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: 'cudaStreamQuery' asks the host whether a stream is idle on a thread that may run while a global-mode CUDA graph capture is open
  // CHECK-MESSAGES: :[[@LINE-2]]:17: note: 'lambda' starts here on another thread
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: CUDA graph capture begins here (global mode)
  std::thread l(launch_eager, x); // legacy-stream work of another thread is not this capture's
  q.join();
  l.join();
  cudaStreamEndCapture(s, &g);
}

// Threads that outlive the function starting them (kept in a member or a
// global, or detached) may run while a global-mode capture begun in another
// function is open.
struct Server {
  std::thread watchdog_;
  std::vector<std::thread> workers_;
  cudaEvent_t done_;
  void watch() {
    while (running)
      cudaEventQuery(done_);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaEventQuery' asks the host whether an event completed on a thread that may run while a global-mode CUDA graph capture is open
    // CHECK-MESSAGES: :[[@LINE+5]]:38: note: 'Server::watch' is called here
    // CHECK-MESSAGES: :[[@LINE+4]]:29: note: 'lambda' starts here on another thread, which may still run while the capture is open
    // CHECK-MESSAGES: :[[@LINE+11]]:5: note: CUDA graph capture begins here (global mode)
  }
  void start() {
    watchdog_ = std::thread([this] { watch(); });
    workers_.emplace_back([] { cudaDeviceSynchronize(); });
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: 'cudaDeviceSynchronize' blocks the host until all work on the device finishes on a thread that may run while a global-mode CUDA graph capture is open
    // CHECK-MESSAGES: :[[@LINE-2]]:27: note: 'lambda' starts here on another thread
    // CHECK-MESSAGES: :[[@LINE+4]]:5: note: CUDA graph capture begins here (global mode)
  }
  void capture(cudaStream_t s) {
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaStreamEndCapture(s, &g);
  }
};

void pin_forever(void **p) { cudaMallocHost(p, 64); }
// CHECK-MESSAGES: :[[@LINE-1]]:30: warning: 'cudaMallocHost' allocates page-locked host memory on a thread that may run while a global-mode CUDA graph capture is open
// CHECK-MESSAGES: :[[@LINE+2]]:22: note: 'pin_forever' starts here on another thread
void start_pinner(void **p) {
  std::thread pinner(pin_forever, p);
  pinner.detach();
}

// A thread started in a constructor's member initializer, running a method:
// it lives as long as the object.
class Reclaimer {
public:
  Reclaimer() : thread_(&Reclaimer::loop, this) {}
  ~Reclaimer() { thread_.join(); }

private:
  void loop() {
    while (running)
      cudaFreeHost(pending_);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaFreeHost' releases page-locked host memory on a thread that may run while a global-mode CUDA graph capture is open
    // CHECK-MESSAGES: :[[@LINE-8]]:25: note: 'Reclaimer::loop' starts here on another thread
  }
  void *pending_ = nullptr;
  std::thread thread_;
};
Reclaimer *make_reclaimer() { return new Reclaimer(); }

// Started and joined in one call: done before any later capture.
void joined_here(cudaEvent_t e) {
  std::thread t(query_once, e);
  t.join();
  std::async(std::launch::async, query_once, e); // the future waits
}

// Sibling threads: one function starts capturing workers and a watchdog side
// by side and joins them all later; the watchdog may run while a worker's
// global-mode capture is open.
void capture_on(cudaStream_t s, cudaStreamCaptureMode mode) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, mode);
  cudaStreamEndCapture(s, &g);
}

void workers_and_watchdog(cudaStream_t *streams, int n, cudaEvent_t e) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([=] { capture_on(streams[i], cudaStreamCaptureModeGlobal); });
  threads.emplace_back([e] { cudaEventQuery(e); });
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: 'cudaEventQuery' asks the host whether an event completed on a thread that may run while a global-mode CUDA graph capture is open
  // CHECK-MESSAGES: :[[@LINE-2]]:24: note: 'lambda' starts here on another thread
  // CHECK-MESSAGES: :[[@LINE-11]]:3: note: CUDA graph capture begins here
  for (std::thread &t : threads)
    t.join();
}

// The watchdog starts after the capturing worker was joined, or next to a
// worker that does not capture: nothing to report.
void worker_joined_first(cudaStream_t s, cudaEvent_t e) {
  std::thread worker([s] { capture_on(s, cudaStreamCaptureModeGlobal); });
  worker.join();
  std::thread watchdog([e] { cudaEventQuery(e); });
  watchdog.join();
}

void no_capture_worker(cudaStream_t s, cudaEvent_t e) {
  std::thread worker([s] { cudaMemsetAsync(nullptr, 0, 4, s); });
  std::thread watchdog([e] { cudaEventQuery(e); });
  worker.join();
  watchdog.join();
}
