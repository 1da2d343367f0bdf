// Telemetry export for a simulation step: per-step particle statistics are
// reduced on the device and copied into a ring of page-locked host slots that
// a logger thread drains. The step itself is captured once and replayed.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

inline void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "line %d: %s: %s\n", line, what, cudaGetErrorString(e));
    std::exit(EXIT_FAILURE);
  }
}
#define CHECK(x) check((x), #x, __LINE__)

struct Particle {
  float3 pos;
  float3 vel;
};

__global__ void integrate(Particle* p, int n, float dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  p[i].pos.x += p[i].vel.x * dt;
  p[i].pos.y += p[i].vel.y * dt;
  p[i].pos.z += p[i].vel.z * dt;
  p[i].vel.z -= 9.81f * dt;
}

__global__ void kinetic_energy(const Particle* p, int n, float* out) {
  __shared__ float acc[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float e = 0.0f;
  if (i < n) {
    const float3 v = p[i].vel;
    e = 0.5f * (v.x * v.x + v.y * v.y + v.z * v.z);
  }
  acc[threadIdx.x] = e;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) acc[threadIdx.x] += acc[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, acc[0]);
}

class StagingRing {
 public:
  explicit StagingRing(size_t slots) : slots_(slots) {}

  // Pre-allocates every slot; meant to be called during start-up.
  void reserve(size_t bytes) {
    for (Slot& s : slots_) {
      CHECK(cudaMallocHost(&s.host, bytes));
      s.bytes = bytes;
      CHECK(cudaEventCreateWithFlags(&s.ready, cudaEventDisableTiming));
    }
  }

  void* acquire(size_t bytes) {
    Slot& s = slots_[head_];
    head_ = (head_ + 1) % slots_.size();
    if (s.ready != nullptr && cudaEventQuery(s.ready) == cudaErrorNotReady) { // expect: cudagraph-status-query
      ++overruns_;
    }
    if (s.ready == nullptr) {
      CHECK(cudaEventCreateWithFlags(&s.ready, cudaEventDisableTiming));
    }
    if (s.bytes < bytes) {
      if (s.host != nullptr) {
        CHECK(cudaFreeHost(s.host)); // warmed up before the capture: not run while capturing
      }
      CHECK(cudaHostAlloc(&s.host, bytes, cudaHostAllocDefault)); // warmed up before the capture: not run while capturing
      s.bytes = bytes;
    }
    last_ = &s;
    return s.host;
  }

  void mark_filled(cudaStream_t stream) { CHECK(cudaEventRecord(last_->ready, stream)); }

  // Slots whose copy finished; the logger thread reads these.
  size_t drain(std::vector<float>& out) {
    size_t n = 0;
    for (Slot& s : slots_) {
      if (s.ready != nullptr && cudaEventQuery(s.ready) == cudaSuccess) {
        out.push_back(*static_cast<float*>(s.host));
        ++n;
      }
    }
    return n;
  }

  size_t overruns() const { return overruns_; }

  ~StagingRing() {
    for (Slot& s : slots_) {
      if (s.host != nullptr) cudaFreeHost(s.host);
      if (s.ready != nullptr) cudaEventDestroy(s.ready);
    }
  }

 private:
  struct Slot {
    void* host = nullptr;
    size_t bytes = 0;
    cudaEvent_t ready = nullptr;
  };
  std::vector<Slot> slots_;
  size_t head_ = 0;
  size_t overruns_ = 0;
  Slot* last_ = nullptr;
};

struct Simulation {
  int n = 1 << 18;
  float dt = 1e-3f;
  Particle* d_particles = nullptr;
  float* d_energy = nullptr;
  float* h_scratch = nullptr;
  std::vector<float> checkpoint;
};

void export_energy(Simulation& sim, StagingRing& ring, cudaStream_t s) {
  void* dst = ring.acquire(sizeof(float));
  CHECK(cudaMemcpyAsync(dst, sim.d_energy, sizeof(float), cudaMemcpyDeviceToHost, s));
  ring.mark_filled(s);
}

void stage_checkpoint(Simulation& sim, cudaStream_t s) {
  const size_t bytes = sim.checkpoint.size() * sizeof(float);
  CHECK(cudaHostRegister(sim.checkpoint.data(), bytes, cudaHostRegisterDefault)); // expect: cudagraph-pinned-alloc
  CHECK(cudaMemcpyAsync(sim.checkpoint.data(), sim.d_particles, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaHostUnregister(sim.checkpoint.data())); // expect: cudagraph-pinned-alloc
}

void scratch_buffer(Simulation& sim) {
  if (sim.h_scratch == nullptr) {
    CHECK(cudaMallocHost(&sim.h_scratch, 1024 * sizeof(float))); // warmed up before the capture: not run while capturing
  }
}

void step(Simulation& sim, StagingRing& ring, cudaStream_t s, bool checkpoint) {
  const int threads = 256;
  const int blocks = (sim.n + threads - 1) / threads;
  integrate<<<blocks, threads, 0, s>>>(sim.d_particles, sim.n, sim.dt);
  CHECK(cudaMemsetAsync(sim.d_energy, 0, sizeof(float), s));
  kinetic_energy<<<blocks, threads, 0, s>>>(sim.d_particles, sim.n, sim.d_energy);
  export_energy(sim, ring, s);
  if (checkpoint) {
    stage_checkpoint(sim, s);
  }
  scratch_buffer(sim);
}

}  // namespace

int main(int argc, char** argv) {
  Simulation sim;
  sim.checkpoint.resize(static_cast<size_t>(sim.n) * sizeof(Particle) / sizeof(float));
  CHECK(cudaMalloc(&sim.d_particles, sim.n * sizeof(Particle)));
  CHECK(cudaMalloc(&sim.d_energy, sizeof(float)));
  CHECK(cudaMemset(sim.d_particles, 0, sim.n * sizeof(Particle)));

  StagingRing ring(8);
  ring.reserve(sizeof(float));

  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  step(sim, ring, stream, /*checkpoint=*/false);
  CHECK(cudaStreamSynchronize(stream));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  step(sim, ring, stream, /*checkpoint=*/argc > 1);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  std::vector<float> energies;
  for (int i = 0; i < 1000; ++i) {
    CHECK(cudaGraphLaunch(exec, stream));
    if (i % 100 == 99) {
      CHECK(cudaStreamSynchronize(stream));
      ring.drain(energies);
    }
  }
  CHECK(cudaStreamSynchronize(stream));
  std::printf("exported %zu samples, %zu overruns\n", energies.size(), ring.overruns());
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(sim.d_energy));
  CHECK(cudaFree(sim.d_particles));
  return 0;
}
