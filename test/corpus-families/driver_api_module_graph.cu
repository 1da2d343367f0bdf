// JIT-loaded kernel module driven through the CUDA driver API, with the
// per-frame work captured into a graph.
//
// The kernel comes from a PTX string (in production it is generated at run
// time). A plug-in reload path swaps modules between frames.

#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CU_CHECK(x)                                                               \
  do {                                                                            \
    CUresult r_ = (x);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                     \
      const char* msg_ = nullptr;                                                 \
      cuGetErrorString(r_, &msg_);                                                \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, msg_ ? msg_ : "?"); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

static const char kScaleAddPtx[] = R"PTX(
.version 8.0
.target sm_80
.address_size 64
.visible .entry scale_add(.param .u64 px, .param .u64 py, .param .f32 pa, .param .u32 pn)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [px];
  ld.param.u64 %rd2, [py];
  ld.param.f32 %f1, [pa];
  ld.param.u32 %r1, [pn];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  ld.global.f32 %f3, [%rd7];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd7], %f4;
DONE:
  ret;
}
)PTX";

struct Plugin {
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
};

static Plugin load_plugin() {
  Plugin p;
  CU_CHECK(cuModuleLoadData(&p.module, kScaleAddPtx));
  CU_CHECK(cuModuleGetFunction(&p.fn, p.module, "scale_add"));
  return p;
}

// Launches scale_add on `stream` with the grid derived from n.
static void launch_scale_add(const Plugin& p, CUstream stream, CUdeviceptr x, CUdeviceptr y, float a, unsigned n) {
  void* args[] = {&x, &y, &a, &n};
  CU_CHECK(cuLaunchKernel(p.fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

// Scratch for the reduction pass, sized per frame.
static CUdeviceptr frame_scratch(size_t bytes) {
  CUdeviceptr d = 0;
  CU_CHECK(cuMemAlloc(&d, bytes)); // expect: cudagraph-device-alloc
  return d;
}

static void release_scratch(CUdeviceptr d) {
  CU_CHECK(cuMemFree(d)); // expect: cudagraph-device-alloc
}

int main() {
  CU_CHECK(cuInit(0));
  CUdevice dev;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(cuCtxSetCurrent(ctx));
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));

  CUstream stream;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  Plugin plugin = load_plugin();

  const unsigned n = 1u << 20;
  const size_t bytes = n * sizeof(float);
  CUdeviceptr d_x = 0, d_y = 0, d_x_next = 0;
  CU_CHECK(cuMemAlloc(&d_x, bytes));
  CU_CHECK(cuMemAlloc(&d_y, bytes));
  CU_CHECK(cuMemAlloc(&d_x_next, bytes));
  const CUdeviceptr d_x_first = d_x;
  CU_CHECK(cuMemsetD32Async(d_x, 0x3f800000u, n, stream));
  CU_CHECK(cuMemsetD32Async(d_y, 0, n, stream));
  CU_CHECK(cuCtxSynchronize());

  // Frame graph.
  float alpha = 0.5f;
  void* args[] = {&d_x, &d_y, &alpha, const_cast<unsigned*>(&n)};
  CUgraph frame_graph = nullptr;
  CUgraphExec frame_exec = nullptr;
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_CHECK(cuLaunchKernel(plugin.fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
  CUdeviceptr tmp = 0;
  CU_CHECK(cuMemAllocAsync(&tmp, bytes, stream));
  CU_CHECK(cuMemcpyDtoDAsync(tmp, d_y, bytes, stream));
  launch_scale_add(plugin, stream, tmp, d_y, 1.0f, n);
  CU_CHECK(cuMemFreeAsync(tmp, stream));
  CU_CHECK(cuStreamEndCapture(stream, &frame_graph));
  CU_CHECK(cuGraphInstantiate(&frame_exec, frame_graph, 0));

  // Statistics graph: captured with a few mistakes carried over from the eager version.
  CUgraph stats_graph = nullptr;
  CUgraphExec stats_exec = nullptr;
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUdeviceptr scratch = frame_scratch(bytes);
  CU_CHECK(cuMemcpyDtoDAsync(scratch, d_y, bytes, stream));
  launch_scale_add(plugin, stream, scratch, d_y, -1.0f, n);
  CU_CHECK(cuLaunchKernel(plugin.fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, args, nullptr)); // expect: cudagraph-legacy-stream
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 1 << 22)); // expect: cudagraph-capture-unsafe-call
  CU_CHECK(cuGraphLaunch(frame_exec, stream)); // expect: cudagraph-capture-unsafe-call
  CU_CHECK(cuCtxSynchronize()); // expect: cudagraph-host-sync
  release_scratch(scratch);
  CU_CHECK(cuStreamEndCapture(stream, &stats_graph));
  CU_CHECK(cuGraphInstantiate(&stats_exec, stats_graph, 0));

  for (int frame = 0; frame < 16; ++frame) {
    if (frame == 8) {
      d_x = d_x_next; // expect: cudagraph-frozen-host-state
    }
    CU_CHECK(cuGraphLaunch(frame_exec, stream));
  }
  CU_CHECK(cuGraphLaunch(stats_exec, stream));
  CU_CHECK(cuStreamSynchronize(stream));

  // Plug-in reload, captured so that the swap happens in stream order.
  Plugin next = load_plugin();
  CUgraph reload_graph = nullptr;
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  launch_scale_add(next, stream, d_x, d_y, alpha, n);
  CU_CHECK(cuModuleUnload(plugin.module)); // expect: cudagraph-capture-unsafe-call
  CU_CHECK(cuGraphExecDestroy(stats_exec)); // expect: cudagraph-capture-unsafe-call
  CU_CHECK(cuStreamEndCapture(stream, &reload_graph));
  CU_CHECK(cuGraphDestroy(reload_graph));

  // Relaxed capture tolerates module management.
  Plugin third = load_plugin();
  CUgraph relaxed_graph = nullptr;
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED));
  Plugin fourth = load_plugin();
  launch_scale_add(third, stream, d_x, d_y, alpha, n);
  CU_CHECK(cuModuleUnload(fourth.module));
  CU_CHECK(cuStreamEndCapture(stream, &relaxed_graph));
  CU_CHECK(cuGraphDestroy(relaxed_graph));

  CU_CHECK(cuStreamSynchronize(stream));
  CU_CHECK(cuModuleUnload(third.module));
  CU_CHECK(cuModuleUnload(next.module));
  CU_CHECK(cuGraphExecDestroy(frame_exec));
  CU_CHECK(cuGraphDestroy(frame_graph));
  CU_CHECK(cuGraphDestroy(stats_graph));
  CU_CHECK(cuMemFree(d_x_next));
  CU_CHECK(cuMemFree(d_x_first));
  CU_CHECK(cuMemFree(d_y));
  CU_CHECK(cuStreamDestroy(stream));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
