#include "graph_utils.h"

void maybe_sync(cudaStream_t s);

void capture_decode(cudaStream_t s, float *buf, int n, Stage &stage) {
  warm_tables(s);
  cudaGraph_t g;
  begin_graph(s);
  decode_step(s, buf, n);
  stage.run(s);
  maybe_sync(s);
  end_graph(s, &g);
  // After the end: not captured, no finding.
  cudaStreamSynchronize(s);
}

void capture_prefill(cudaStream_t s, float *buf, int n) {
  cudaGraph_t g;
  run_captured(s, &g, [=](cudaStream_t st) { prefill_step(st, buf, n); });
}

void maybe_sync(cudaStream_t s) {
  if (!graph_capturing(s))
    cudaStreamSynchronize(s);
}

void capture_guarded(cudaStream_t s) {
  {
    CaptureGuard guard(s);
    flush_stats(s);
  }
  // The guard's scope has ended: not captured.
  cudaStreamSynchronize(s);
}

void capture_plans(cudaStream_t s, const StepPlan *plans, int count) {
  drain_plan(plans[0], s);
  cudaGraph_t g;
  begin_graph(s);
  for (int i = 0; i < count; ++i)
    plans[i].run(plans[i], s);
  end_graph(s, &g);
}

// Begins and ends through the interface: a failed stage skips the end.
bool capture_stages(GraphCapture *capture, cudaStream_t s, int count) {
  if (!capture->beginCapture())
    return false;
  bool ok = true;
  for (int i = 0; i < count && ok; ++i)
    ok = run_stage(i);
  if (!ok || !capture->endCapture())
    return false;
  cudaStreamSynchronize(s);
  return true;
}
