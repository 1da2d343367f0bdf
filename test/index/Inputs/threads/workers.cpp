#include "engine.h"
#include <thread>
#include <vector>

static std::vector<void *> retired;

// A long-lived thread of this file: it may run while the other file's
// global-mode capture is open.
static void reclaim_loop() {
  for (;;) {
    for (void *p : retired)
      cudaFree(p);
    retired.clear();
  }
}

void start_reclaimer() {
  std::thread t(reclaim_loop);
  t.detach();
}

// The same in a pool, querying events.
static cudaEvent_t done_event;
static void poll_loop() {
  while (cudaEventQuery(done_event) == cudaErrorNotReady) {
  }
}

void start_pollers(int count) {
  for (int i = 0; i < count; ++i)
    std::thread(poll_loop).detach();
}

// A single thread whose own work is the capture: it does not overlap
// itself, and nothing else captures.
static void capture_loop(cudaStream_t s, float *x, int n) {
  for (;;) {
    capture_step(s, x, n);
    void *scratch = nullptr;
    cudaMalloc(&scratch, 64);
    cudaFree(scratch);
  }
}

void start_capturer(cudaStream_t s, float *x, int n) {
  std::thread(capture_loop, s, x, n).detach();
}
