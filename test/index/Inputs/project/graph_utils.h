// A small inference server's capture helpers, split over files as real
// projects split them: the wrappers live in graph_utils.cu, the steps in
// steps.cu, the graph runner in runner.cu, the op registrations in ops.cpp.
#pragma once
#include <cstdlib>
#include <cuda_runtime.h>
#include <functional>

void begin_graph(cudaStream_t s);
void end_graph(cudaStream_t s, cudaGraph_t *g);
bool graph_capturing(cudaStream_t s);
void run_captured(cudaStream_t s, cudaGraph_t *g,
                  const std::function<void(cudaStream_t)> &work);

// Begins capture when constructed, ends it when destroyed.
struct CaptureGuard {
  explicit CaptureGuard(cudaStream_t s);
  ~CaptureGuard();
  cudaStream_t stream;
  cudaGraph_t graph = nullptr;
};

void decode_step(cudaStream_t s, float *buf, int n);
void flush_stats(cudaStream_t s);
void prefill_step(cudaStream_t s, float *buf, int n);
void warm_tables(cudaStream_t s);
void sample_tokens(cudaStream_t s, float *logits, int n);

struct Stage {
  virtual ~Stage() = default;
  virtual void run(cudaStream_t s) = 0;
};
struct NormStage : Stage {
  void run(cudaStream_t s) override;
};

// A step table: each step runs through the function pointer its file
// registers (steps.cu); the runner (runner.cu) calls them under capture.
struct StepPlan;
using StepFn = void (*)(const StepPlan &, cudaStream_t);
struct StepPlan {
  StepFn run;
  float *buf;
  int n;
};
extern StepFn registered_step;
void drain_plan(const StepPlan &plan, cudaStream_t s);

// A capture interface whose implementation lives in graph_utils.cu: a call
// of the interface may run it.
struct GraphCapture {
  virtual ~GraphCapture() = default;
  virtual bool beginCapture() = 0;
  virtual bool endCapture() = 0;
};
struct StreamGraphCapture : GraphCapture {
  explicit StreamGraphCapture(cudaStream_t s) : stream(s) {}
  bool beginCapture() override;
  bool endCapture() override;
  cudaStream_t stream;
  cudaGraph_t graph = nullptr;
};
bool run_stage(int i);
