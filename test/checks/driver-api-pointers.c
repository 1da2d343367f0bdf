// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-device-alloc %t -- -- -std=gnu11

// A program that loads the driver API at run time (cuew, dlsym tables)
// calls it through pointers named for each function. The calls are the
// API's: a capture begun through cuStreamBeginCapture_v2 is a capture, a
// synchronization in it fails.
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef unsigned long long CUdeviceptr;
typedef int CUresult;
typedef CUresult tcuStreamBeginCapture_v2(CUstream, int);
typedef CUresult tcuStreamEndCapture(CUstream, CUgraph *);
typedef CUresult tcuStreamSynchronize(CUstream);
typedef CUresult tcuMemAlloc_v2(CUdeviceptr *, unsigned long);
extern tcuStreamBeginCapture_v2 *cuStreamBeginCapture_v2;
extern tcuStreamEndCapture *cuStreamEndCapture;
extern tcuStreamSynchronize *cuStreamSynchronize;
extern tcuMemAlloc_v2 *cuMemAlloc_v2;
#define cuStreamBeginCapture cuStreamBeginCapture_v2
#define cuMemAlloc cuMemAlloc_v2

struct driver {
  tcuStreamSynchronize *cuStreamSynchronize;
};

typedef struct {
  int captured, debug, off;
  CUstream stream;
  CUdeviceptr scratch;
  struct driver *drv;
} runner;

void layers(runner *r);

void step(runner *r, int position) {
  // A local holding a condition stands for it: capture runs only with
  // debug == 0, so `debug >= 3` and `debug` alone are false in it.
  int graphs = !r->off && r->debug == 0;
  if (graphs && r->captured == 0 && position == 0) {
    cuStreamSynchronize(r->stream);
    r->captured = -1;
    cuStreamBeginCapture(r->stream, 0);
  }
  layers(r);
  if (r->debug >= 3)
    cuStreamSynchronize(r->stream);
  if (r->debug)
    r->drv->cuStreamSynchronize(r->stream);
  if (!r->scratch)
    cuMemAlloc(&r->scratch, 1024);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cuMemAlloc' allocates or frees device memory during CUDA graph capture
  r->drv->cuStreamSynchronize(r->stream);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
  // The end runs where the begin stored -1 (three tests, the stored one in
  // the middle): after it nothing is captured.
  if (graphs && r->captured == -1 && position == 0) {
    CUgraph g;
    cuStreamEndCapture(r->stream, &g);
    r->captured = 1;
  }
  cuStreamSynchronize(r->stream);
}

// A helper given the runner tests the same fields: `r` in it is the
// caller's `r`, so its profiling syncs are off in the capture too.
static void block(runner *r) {
  if (r->debug > 1)
    cuStreamSynchronize(r->stream);
  layers(r);
  if (r->off)
    cuStreamSynchronize(r->stream);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cuStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
}
void blocks(runner *r, CUgraph *g) {
  if (r->debug == 0) {
    cuStreamBeginCapture(r->stream, 0);
    block(r);
    cuStreamEndCapture(r->stream, g);
  }
}

// A capture begun only after the function ran eagerly (a warm-up count it
// keeps itself): the first-use allocation happened in those runs.
typedef struct {
  int warm, ready, have;
  CUstream stream;
  CUdeviceptr buf;
} engine;
static void prepare(engine *e) {
  if (!e->have) {
    cuMemAlloc(&e->buf, 4096);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cuMemAlloc' allocates or frees device memory during CUDA graph capture
    // CHECK-MESSAGES: :[[@LINE+21]]:5: note: CUDA graph capture begins here
    e->have = 1;
  }
}
void run(engine *e, CUgraph *g) {
  int capturing = 0;
  if (e->warm >= 2 && !e->ready) {
    cuStreamBeginCapture(e->stream, 0);
    capturing = 1;
  }
  prepare(e);
  if (capturing) {
    cuStreamEndCapture(e->stream, g);
    e->ready = 1;
  } else {
    e->warm++;
  }
}
// Negative of the rule: a count the function does not keep says nothing.
void runCold(engine *e, CUgraph *g) {
  if (e->warm >= 2) {
    cuStreamBeginCapture(e->stream, 0);
    prepare(e);
    cuStreamEndCapture(e->stream, g);
  }
}

// The begin as the last test of a condition ran with the tests before it
// true: the debug dump in the helper never runs in this capture.
static void dump(runner *r) {
  if (r->debug >= 2)
    cuStreamSynchronize(r->stream);
}
void encode(runner *r, CUgraph *g) {
  if (r->captured == 0 && r->debug < 2 &&
      cuStreamBeginCapture(r->stream, 0) == 0) {
    dump(r);
    cuStreamEndCapture(r->stream, g);
  }
}

// An equality decides every bit test of the same operand: the capture runs
// only for the depth output, so the pose branch never runs in it and the
// depth branch always does.
enum { OUT_DEPTH = 0x1, OUT_POSE = 0x2 };
static void pose(runner *r) { cuStreamSynchronize(r->stream); }
static void depth(runner *r) {
  cuStreamSynchronize(r->stream);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
}
void predict(runner *r, int flags, CUgraph *g) {
  int eligible = r->debug == 0 && flags == OUT_DEPTH;
  int capturing = 0;
  if (eligible) {
    if (cuStreamBeginCapture(r->stream, 0) == 0)
      capturing = 1;
  }
  if (r->off == 0 && (flags & OUT_POSE))
    pose(r);
  if ((flags & OUT_POSE) == 0 && (flags & (OUT_DEPTH | OUT_POSE)) != 0)
    depth(r);
  if (capturing)
    cuStreamEndCapture(r->stream, g);
}

// A capture begun only once a flag the function sets after its first run
// is on: the first run is eager and does the first-use work. The local that
// holds the test is only cleared after (when the begin fails), so its being
// true still says the flag and `graphs` were on: the sparse path, which
// requires graphs off, never runs in the capture.
typedef struct {
  int graphs, warm, have, ready;
  CUstream stream;
  CUdeviceptr buf;
} dit;
static void reserve(dit *d) {
  if (!d->have) {
    cuMemAlloc(&d->buf, 4096);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cuMemAlloc' allocates or frees device memory during CUDA graph capture
    // CHECK-MESSAGES: :[[@LINE+28]]:5: note: CUDA graph capture begins here
    d->have = 1;
  }
}
static void mix(dit *d) {
  int sparse = d->ready && !d->graphs;
  if (sparse)
    cuStreamSynchronize(d->stream);
  cuStreamSynchronize(d->stream);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
}
void denoise(dit *d, CUgraph *g) {
  int do_capture = d->graphs && d->warm;
  if (do_capture) {
    if (cuStreamBeginCapture(d->stream, 0) != 0)
      do_capture = 0;
  }
  reserve(d);
  mix(d);
  if (do_capture)
    cuStreamEndCapture(d->stream, g);
  d->warm = 1;
}
// Negative of the rule: the flag is set before the begin, so the first run
// captures.
void denoiseCold(dit *d, CUgraph *g) {
  d->warm = 1;
  if (d->warm) {
    cuStreamBeginCapture(d->stream, 0);
    reserve(d);
    cuStreamEndCapture(d->stream, g);
  }
}
