// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-legacy-stream,cudagraph-device-alloc,cudagraph-pinned-alloc %t -- -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %cuda_stubs -isystem %xla_stubs
// RUN: %check_cudagraph_tidy --prefix=CHECK-OFF %s cudagraph-host-sync,cudagraph-legacy-stream,cudagraph-device-alloc,cudagraph-pinned-alloc %t -- -config="{CheckOptions: {CustomOpRoots: false}}" -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %cuda_stubs -isystem %xla_stubs

// XLA records a custom call bound with Traits::kCmdBufferCompatible into a
// command buffer by capturing the handler's stream: the handler's body runs
// under capture with no begin call in C++. Handlers without the trait, or
// bound for a stage other than execution, are never captured.

#include <cuda_runtime.h>
#include <xla/ffi/api/ffi.h>
#include <unordered_map>

namespace ffi = xla::ffi;

__global__ void scale_kernel(float *x, float s, size_t n);

// A helper zeroing an output with the synchronous memset.
static void zero_buffer(ffi::AnyBuffer &buffer) {
  cudaMemset(buffer.untyped_data(), 0, buffer.size_bytes());
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemset' sets memory synchronously on the legacy default stream during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+7]]:3: note: 'zero_buffer' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+13]]:1: note: 'backward_impl' is registered here as XLA FFI handler 'scale_backward': it runs under CUDA graph capture when XLA records it into a command buffer (it is bound with the command-buffer trait)
  // CHECK-OFF-NOT: :[[@LINE-4]]:{{.*}}warning
}

ffi::Error backward_impl(cudaStream_t stream, ffi::AnyBuffer grad,
                         ffi::Result<ffi::AnyBuffer> out) {
  zero_buffer(grad);
  // On the handler's stream: the capturing stream.
  scale_kernel<<<1, 32, 0, stream>>>(static_cast<float *>(grad.untyped_data()),
                                     2.f, grad.element_count());
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    scale_backward, backward_impl,
    ffi::Ffi::Bind()
        .Ctx<ffi::PlatformStream<cudaStream_t>>()
        .Arg<ffi::AnyBuffer>()
        .Ret<ffi::AnyBuffer>(),
    {xla::ffi::Traits::kCmdBufferCompatible});

// No trait: XLA runs the handler outside command buffers, so its stream
// synchronization and host copy are fine.
ffi::Error state_impl(cudaStream_t stream, ffi::AnyBuffer in) {
  float host = 0;
  cudaMemcpyAsync(&host, in.untyped_data(), sizeof(float),
                  cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
  zero_buffer(in);
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    state_execute, state_impl,
    ffi::Ffi::Bind().Ctx<ffi::PlatformStream<cudaStream_t>>().Arg<ffi::AnyBuffer>());

// The trait on a handler bound for the instantiation stage: it runs when
// XLA prepares the executable, never during a command buffer's capture.
ffi::Error instantiate_impl(ffi::AnyBuffer scratch) {
  void *workspace = nullptr;
  cudaMalloc(&workspace, scratch.size_bytes());
  // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER(
    instantiate_handler, instantiate_impl,
    ffi::Ffi::Bind<ffi::ExecutionStage::kInstantiate>().Arg<ffi::AnyBuffer>(),
    {ffi::Traits::kCmdBufferCompatible});

// A handler defined with XLA_FFI_DEFINE_HANDLER: the note names its
// function pointer.
ffi::Error forward_impl(ffi::AnyBuffer x) {
  scale_kernel<<<1, 32>>>(static_cast<float *>(x.untyped_data()), 0.5f,
                          x.element_count());
  // CHECK-MESSAGES: :[[@LINE-2]]:3: warning: 'scale_kernel' sends work to the legacy default stream during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+4]]:1: note: 'forward_impl' is registered here as XLA FFI handler 'forward_handler'
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER(forward_handler, forward_impl,
                       ffi::Ffi::Bind().Arg<ffi::AnyBuffer>(),
                       {ffi::Traits::kCmdBufferCompatible});

// Bound from a lambda with Ffi::BindTo and the C API's trait constant.
static auto lambda_handler = ffi::Ffi::BindTo(
    [](ffi::AnyBuffer x) {
      void *staging = nullptr;
      cudaMallocHost(&staging, x.size_bytes());
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaMallocHost' allocates page-locked host memory during CUDA graph capture
      // CHECK-MESSAGES: :[[@LINE-5]]:30: note: 'lambda' is registered here as XLA FFI handler 'lambda_handler'
      return ffi::Error::Success();
    },
    {static_cast<ffi::Traits>(XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE)});

// XLA may record a handler's first execution into a command buffer: a cache
// the handler fills on a miss is filled under capture (fill it at the
// initialization stage instead).
static std::unordered_map<size_t, void *> workspaces;
ffi::Error cached_impl(cudaStream_t stream, ffi::AnyBuffer x) {
  auto it = workspaces.find(x.size_bytes());
  if (it == workspaces.end()) {
    void *w = nullptr;
    cudaMalloc(&w, x.size_bytes());
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
    it = workspaces.emplace(x.size_bytes(), w).first;
  }
  cudaMemsetAsync(it->second, 0, x.size_bytes(), stream);
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    cached, cached_impl,
    ffi::Ffi::Bind().Ctx<ffi::PlatformStream<cudaStream_t>>().Arg<ffi::AnyBuffer>(),
    {ffi::Traits::kCmdBufferCompatible});

// The trait given at registration: XLA_FFI_REGISTER_HANDLER(..., traits)
// of a handler bound without it.
ffi::Error registered_impl(ffi::AnyBuffer x) {
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize'
  // CHECK-MESSAGES: :[[@LINE+7]]:1: note: 'registered_impl' is registered here as XLA FFI handler 'registered_handler'
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER(registered_handler, registered_impl,
                       ffi::Ffi::Bind().Arg<ffi::AnyBuffer>());

XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "registered", "CUDA",
                         registered_handler,
                         XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);

// Registered without it: never captured.
ffi::Error plain_impl(ffi::AnyBuffer x) {
  cudaDeviceSynchronize();
  // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER(plain_handler, plain_impl,
                       ffi::Ffi::Bind().Arg<ffi::AnyBuffer>());

XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "plain", "CUDA", plain_handler);
