#include "graph_utils.h"

// Runs inside the capture begun in runner.cu.
void decode_step(cudaStream_t s, float *buf, int n) {
  float *tmp = nullptr;
  cudaMalloc(&tmp, n * sizeof(float));
  cudaMemcpyAsync(tmp, buf, n * sizeof(float), cudaMemcpyDeviceToDevice, s);
  sample_tokens(s, tmp, n);
}

// Runs only before capture (warm-up in runner.cu): no finding.
void warm_tables(cudaStream_t s) { cudaStreamSynchronize(s); }

// Passed to run_captured (graph_utils.cu), which calls it under capture.
void prefill_step(cudaStream_t s, float *buf, int n) {
  cudaMemsetAsync(buf, 0, n * sizeof(float), s);
  cudaStreamSynchronize(s);
}

void NormStage::run(cudaStream_t s) {
  cudaEvent_t e;
  cudaEventCreate(&e);
  cudaEventQuery(e);
}

// Stored in a StepFn: runs under the capture of capture_plans (runner.cu).
static void copy_out_step(const StepPlan &plan, cudaStream_t s) {
  float host = 0;
  cudaMemcpy(&host, plan.buf, sizeof(float), cudaMemcpyDeviceToHost);
}
StepFn registered_step = &copy_out_step;

// Called by name before the capture, never stored in a StepFn: no finding.
void drain_plan(const StepPlan &plan, cudaStream_t s) {
  cudaStreamSynchronize(s);
}
