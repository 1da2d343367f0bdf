// Stand-in for ATen/cuda/CUDAGraph.h.
#pragma once

#include <ATen/Tensor.h>
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <string>

namespace at {

struct CUDAGeneratorImpl;

namespace cuda {

// Standalone way to get a unique mempool id usable as a pool=... argument
// to CUDAGraph::capture_begin.
TORCH_CUDA_CPP_API MempoolId_t graph_pool_handle();

struct TORCH_CUDA_CPP_API CUDAGraph {
  CUDAGraph(bool keep_graph = false);
  ~CUDAGraph();

  void register_generator_state(const at::Generator& generator);
  void capture_begin(MempoolId_t pool = {0, 0},
                     cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal);
  void capture_end();
  void instantiate();
  void replay();
  void reset();
  MempoolId_t pool();
  void enable_debug_mode();
  void debug_dump(const std::string& debug_path);
  cudaGraph_t raw_cuda_graph();

 protected:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  bool has_graph_ = false;
  bool has_graph_exec_ = false;
  CaptureId_t id_ = 0;
  MempoolId_t mempool_id_;
  int capture_dev_ = -1;
};

} // namespace cuda
} // namespace at
