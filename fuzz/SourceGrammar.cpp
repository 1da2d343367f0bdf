//===--- SourceGrammar.cpp - C++ sources from fuzzer bytes ----------------===//

#include "SourceGrammar.h"

#include <string>
#include <vector>

namespace cudagraph {
namespace fuzz {
namespace {

/// Reads choices from the input; an exhausted input always chooses 0, the
/// production that ends a list.
class Choices {
public:
  Choices(const uint8_t *Data, size_t Size) : Data(Data), Size(Size) {}
  unsigned pick(unsigned Count) {
    if (Count <= 1 || At >= Size)
      return 0;
    return Data[At++] % Count;
  }
  template <typename T, size_t N> const T &oneOf(const T (&Items)[N]) {
    return Items[pick(N)];
  }
  bool done() const { return At >= Size; }

private:
  const uint8_t *Data;
  size_t Size;
  size_t At = 0;
};

// Every generated function sees `s` (a stream), `t` (a tensor) and `p` (a
// device pointer), so any statement fits anywhere.
const char *const Hazards[] = {
    "cudaDeviceSynchronize();",
    "cudaStreamSynchronize(s);",
    "cudaStreamQuery(s);",
    "cudaMalloc((void **)&p, 16);",
    "cudaFree(p);",
    "cudaMallocHost((void **)&p, 16);",
    "cudaHostAlloc((void **)&p, 16, 0);",
    "cudaMallocManaged((void **)&p, 16);",
    "cudaMemcpy(p, p, 4, cudaMemcpyDeviceToHost);",
    "cudaMemset(p, 0, 4);",
    "cudaMemcpyAsync(p, p, 4, cudaMemcpyDeviceToHost, 0);",
    "cudaEventQuery(g_event);",
    "cudaEventSynchronize(g_event);",
    "cudaLaunchHostFunc(s, nullptr, nullptr);",
    "cudaDeviceSetLimit(cudaLimitStackSize, 1024);",
    "cudaStreamAddCallback(s, nullptr, nullptr, 0);",
    "(void)t.item<float>();",
    "(void)t.item();",
    "auto h = t.cpu();",
    "auto nz = t.nonzero();",
    "(void)t.is_nonzero();",
    "(void)t.equal(t);",
    "auto pinned = t.pin_memory();",
    "t.copy_(t.cpu(), true);",
    "auto ms = t.masked_select(t);",
    "(void)t.sum().item<float>();",
    "torch::cuda::synchronize();",
    "c10::cuda::device_synchronize();",
    "c10::cuda::stream_synchronize(s);",
    "auto r = at::randn({4}, t.options());",
    "auto gen = at::cuda::detail::createCUDAGenerator();",
    "g_counter = static_cast<int>(t.sum().item<float>());",
    "g_host = t.data_ptr<float>();",
};

const char *const Benign[] = {
    "cudaMemcpyAsync(p, p, 4, cudaMemcpyDeviceToDevice, s);",
    "cudaMemsetAsync(p, 0, 4, s);",
    "t.add_(1);",
    "t.mul_(2);",
    "auto u = t.relu();",
    "cudaGetLastError();",
    "auto cur = c10::cuda::getCurrentCUDAStream();",
    "auto nz = t.nonzero_static(8);",
    "t.copy_(t, true);",
    "++g_counter;",
    "(void)g_counter;",
};

const char *const Conditions[] = {
    "t.item<bool>()",
    "g_counter > 0",
    "p != nullptr",
    "t.is_nonzero()",
    "cudaStreamQuery(s) == cudaSuccess",
    "t.sum().item<float>() > 0.5f",
    "g_flag",
    "cudaGetLastError() != cudaSuccess",
};

const char *const CheckMacros[] = {"CHECK_CUDA", "TRY_CUDA", "C10_CUDA_CHECK",
                                   "RETURN_IF_ERR"};

const char *const BeginForms[] = {
    "cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);",
    "cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);",
    "cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);",
    "CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));",
    "C10_CUDA_CHECK(cudaStreamBeginCapture(s, g_mode));",
    "BEGIN_GRAPH(s);",
    "g_graph.capture_begin();",
    "g_graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);",
};

const char *const EndForms[] = {
    "cudaStreamEndCapture(s, &g_raw);",
    "CHECK_CUDA(cudaStreamEndCapture(s, &g_raw));",
    "END_GRAPH(s, &g_raw);",
    "g_graph.capture_end();",
    "if (cudaStreamEndCapture(s, &g_raw) != cudaSuccess) return;",
};

const char *const ApiCalls[] = {
    "cudaDeviceSynchronize()",
    "cudaStreamSynchronize(s)",
    "cudaMalloc((void **)&p, 16)",
    "cudaMemcpy(p, p, 4, cudaMemcpyDeviceToHost)",
    "cudaMemcpyAsync(p, p, 4, cudaMemcpyDeviceToDevice, s)",
    "cudaEventQuery(g_event)",
    "cudaStreamEndCapture(s, &g_raw)",
    "cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)",
    "cudaGetLastError()",
};

class Generator {
public:
  explicit Generator(Choices &C) : C(C) {}

  std::string unit() {
    Out = prelude();
    Out +=
        "#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != "
        "cudaSuccess) { return; } } while (0)\n"
        "#define TRY_CUDA(x) if ((x) != cudaSuccess) throw 1\n"
        "#define RETURN_IF_ERR(x) { if ((x) != cudaSuccess) return; }\n"
        "#define BEGIN_GRAPH(s) cudaStreamBeginCapture((s), "
        "cudaStreamCaptureModeGlobal)\n"
        "#define END_GRAPH(s, g) cudaStreamEndCapture((s), (g))\n"
        "static int g_counter = 0;\n"
        "static bool g_flag = false;\n"
        "static float *g_host = nullptr;\n"
        "static cudaEvent_t g_event;\n"
        "static cudaGraph_t g_raw;\n"
        "static cudaStreamCaptureMode g_mode = cudaStreamCaptureModeGlobal;\n"
        "static at::cuda::CUDAGraph g_graph;\n";
    unsigned Items = 1 + C.pick(6);
    for (unsigned I = 0; I < Items && !C.done(); ++I)
      item();
    // Something that opens a capture and calls what came before.
    root();
    return Out;
  }

private:
  Choices &C;
  std::string Out;
  std::vector<std::string> Callables; ///< Calls taking (s, t, p).
  unsigned NextId = 0;
  int Depth = 0;
  int InLambda = 0; ///< Inside a lambda the function's label is out of reach.

  std::string fresh(const char *Stem) {
    return Stem + std::to_string(NextId++);
  }

  void item() {
    switch (C.pick(7)) {
    case 0:
    case 1:
      helper();
      break;
    case 2:
      templateHelper();
      break;
    case 3:
      classWithMethod();
      break;
    case 4:
      opRegistration();
      break;
    case 5:
      recursiveHelper();
      break;
    default:
      root();
      break;
    }
  }

  void signatureBody(const std::string &Head) {
    Out += Head + " {\n";
    block(1 + C.pick(4));
    Out += "done:;\n}\n";
  }

  void helper() {
    std::string Name = fresh("helper");
    const char *Attr =
        C.pick(8) == 0
            ? "__attribute__((annotate(\"cudagraph::capture_safe\"))) "
            : "";
    signatureBody(std::string(Attr) + "static void " + Name +
                  "(cudaStream_t s, at::Tensor t, float *p)");
    Callables.push_back(Name + "(s, t, p);");
  }

  void recursiveHelper() {
    std::string Name = fresh("recurse");
    Out += "void " + Name + "(cudaStream_t s, at::Tensor t, float *p);\n";
    Callables.push_back(Name + "(s, t, p);");
    signatureBody("void " + Name + "(cudaStream_t s, at::Tensor t, float *p)");
  }

  void templateHelper() {
    std::string Name = fresh("generic");
    // The tensor stays non-dependent, so member templates such as
    // item<float>() need no `template` keyword in the body.
    signatureBody("template <typename T> void " + Name +
                  "(cudaStream_t s, at::Tensor t, float *p, T tag)");
    Callables.push_back(C.pick(2) ? Name + "(s, t, p, 0);"
                                  : Name + "<long>(s, t, p, 1L);");
  }

  void classWithMethod() {
    std::string Name = fresh("Runner");
    bool Virtual = C.pick(2);
    Out += "struct " + Name + " {\n";
    Out += Virtual ? "  virtual ~" + Name + "() = default;\n  virtual " : "  ";
    signatureBody("void step(cudaStream_t s, at::Tensor t, float *p)");
    Out += "};\n";
    if (Virtual && C.pick(2)) {
      std::string Derived = fresh("Derived");
      Out += "struct " + Derived + " : " + Name + " {\n  ";
      signatureBody(
          "void step(cudaStream_t s, at::Tensor t, float *p) override");
      Out += "};\n";
      Callables.push_back("{ " + Derived + " d; " + Name +
                          " &b = d; b.step(s, t, p); }");
    }
    Callables.push_back("{ " + Name + " r; r.step(s, t, p); }");
  }

  void opRegistration() {
    std::string Name = fresh("op");
    // The body is a lambda so that `return;` and the check macros fit.
    Out += "at::Tensor " + Name +
           "(at::Tensor t) {\n"
           "  cudaStream_t s = c10::cuda::getCurrentCUDAStream();\n"
           "  float *p = nullptr;\n"
           "  [&]() {\n";
    block(1 + C.pick(3));
    Out += "done:;\n  }();\n  return t;\n}\n";
    Out += "TORCH_LIBRARY(fuzz" + std::to_string(NextId) + ", m) { m.def(\"" +
           Name + "\", &" + Name + "); }\n";
    Callables.push_back("(void)" + Name + "(t);");
  }

  void root() {
    std::string Name = fresh("capture");
    Out += "void " + Name + "(cudaStream_t s, at::Tensor t, float *p) {\n";
    Out += C.oneOf(BeginForms);
    Out += "\n";
    block(1 + C.pick(5));
    if (C.pick(4))
      Out += C.oneOf(EndForms);
    Out += "\ndone:;\n}\n";
    Callables.push_back(Name + "(s, t, p);");
  }

  void block(unsigned Count) {
    ++Depth;
    for (unsigned I = 0; I < Count; ++I)
      statement();
    --Depth;
  }

  void nested(unsigned Count) {
    Out += "{\n";
    block(Count);
    Out += "}\n";
  }

  void statement() {
    unsigned Choice = Depth > 4 ? C.pick(3) : C.pick(20);
    switch (Choice) {
    case 0:
      // Braces keep declarations from clashing, and from being jumped over
      // by the gotos.
      Out += std::string("{ ") + C.oneOf(Hazards) + " }";
      break;
    case 1:
      Out += std::string("{ ") + C.oneOf(Benign) + " }";
      break;
    case 2:
      if (!Callables.empty())
        Out += Callables[C.pick(static_cast<unsigned>(Callables.size()))];
      break;
    case 3:
      Out += C.oneOf(BeginForms);
      break;
    case 4:
      Out += C.oneOf(EndForms);
      break;
    case 5:
      Out += std::string("if (") + C.oneOf(Conditions) + ") ";
      nested(1 + C.pick(3));
      if (C.pick(2)) {
        Out += "else ";
        nested(1 + C.pick(2));
      }
      break;
    case 6:
      Out += C.pick(2) ? "for (int i = 0; i < 3; ++i) "
                       : "while (g_counter-- > 0) ";
      nested(1 + C.pick(3));
      break;
    case 7:
      Out += C.pick(2) || InLambda ? "return;" : "goto done;";
      break;
    case 8:
      Out += std::string(C.oneOf(CheckMacros)) + "(" + C.oneOf(ApiCalls) + ");";
      break;
    case 9: {
      std::string L = fresh("fn");
      Out += "{ auto " + L + " = [&](int k) ";
      ++InLambda;
      nested(1 + C.pick(3));
      --InLambda;
      Out += ";\n" + L + "(1); }";
      break;
    }
    case 10:
      Out += "{ std::thread th([&] ";
      ++InLambda;
      nested(1 + C.pick(3));
      --InLambda;
      Out += "); th.join(); }";
      break;
    case 11:
      nested(1 + C.pick(3));
      break;
    case 12:
      Out += "try ";
      nested(1 + C.pick(3));
      Out += "catch (...) ";
      nested(1);
      break;
    case 13:
      Out += "switch (g_counter) { case 0: ";
      nested(1 + C.pick(2));
      Out += "break; default: ";
      nested(1);
      Out += "}";
      break;
    case 14:
      Out += "{ c10::cuda::CUDAStreamGuard "
             "guard(c10::cuda::getStreamFromPool());\n";
      block(1 + C.pick(3));
      Out += "}";
      break;
    case 15:
      Out += "{ at::cuda::CUDAGraph graph; graph.capture_begin();\n";
      block(1 + C.pick(3));
      Out += C.pick(3) ? "graph.capture_end(); }" : "}";
      break;
    case 16:
      Out += "{ cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;\n"
             "cudaThreadExchangeStreamCaptureMode(&mode);\n";
      block(1 + C.pick(2));
      Out += "cudaThreadExchangeStreamCaptureMode(&mode); }";
      break;
    case 17:
      Out += "{ cudaEvent_t ev; cudaEventCreate(&ev); cudaEventRecord(ev, s);\n"
             "cudaStream_t side; cudaStreamCreateWithFlags(&side, "
             "cudaStreamNonBlocking);\ncudaStreamWaitEvent(side, ev, 0);\n"
             "cudaMemsetAsync(p, 0, 4, side);\n";
      if (C.pick(2))
        Out += "cudaEventRecord(ev, side); cudaStreamWaitEvent(s, ev, 0);\n";
      Out += "}";
      break;
    case 18:
      Out += std::string("{ const bool v = ") + C.oneOf(Conditions) +
             "; (void)v; }";
      break;
    default:
      Out += "{ cudaStreamCaptureStatus st; cudaStreamIsCapturing(s, &st);\n"
             "if (st == cudaStreamCaptureStatusActive) ";
      nested(1 + C.pick(2));
      Out += "}";
      break;
    }
    Out += "\n";
  }
};

} // namespace

const char *prelude() {
  return "#include <ATen/cuda/CUDAEvent.h>\n"
         "#include <ATen/cuda/CUDAGeneratorImpl.h>\n"
         "#include <ATen/cuda/CUDAGraph.h>\n"
         "#include <c10/cuda/CUDAException.h>\n"
         "#include <c10/cuda/CUDAFunctions.h>\n"
         "#include <c10/cuda/CUDAGuard.h>\n"
         "#include <c10/cuda/CUDAStream.h>\n"
         "#include <cuda_runtime.h>\n"
         "#include <thread>\n"
         "#include <torch/cuda.h>\n"
         "#include <torch/library.h>\n"
         "#include <torch/torch.h>\n";
}

std::string sourceFor(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return prelude();
  // One input in eight is source text as it is.
  if (Data[0] % 8 == 0)
    return std::string(prelude()) +
           std::string(reinterpret_cast<const char *>(Data + 1), Size - 1);
  Choices C(Data + 1, Size - 1);
  Generator G(C);
  return G.unit();
}

} // namespace fuzz
} // namespace cudagraph
