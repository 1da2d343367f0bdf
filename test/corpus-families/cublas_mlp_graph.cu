// Two-layer MLP built on cuBLAS, captured into CUDA graphs.
//
// The MLP block keeps a lazily created cuBLAS handle; the pooling head owns
// a second one. A debug build prints from the GELU kernel and records host
// callbacks for tracing.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

#define CUBLAS_CHECK(x)                                                           \
  do {                                                                            \
    cublasStatus_t st_ = (x);                                                     \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                           \
      fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, int(st_)); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

__global__ void bias_gelu(float* x, const float* bias, int rows, int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) {
    const float v = x[i] + bias[i % cols];
    x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

__global__ void row_mean(const float* x, float* out, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c) {
      acc += x[r * cols + c];
    }
    out[r] = acc / cols;
  }
}

static void CUDART_CB trace_callback(cudaStream_t, cudaError_t, void* tag) {
  std::printf("trace: %s\n", static_cast<const char*>(tag));
}

static void CUDART_CB trace_host_fn(void* tag) {
  std::printf("trace: %s\n", static_cast<const char*>(tag));
}

// Creates its handle on first use.
class LazyCublas {
 public:
  ~LazyCublas() {
    if (handle_ != nullptr) {
      cublasDestroy(handle_);
    }
  }
  cublasHandle_t get(cudaStream_t s) {
    if (handle_ == nullptr) {
      CUBLAS_CHECK(cublasCreate(&handle_)); // expect: cudagraph-capture-unsafe-call
    }
    CUBLAS_CHECK(cublasSetStream(handle_, s));
    return handle_;
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

struct MlpBlock {
  int batch, in, hidden;
  float *w1, *b1, *w2, *b2, *x, *h, *y;
  LazyCublas blas;

  void forward(cudaStream_t s) {
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t handle = blas.get(s);
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, hidden, batch, in, &one, w1, hidden, x, in, &zero, h, hidden));
    bias_gelu<<<(batch * hidden + 255) / 256, 256, 0, s>>>(h, b1, batch, hidden);
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, in, batch, hidden, &one, w2, in, h, hidden, &zero, y, in));
  }
};

// Mean-pooling head with its own lazily created handle; always warmed up eagerly.
struct PoolingHead {
  int batch, in;
  float *proj, *y, *pooled, *out;
  cublasHandle_t handle = nullptr;

  void forward(cudaStream_t s) {
    if (handle == nullptr) {
      CUBLAS_CHECK(cublasCreate(&handle));
    }
    CUBLAS_CHECK(cublasSetStream(handle, s));
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, in, batch, in, &one, proj, in, y, in, &zero, out, in));
    row_mean<<<(batch + 127) / 128, 128, 0, s>>>(out, pooled, batch, in);
  }
};

// Recreates a handle, e.g. after the math mode changed.
static void recreate_handle(cublasHandle_t& h, cudaStream_t s) {
  CUBLAS_CHECK(cublasDestroy(h)); // expect: cudagraph-capture-unsafe-call
  CUBLAS_CHECK(cublasCreate(&h)); // expect: cudagraph-capture-unsafe-call
  CUBLAS_CHECK(cublasSetStream(h, s));
}

// Owns a cuBLAS workspace for as long as the handle that uses it lives.
struct ScopedWorkspace {
  explicit ScopedWorkspace(size_t n) : bytes(n) {
    CUDA_CHECK(cudaMalloc(&ptr, bytes)); // expect: cudagraph-device-alloc
  }
  ~ScopedWorkspace() { cudaFree(ptr); }
  ScopedWorkspace(const ScopedWorkspace&) = delete;
  ScopedWorkspace& operator=(const ScopedWorkspace&) = delete;
  void* ptr = nullptr;
  size_t bytes;
};

static float* device_buffer(size_t count) {
  float* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, count * sizeof(float)));
  return p;
}

int main(int argc, char** argv) {
  const bool debug = argc > 1;
  const int batch = 64, in = 512, hidden = 2048;
  MlpBlock mlp{batch, in, hidden,
               device_buffer(in * hidden), device_buffer(hidden), device_buffer(hidden * in), device_buffer(in),
               device_buffer(batch * in), device_buffer(batch * hidden), device_buffer(batch * in), {}};
  PoolingHead head{batch, in, device_buffer(in * in), mlp.y, device_buffer(batch), device_buffer(batch * in)};

  cudaStream_t s, side;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t fork_ev, join_ev;
  CUDA_CHECK(cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&join_ev, cudaEventDisableTiming));
  cublasHandle_t shared = nullptr;
  CUBLAS_CHECK(cublasCreate(&shared));
  CUBLAS_CHECK(cublasSetStream(shared, s));
  if (debug) {
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 24));
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

  // Graph 1: pooling head only (warmed up first, so its handle already exists).
  head.forward(s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  cudaGraph_t head_graph = nullptr;
  cudaGraphExec_t head_exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  head.forward(s);
  CUDA_CHECK(cudaLaunchHostFunc(s, trace_host_fn, const_cast<char*>("head done")));
  CUDA_CHECK(cudaStreamEndCapture(s, &head_graph));
  CUDA_CHECK(cudaGraphInstantiate(&head_exec, head_graph, 0));

  // Graph 2: the MLP with the head on a side stream.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  CUDA_CHECK(cudaFuncSetAttribute(bias_gelu, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
  cudaPointerAttributes attr;
  CUDA_CHECK(cudaPointerGetAttributes(&attr, mlp.w1));
  void* workspace = nullptr;
  CUDA_CHECK(cudaMalloc(&workspace, 4u << 20)); // expect: cudagraph-device-alloc
  CUBLAS_CHECK(cublasSetWorkspace(shared, workspace, 4u << 20));
  mlp.forward(s);
  if (debug) {
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 26)); // expect: cudagraph-capture-unsafe-call
    CUDA_CHECK(cudaStreamAddCallback(s, trace_callback, const_cast<char*>("mlp done"), 0)); // expect: cudagraph-capture-unsafe-call
  }
  CUDA_CHECK(cudaEventRecord(fork_ev, s));
  CUDA_CHECK(cudaStreamWaitEvent(side, fork_ev, 0)); // expect: cudagraph-unjoined-fork
  row_mean<<<(batch + 127) / 128, 128, 0, side>>>(mlp.y, head.pooled, batch, in);
  CUDA_CHECK(cudaEventRecord(join_ev, side));
  CUDA_CHECK(cudaGraphLaunch(head_exec, s)); // expect: cudagraph-capture-unsafe-call
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  // Graph 3: same MLP with the side stream joined; handle swap in relaxed mode.
  cudaGraph_t joined = nullptr;
  cudaGraphExec_t joined_exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  cublasHandle_t scratch_handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&scratch_handle));
  CUBLAS_CHECK(cublasDestroy(scratch_handle)); // expect: cudagraph-capture-unsafe-call
  mlp.forward(s);
  CUDA_CHECK(cudaEventRecord(fork_ev, s));
  CUDA_CHECK(cudaStreamWaitEvent(side, fork_ev, 0));
  row_mean<<<(batch + 127) / 128, 128, 0, side>>>(mlp.y, head.pooled, batch, in);
  CUDA_CHECK(cudaEventRecord(join_ev, side));
  CUDA_CHECK(cudaStreamWaitEvent(s, join_ev, 0));
  CUDA_CHECK(cudaGraphDestroy(head_graph));
  CUDA_CHECK(cudaStreamEndCapture(s, &joined));
  CUDA_CHECK(cudaGraphInstantiate(&joined_exec, joined, 0));

  // Graph 4: tensor-op precision switch.
  cudaGraph_t tf32 = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  recreate_handle(shared, s);
  ScopedWorkspace tf32_ws(8u << 20);
  CUBLAS_CHECK(cublasSetWorkspace(shared, tf32_ws.ptr, tf32_ws.bytes));
  CUBLAS_CHECK(cublasSetMathMode(shared, CUBLAS_TF32_TENSOR_OP_MATH));
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgemm(shared, CUBLAS_OP_N, CUBLAS_OP_N, in, batch, in, &one, head.proj, in, mlp.y, in, &zero, head.out, in));
  CUDA_CHECK(cudaStreamEndCapture(s, &tf32));
  CUDA_CHECK(cudaGraphDestroy(tf32));

  for (int i = 0; i < 10; ++i) {
    CUDA_CHECK(cudaGraphLaunch(joined_exec, s));
    CUDA_CHECK(cudaGraphLaunch(head_exec, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::printf("%s: %zu MiB free\n", prop.name, free_b >> 20);

  CUDA_CHECK(cudaGraphExecDestroy(joined_exec));
  CUDA_CHECK(cudaGraphDestroy(joined));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaGraphExecDestroy(head_exec));
  CUBLAS_CHECK(cublasDestroy(shared));
  CUBLAS_CHECK(cublasDestroy(head.handle));
  CUDA_CHECK(cudaFree(workspace));
  CUDA_CHECK(cudaEventDestroy(join_ev));
  CUDA_CHECK(cudaEventDestroy(fork_ev));
  CUDA_CHECK(cudaStreamDestroy(side));
  CUDA_CHECK(cudaStreamDestroy(s));
  return 0;
}
