#include "graph_utils.h"

// Capture wrappers: callers in other files begin and end captures through
// them.
void begin_graph(cudaStream_t s) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
}

void end_graph(cudaStream_t s, cudaGraph_t *g) { cudaStreamEndCapture(s, g); }

bool graph_capturing(cudaStream_t s) {
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  return st == cudaStreamCaptureStatusActive;
}

void run_captured(cudaStream_t s, cudaGraph_t *g,
                  const std::function<void(cudaStream_t)> &work) {
  begin_graph(s);
  work(s);
  end_graph(s, g);
}

CaptureGuard::CaptureGuard(cudaStream_t s) : stream(s) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
}

CaptureGuard::~CaptureGuard() { cudaStreamEndCapture(stream, &graph); }

bool StreamGraphCapture::beginCapture() {
  return cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) ==
         cudaSuccess;
}

bool StreamGraphCapture::endCapture() {
  return cudaStreamEndCapture(stream, &graph) == cudaSuccess;
}
