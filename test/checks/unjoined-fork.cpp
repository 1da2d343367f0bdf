// RUN: %check_cudagraph_tidy %s cudagraph-unjoined-fork %t -- -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void scale(float *x, int n) {}

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s\n", cudaGetErrorString(err_));                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// A side stream waits on the capture and is never joined back: end-capture
// fails with 904.
void forkOnly(cudaStream_t s, cudaStream_t side, cudaEvent_t fork, float *x,
              int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' forks another stream into the capture and never joins it back during CUDA graph capture: end-capture fails with cudaErrorStreamCaptureUnjoined (904); record an event on the side stream after its last work and make the capturing stream wait on it before capture ends (hazard: unjoined-fork) [cudagraph-unjoined-fork]
  // CHECK-MESSAGES: :[[@LINE-2]]:23: note: 'side' joins the capture here; no event recorded on it is waited on by the capturing stream before the capture ends
  // CHECK-MESSAGES: :[[@LINE+3]]:3: note: the capture ends here
  // CHECK-MESSAGES: :[[@LINE-6]]:3: note: CUDA graph capture begins here (global mode)
  scale<<<1, 32, 0, side>>>(x, n);
  cudaStreamEndCapture(s, &g);
}

// Joined back before the end: captured.
void forkJoin(cudaStream_t s, cudaStream_t side, cudaEvent_t fork,
              cudaEvent_t join, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  scale<<<1, 32, 0, side>>>(x, n);
  cudaEventRecord(join, side);
  cudaStreamWaitEvent(s, join, 0);
  cudaStreamEndCapture(s, &g);
}

// Two side streams from one fork event, in error-check macros; only the
// first is joined.
void twoSides(float *x, int n) {
  cudaStream_t s, a, b;
  cudaEvent_t fork, doneA, doneB;
  cudaStreamCreate(&s);
  cudaStreamCreate(&a);
  cudaStreamCreate(&b);
  cudaGraph_t g;
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK_CUDA(cudaEventRecord(fork, s));
  CHECK_CUDA(cudaStreamWaitEvent(a, fork, 0));
  CHECK_CUDA(cudaStreamWaitEvent(b, fork, 0));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: 'cudaStreamWaitEvent' forks another stream into the capture and never joins it back
  // CHECK-MESSAGES: :[[@LINE-2]]:34: note: 'b' joins the capture here
  scale<<<1, 32, 0, a>>>(x, n);
  CHECK_CUDA(cudaEventRecord(doneA, a));
  scale<<<1, 32, 0, b>>>(x, n);
  CHECK_CUDA(cudaEventRecord(doneB, b));
  CHECK_CUDA(cudaStreamWaitEvent(s, doneA, 0));
  CHECK_CUDA(cudaStreamEndCapture(s, &g));
}

// A stream joined through another side stream that is joined itself.
void chained(cudaStream_t s, cudaStream_t a, cudaStream_t b, cudaEvent_t e1,
             cudaEvent_t e2, cudaEvent_t e3, cudaEvent_t e4) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cudaEventRecord(e1, s);
  cudaStreamWaitEvent(a, e1, 0);
  cudaEventRecord(e2, a);
  cudaStreamWaitEvent(b, e2, 0);
  cudaEventRecord(e3, b);
  cudaStreamWaitEvent(a, e3, 0);
  cudaEventRecord(e4, a);
  cudaStreamWaitEvent(s, e4, 0);
  cudaStreamEndCapture(s, &g);
}

// Forks and joins over arrays of streams and events, in loops.
struct Pipeline {
  cudaStream_t main_;
  cudaStream_t workers_[4];
  cudaEvent_t fork_;
  cudaEvent_t done_[4];
  cudaGraph_t graph_;

  void capture(float *x, int n) {
    cudaStreamBeginCapture(main_, cudaStreamCaptureModeGlobal);
    cudaEventRecord(fork_, main_);
    for (int i = 0; i < 4; ++i) {
      cudaStreamWaitEvent(workers_[i], fork_, 0);
      scale<<<1, 32, 0, workers_[i]>>>(x + i * n, n);
    }
    for (int i = 0; i < 4; ++i) {
      cudaEventRecord(done_[i], workers_[i]);
      cudaStreamWaitEvent(main_, done_[i], 0);
    }
    cudaStreamEndCapture(main_, &graph_);
  }

  void captureNoJoin(float *x, int n) {
    cudaStreamBeginCapture(main_, cudaStreamCaptureModeGlobal);
    cudaEventRecord(fork_, main_);
    for (int i = 0; i < 4; ++i) {
      cudaStreamWaitEvent(workers_[i], fork_, 0);
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaStreamWaitEvent' forks another stream into the capture and never joins it back
      scale<<<1, 32, 0, workers_[i]>>>(x + i * n, n);
    }
    cudaStreamEndCapture(main_, &graph_);
  }
};

// Fork and join done by helpers the capture calls.
static void streamWait(cudaStream_t waiter, cudaStream_t producer) {
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  cudaEventRecord(e, producer);
  cudaStreamWaitEvent(waiter, e, 0);
}

void helpers(cudaStream_t s, cudaStream_t side, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  streamWait(side, s);
  scale<<<1, 32, 0, side>>>(x, n);
  streamWait(s, side);
  cudaStreamEndCapture(s, &g);
}

void helperForkOnly(cudaStream_t s, cudaStream_t side, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  streamWait(side, s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'streamWait' forks another stream into the capture and never joins it back
  // CHECK-MESSAGES: :[[@LINE-17]]:23: note: 'waiter' joins the capture here
  scale<<<1, 32, 0, side>>>(x, n);
  cudaStreamEndCapture(s, &g);
}

// A pool that forks every stream it handed out and returns the events that
// join them; the region waits on each returned event.
class StreamPool {
public:
  cudaStream_t next() { return streams_[used_++ % 8]; }
  void forkAll(cudaEvent_t e) {
    for (int i = 0; i < used_; ++i)
      cudaStreamWaitEvent(streams_[i], e, 0);
  }
  std::vector<cudaEvent_t> recordAll() {
    std::vector<cudaEvent_t> done(used_);
    for (int i = 0; i < used_; ++i) {
      cudaEventCreate(&done[i]);
      cudaEventRecord(done[i], streams_[i]);
    }
    return done;
  }

private:
  cudaStream_t streams_[8];
  int used_ = 0;
};

void poolJoined(StreamPool &pool, cudaStream_t s, cudaEvent_t fork) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cudaEventRecord(fork, s);
  pool.forkAll(fork);
  auto done = pool.recordAll();
  for (auto &e : done)
    cudaStreamWaitEvent(s, e, 0);
  cudaStreamEndCapture(s, &g);
}

void poolNeverJoined(StreamPool &pool, cudaStream_t s, cudaEvent_t fork) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cudaEventRecord(fork, s);
  pool.forkAll(fork);
  // CHECK-MESSAGES: :[[@LINE-1]]:8: warning: 'StreamPool::forkAll' forks another stream into the capture and never joins it back
  auto done = pool.recordAll();
  cudaStreamEndCapture(s, &g);
}

// Joined only after the capture ended: too late.
void joinAfterEnd(cudaStream_t s, cudaStream_t side, cudaEvent_t fork,
                  cudaEvent_t join) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' forks another stream into the capture
  cudaStreamEndCapture(s, &g);
  cudaEventRecord(join, side);
  cudaStreamWaitEvent(s, join, 0);
}

// Fork and join under the same condition: both happen or neither.
void conditional(cudaStream_t s, cudaStream_t side, cudaEvent_t fork,
                 cudaEvent_t join, bool overlap) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (overlap) {
    cudaEventRecord(fork, s);
    cudaStreamWaitEvent(side, fork, 0);
  }
  if (overlap) {
    cudaEventRecord(join, side);
    cudaStreamWaitEvent(s, join, 0);
  }
  cudaStreamEndCapture(s, &g);
}

// A function this file cannot see may join the streams: not judged.
void syncStreams(cudaStream_t to, cudaStream_t from);
void opaqueJoin(cudaStream_t s, cudaStream_t side, cudaEvent_t fork) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  syncStreams(s, side);
  cudaStreamEndCapture(s, &g);
}

// The driver API, and a capture begun by a wrapper.
static void beginOn(CUstream s) {
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

void driverFork(CUstream s, CUstream side, CUevent e) {
  CUgraph g;
  beginOn(s);
  cuEventRecord(e, s);
  cuStreamWaitEvent(side, e, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuStreamWaitEvent' forks another stream into the capture
  cuStreamEndCapture(s, &g);
}

// A template: reported in the instantiation the program uses.
template <typename T> void forkTemplate(cudaStream_t s, cudaStream_t side,
                                        cudaEvent_t e, T *x) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(e, s);
  cudaStreamWaitEvent(side, e, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' forks another stream into the capture
  cudaStreamEndCapture(s, &g);
}
template void forkTemplate<float>(cudaStream_t, cudaStream_t, cudaEvent_t,
                                  float *);

// Waiting on an event recorded before the capture began: 905.
void isolation(cudaStream_t s, cudaStream_t other, cudaEvent_t before,
               float *x, int n) {
  cudaGraph_t g;
  scale<<<1, 32, 0, other>>>(x, n);
  cudaEventRecord(before, other);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaStreamWaitEvent(s, before, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' waits on an event recorded outside the capture during CUDA graph capture: the wait fails with cudaErrorStreamCaptureIsolation (905); record the event on a capturing stream inside the capture, or wait before capture begins (hazard: uncaptured-dependency) [cudagraph-unjoined-fork]
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: the event is recorded here, before the capture begins
  scale<<<1, 32, 0, s>>>(x, n);
  cudaStreamEndCapture(s, &g);
}

// Waiting before the capture, recording inside it, or an external wait node:
// not reported.
void isolationNegatives(cudaStream_t s, cudaStream_t other, cudaEvent_t e,
                        cudaEvent_t ext) {
  cudaGraph_t g;
  cudaEventRecord(e, other);
  cudaEventRecord(ext, other);
  cudaStreamWaitEvent(s, e, 0);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(e, s);
  cudaStreamWaitEvent(s, e, 0);
  cudaStreamWaitEvent(s, ext, cudaEventWaitExternal);
  cudaStreamEndCapture(s, &g);
}

// An event recorded during the capture on a stream the capture never
// reaches: the recording runs eagerly, and the wait is still 905.
void isolationOutsideStream(cudaStream_t s, cudaStream_t other, cudaEvent_t e,
                            float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  scale<<<1, 32, 0, other>>>(x, n);
  cudaEventRecord(e, other);
  cudaStreamWaitEvent(s, e, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' waits on an event recorded outside the capture during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: the event is recorded here, on 'other', a stream outside the capture (it never waits on the capturing stream's work)
  scale<<<1, 32, 0, s>>>(x, n);
  cudaStreamEndCapture(s, &g);
}

// The same stream forked into the capture first: its record is captured.
void isolationForkedFirst(cudaStream_t s, cudaStream_t other, cudaEvent_t fork,
                          cudaEvent_t e, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(other, fork, 0);
  scale<<<1, 32, 0, other>>>(x, n);
  cudaEventRecord(e, other);
  cudaStreamWaitEvent(s, e, 0);
  cudaStreamEndCapture(s, &g);
}

// The waiting stream recorded the event itself, before the begin: still 905
// (measured, raw.uncaptured-dependency.pos-same-stream).
void isolationSameStream(cudaStream_t s, cudaEvent_t own, float *x, int n) {
  cudaGraph_t g;
  cudaEventRecord(own, s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaStreamWaitEvent(s, own, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' waits on an event recorded outside the capture during CUDA graph capture: the wait fails with cudaErrorStreamCaptureIsolation (905); record the event on a capturing stream inside the capture, or wait before capture begins (hazard: uncaptured-dependency) [cudagraph-unjoined-fork]
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: the event is recorded here, before the capture begins
  scale<<<1, 32, 0, s>>>(x, n);
  cudaStreamEndCapture(s, &g);
}

// libtorch: a side stream forked with CUDAEvent::record/block and used under
// a guard, never joined.
at::Tensor torchFork(const at::Tensor &x) {
  at::cuda::CUDAGraph graph;
  c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream();
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::cuda::CUDAEvent fork;
  graph.capture_begin();
  fork.record(main);
  fork.block(side);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'CUDAEvent::block' forks another stream into the capture and never joins it back during CUDA graph capture: end-capture fails with cudaErrorStreamCaptureUnjoined (904); record a CUDAEvent on the side stream after its last work (ev.record(side)) and block the capturing stream on it (ev.block(capturing)) before capture_end (hazard: unjoined-fork)
  at::Tensor y;
  {
    c10::cuda::CUDAStreamGuard guard(side);
    y = x * 2;
  }
  graph.capture_end();
  return y;
}

// Joined back, with the join recorded on the current stream under the guard.
at::Tensor torchJoin(const at::Tensor &x) {
  at::cuda::CUDAGraph graph;
  c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream();
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::cuda::CUDAEvent fork, join;
  graph.capture_begin();
  fork.record();
  fork.block(side);
  at::Tensor y;
  {
    c10::cuda::CUDAStreamGuard guard(side);
    y = x * 2;
    join.record();
  }
  join.block(main);
  graph.capture_end();
  return y;
}

// libtorch: the capturing stream blocks on an event recorded before capture.
at::Tensor torchIsolation(const at::Tensor &x) {
  at::cuda::CUDAGraph graph;
  at::cuda::CUDAEvent before;
  before.record(c10::cuda::getStreamFromPool());
  graph.capture_begin();
  before.block(c10::cuda::getCurrentCUDAStream());
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'CUDAEvent::block' waits on an event recorded outside the capture during CUDA graph capture
  at::Tensor y = x * 2;
  graph.capture_end();
  return y;
}

// An event recorded on a capturing stream belongs to that capture: after the
// capture ends, waiting on it, querying it or timing with it fails with
// cudaErrorInvalidValue (measured in every mode, also after the graph ran),
// until it is recorded again outside a capture.
void timedCapture(cudaStream_t s, cudaEvent_t start, cudaEvent_t stop, float *x,
                  int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(start, s);
  scale<<<1, 32, 0, s>>>(x, n);
  cudaEventRecord(stop, s);
  cudaStreamEndCapture(s, &g);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaEventElapsedTime' uses an event whose last record was made inside the capture, after the capture ended: the call fails with cudaErrorInvalidValue (1) in every capture mode{{.*}}record it with cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal) inside the capture, or record it again after the capture ends (hazard: capture-bound-event) [cudagraph-unjoined-fork]
  // CHECK-MESSAGES: :[[@LINE-7]]:3: note: the event is last recorded here, on a capturing stream
  // CHECK-MESSAGES: :[[@LINE-5]]:3: note: the capture ends here
  // CHECK-MESSAGES: :[[@LINE-10]]:3: note: CUDA graph capture begins here (global mode)
}

// A fence kept in the object, recorded by a helper the region calls.
struct Fence {
  cudaEvent_t done;
  void mark(cudaStream_t s) { cudaEventRecord(done, s); }
  void capture(cudaStream_t s, float *x, int n) {
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    scale<<<1, 32, 0, s>>>(x, n);
    mark(s);
    cudaStreamEndCapture(s, &g);
    if (cudaEventQuery(done) == cudaSuccess)
      return;
    // CHECK-MESSAGES: :[[@LINE-2]]:9: warning: 'cudaEventQuery' uses an event whose last record was made inside the capture{{.*}}(hazard: capture-bound-event)
    // CHECK-MESSAGES: :[[@LINE-10]]:31: note: the event is last recorded here, on a capturing stream
  }
};

// An ordering fence kept in the object: recorded on the caller's stream
// whether or not it is capturing (the status test passes the capturing case
// on), and waited on by the next call where the test says no capture is
// open. After a capture the wait fails: the last record was captured.
struct StatusInfo {
  cudaStreamCaptureStatus status;
  unsigned long long id;
};
StatusInfo statusOf(cudaStream_t s) {
  StatusInfo info{};
  cudaStreamGetCaptureInfo(s, &info.status, &info.id);
  return info;
}
struct OrderedFence {
  cudaEvent_t fence_;
  bool mixing_;
  void acquire(cudaStream_t s, const StatusInfo &info) {
    const bool capturing = info.status == cudaStreamCaptureStatusActive;
    if (!capturing) {
      cudaEventSynchronize(fence_);
      return;
    }
  }
  void release(cudaStream_t s, const StatusInfo &info) {
    const bool capturing = info.status == cudaStreamCaptureStatusActive;
    if (!capturing || !mixing_)
      cudaEventRecord(fence_, s);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaEventRecord' records into the capture an event that code outside capture waits on: after the capture ends, that wait, query or timing fails with cudaErrorInvalidValue (1) in every capture mode{{.*}}; record it with cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal), or record a separate event inside the capture (hazard: eager-event-recorded-in-capture) [cudagraph-unjoined-fork]
    // CHECK-MESSAGES: :[[@LINE-9]]:7: note: 'cudaEventSynchronize' uses the event here, in 'OrderedFence::acquire', where its capture-status test says no capture is open
    else
      cudaEventRecordWithFlags(fence_, s, cudaEventRecordExternal);
  }
};

// A timing pair kept in the object, recorded only inside a capture and read
// by another method: nothing records it outside a capture.
struct TimedGraph {
  cudaEvent_t start_, stop_;
  cudaGraph_t graph_;
  void capture(cudaStream_t s, float *x, int n) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaEventRecord(start_, s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaEventRecord' records into the capture an event that code outside capture waits on{{.*}}(hazard: eager-event-recorded-in-capture)
    // CHECK-MESSAGES: :[[@LINE+9]]:5: note: 'cudaEventElapsedTime' uses the event here, in 'TimedGraph::elapsed'; nothing records it outside a capture
    // CHECK-MESSAGES: :[[@LINE-4]]:5: note: CUDA graph capture begins here (global mode)
    scale<<<1, 32, 0, s>>>(x, n);
    cudaEventRecord(stop_, s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaEventRecord' records into the capture an event that code outside capture waits on{{.*}}(hazard: eager-event-recorded-in-capture)
    cudaStreamEndCapture(s, &graph_);
  }
  float elapsed() {
    float ms = 0;
    cudaEventElapsedTime(&ms, start_, stop_);
    return ms;
  }
};

// Not reported: the use records the event first; a record kept out of the
// capture by the test; a separate fence for the capture, used only there; an
// object that also records its event eagerly, read by a method without a
// status test.
struct RecordsFirst {
  cudaEvent_t ev_;
  void produce(cudaStream_t s) {
    cudaStreamCaptureStatus st;
    cudaStreamIsCapturing(s, &st);
    if (st == cudaStreamCaptureStatusActive)
      cudaEventRecord(ev_, s);
  }
  void consume(cudaStream_t s) {
    cudaStreamCaptureStatus st;
    cudaStreamIsCapturing(s, &st);
    if (st != cudaStreamCaptureStatusNone)
      return;
    cudaEventRecord(ev_, s);
    cudaEventSynchronize(ev_);
  }
};
struct SeparateFence {
  cudaEvent_t eager_, captured_;
  void acquire(cudaStream_t s, const StatusInfo &info) {
    if (info.status == cudaStreamCaptureStatusActive)
      cudaStreamWaitEvent(s, captured_, 0);
    else
      cudaEventSynchronize(eager_);
  }
  void release(cudaStream_t s, const StatusInfo &info) {
    if (info.status == cudaStreamCaptureStatusActive)
      cudaEventRecord(captured_, s);
    else
      cudaEventRecord(eager_, s);
  }
};
struct AlsoEager {
  cudaEvent_t done_;
  cudaGraph_t graph_;
  void capture(cudaStream_t s, float *x, int n) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    scale<<<1, 32, 0, s>>>(x, n);
    cudaEventRecord(done_, s);
    cudaStreamEndCapture(s, &graph_);
  }
  void replay(cudaStream_t s) {
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph_, 0);
    cudaGraphLaunch(exec, s);
    cudaEventRecord(done_, s);
  }
  void wait() { cudaEventSynchronize(done_); }
};

// Not reported: an external record, a record again after the end, a fork
// joined inside the capture and not used afterwards, and uses before the
// capture.
void externalRecord(cudaStream_t s, cudaStream_t side, cudaEvent_t ev,
                    cudaEvent_t back, float *x, int n) {
  cudaGraph_t g;
  cudaEventSynchronize(back);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(back, s);
  cudaStreamWaitEvent(side, back, 0);
  scale<<<1, 32, 0, side>>>(x, n);
  cudaEventRecord(back, side);
  cudaStreamWaitEvent(s, back, 0);
  cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal);
  cudaStreamEndCapture(s, &g);
  cudaEventSynchronize(ev);
  cudaEventRecord(back, s);
  cudaEventSynchronize(back);
}

// Negative: one method begins the capture and forks a side stream into it,
// another joins the side stream and ends the capture (a runner's init/end
// pair); the first returns with the capture open on purpose.
struct SplitRunner {
  cudaStream_t main_ = nullptr, side_ = nullptr;
  cudaGraph_t graph_ = nullptr;

  cudaError_t execInit() {
    cudaError_t err = cudaStreamBeginCapture(main_, cudaStreamCaptureModeGlobal);
    if (err != cudaSuccess)
      return err;
    cudaEvent_t forked;
    cudaEventCreate(&forked);
    cudaEventRecord(forked, main_);
    cudaStreamWaitEvent(side_, forked, 0);
    return cudaSuccess;
  }

  cudaError_t execEnd() {
    cudaEvent_t joined;
    cudaEventCreate(&joined);
    cudaEventRecord(joined, side_);
    cudaStreamWaitEvent(main_, joined, 0);
    return cudaStreamEndCapture(main_, &graph_);
  }

  // Positive: the same fork in a method that also ends the capture.
  void forkAndEnd() {
    cudaStreamBeginCapture(main_, cudaStreamCaptureModeGlobal);
    cudaEvent_t forked;
    cudaEventCreate(&forked);
    cudaEventRecord(forked, main_);
    cudaStreamWaitEvent(side_, forked, 0);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamWaitEvent' forks another stream into the capture and never joins it back {{.*}}
    // CHECK-MESSAGES: :[[@LINE-2]]:25: note: 'side_' joins the capture here{{.*}}
    cudaStreamEndCapture(main_, &graph_);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: the capture ends here
  }
};

// Negative: a caller runs both halves; the side stream's record in
// execEnd is part of the capture through the fork execInit made.
void runSplit(SplitRunner &Runner) {
  if (Runner.execInit() != cudaSuccess)
    return;
  Runner.execEnd();
}

// Streams and events kept in arrays and named by constant indices are each
// their own: a stream waiting on an element recorded on another element
// outside the capture, and one element forked and never joined, are found.
cudaStream_t laneMain;
cudaStream_t laneStreams[4];
cudaEvent_t laneEvents[4];

void laneSetup(float *x, int n) {
  cudaMemsetAsync(x, 0, n, laneStreams[1]);
  cudaEventRecord(laneEvents[1], laneStreams[1]);
}

void laneStages(float *x, int n) {
  cudaStreamWaitEvent(laneMain, laneEvents[1], 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' waits on an event recorded outside the capture
  // CHECK-MESSAGES: :[[@LINE-6]]:3: note: the event is recorded here, on 'laneStreams[1]', a stream outside the capture
  // CHECK-MESSAGES: :[[@LINE+18]]:3: note: 'laneStages' is called here during capture
  cudaEventRecord(laneEvents[2], laneMain);
  cudaStreamWaitEvent(laneStreams[2], laneEvents[2], 0);
  scale<<<1, 32, 0, laneStreams[2]>>>(x, n);
  cudaEventRecord(laneEvents[3], laneStreams[2]);
  cudaStreamWaitEvent(laneMain, laneEvents[3], 0);
  cudaEventRecord(laneEvents[0], laneMain);
  cudaStreamWaitEvent(laneStreams[3], laneEvents[0], 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamWaitEvent' forks another stream into the capture and never joins it back
  // CHECK-MESSAGES: :[[@LINE-2]]:23: note: 'laneStreams[3]' joins the capture here
  // CHECK-MESSAGES: :[[@LINE+8]]:3: note: 'laneStages' is called here during capture
  scale<<<1, 32, 0, laneStreams[3]>>>(x, n);
}

void laneCapture(float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(laneMain, cudaStreamCaptureModeGlobal);
  laneSetup(x, n);
  laneStages(x, n);
  cudaStreamEndCapture(laneMain, &g);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: the capture ends here
}

// An array also indexed by a value is one handle: what element a loop
// reaches is not known, so no element is told apart from another.
void laneLoop(cudaStream_t s, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(laneEvents[0], s);
  for (int i = 1; i < 4; ++i) {
    cudaStreamWaitEvent(laneStreams[i], laneEvents[0], 0);
    scale<<<1, 32, 0, laneStreams[i]>>>(x, n);
    cudaEventRecord(laneEvents[i], laneStreams[i]);
  }
  cudaStreamWaitEvent(s, laneEvents[3], 0);
  cudaStreamEndCapture(s, &g);
}
