// RUN: %check_cudagraph_tidy %s cudagraph-rng-generator %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <torch/cuda.h>
#include <torch/torch.h>

// A generator the project makes and never registers.
at::Tensor noisy(const at::Tensor &x) {
  at::cuda::CUDAGraph graph;
  at::Generator gen = at::cuda::detail::createCUDAGenerator();
  graph.capture_begin();
  at::Tensor n = at::randn({64}, gen, x.options());
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'randn' draws random numbers from a generator not registered with the graph during CUDA graph capture: libtorch throws c10::Error "Attempt to increase offset for a CUDA generator not in capture mode."; register the generator before capture with graph.register_generator_state(gen), or use the default generator (hazard: unregistered-generator) [cudagraph-rng-generator]
  // CHECK-MESSAGES: :[[@LINE-4]]:17: note: the generator is made here and never passed to CUDAGraph::register_generator_state
  graph.capture_end();
  return x + n;
}

// Registered before capture: captured.
at::Tensor registered(const at::Tensor &x) {
  at::cuda::CUDAGraph graph;
  at::Generator gen = at::cuda::detail::createCUDAGenerator();
  graph.register_generator_state(gen);
  graph.capture_begin();
  at::Tensor n = at::randn({64}, gen, x.options());
  graph.capture_end();
  return x + n;
}

// The default generator, and a generator the caller passes in (its origin
// is not visible): not reported.
at::Tensor fromCaller(const at::Tensor &x, at::Generator gen) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor a = at::randn({64}, x.options());
  at::Tensor b = at::randn({64}, gen, x.options());
  at::Tensor c = at::randn({64}, at::cuda::detail::getDefaultCUDAGenerator(),
                           x.options());
  graph.capture_end();
  return x + a + b + c;
}

// A generator kept by an object, reached through a helper under capture.
struct Dropout {
  at::Generator gen_;
  Dropout() { gen_ = at::make_generator<at::CUDAGeneratorImpl>(); }
  at::Tensor mask(const at::Tensor &x) {
    return at::rand({64}, gen_, x.options());
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: 'rand' draws random numbers from a generator not registered with the graph
    // CHECK-MESSAGES: :[[@LINE-4]]:15: note: the generator is made here and never passed to CUDAGraph::register_generator_state
  }
};

at::Tensor step(Dropout &d, const at::Tensor &x) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor m = d.mask(x);
  // CHECK-MESSAGES: :[[@LINE-1]]:20: note: 'Dropout::mask' is called here during capture
  graph.capture_end();
  return m;
}

// A function returning the project's generator, registered elsewhere.
at::Generator &shared() {
  static at::Generator g = at::cuda::detail::createCUDAGenerator();
  return g;
}

void setupGraph(at::cuda::CUDAGraph &graph) {
  graph.register_generator_state(shared());
}

at::Tensor sharedDraw(at::cuda::CUDAGraph &graph, const at::Tensor &x) {
  setupGraph(graph);
  graph.capture_begin();
  at::Tensor n = at::randn({64}, shared(), x.options());
  graph.capture_end();
  return x + n;
}

// philox_engine_inputs throws under capture; philox_cuda_state is the
// capture-safe form (a note offers the rename, applied with --fix-notes).
void customKernelLaunch(at::CUDAGeneratorImpl *impl, bool safe) {
  std::lock_guard<std::mutex> lock(impl->mutex_);
  if (safe) {
    at::PhiloxCudaState state = impl->philox_cuda_state(4);
    (void)state;
  } else {
    auto seeds = impl->philox_engine_inputs(4);
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: 'CUDAGeneratorImpl::philox_engine_inputs' reserves Philox offsets as host values during CUDA graph capture
    // CHECK-MESSAGES: :[[@LINE-2]]:24: note: use philox_cuda_state, which capture records, and unpack it in the kernel with at::cuda::philox::unpack
    (void)seeds;
  }
}

void philox(at::CUDAGeneratorImpl *impl, bool safe) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  customKernelLaunch(impl, safe);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'customKernelLaunch' is called here during capture
  graph.capture_end();
}

// Reseeding during capture; reading the seed is fine.
void reseed(at::Generator gen) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  uint64_t s = gen.current_seed();
  gen.set_current_seed(s + 1);
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'Generator::set_current_seed' reseeds a generator during CUDA graph capture
  torch::cuda::manual_seed(7);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'manual_seed' reseeds a generator during CUDA graph capture
  graph.capture_end();
  torch::cuda::manual_seed(7);
}
