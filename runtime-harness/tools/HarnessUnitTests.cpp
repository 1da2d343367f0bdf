//===--- HarnessUnitTests.cpp - host-only checks of the harness core ------===//
//
// cudagraph-harness-unittests catalog|json|tracker|stack|throw
//
// Each section prints what the code under test computes; the lit tests in
// test/harness check the output with FileCheck. No GPU is needed.
//
//===----------------------------------------------------------------------===//

#include "cudagraph/harness/CaptureTracker.h"
#include "cudagraph/harness/Catalog.h"
#include "cudagraph/harness/Json.h"
#include "cudagraph/harness/StackTrace.h"

#include <cassert>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <unistd.h>

using namespace cudagraph::harness;

static int testCatalog() {
  std::cout << "checks " << checks().size() << " hazards " << hazards().size()
            << "\n";
  for (const CheckInfo &C : checks())
    std::cout << "check " << C.Name << " " << C.Status << "\n";
  for (const char *Api : {"cudaDeviceSynchronize", "cuCtxSynchronize",
                          "cudaStreamSynchronize", "cuStreamSynchronize_ptsz",
                          "cudaEventQuery",        "cudaMemcpy",
                          "cudaMemcpyAsync",       "cuMemcpyDtoH_v2",
                          "cuMemcpyDtoHAsync_v2",  "cudaMemset",
                          "cudaMemsetAsync",       "cudaMalloc",
                          "cuMemAlloc_v2",         "cudaMallocAsync",
                          "cudaMallocHost",        "cuMemAllocHost_v2",
                          "cudaFreeHost",          "cudaHostRegister",
                          "cudaLaunchKernel",      "at::Tensor::item",
                          "at::nonzero",           "cudaGraphExecDestroy",
                          "cuModuleUnload",        "cublasCreate_v2",
                          "cudaLaunchHostFunc"}) {
    const HazardInfo *H = hazardForApi(Api);
    std::cout << "api " << Api << " -> "
              << (H ? std::string(H->Id) + " " + H->Check : "none") << "\n";
  }
  for (const char *Message :
       {"Attempt to increase offset for a CUDA generator not in capture mode.",
        "CUDA error: operation not permitted when stream is capturing",
        "CUDA graphs must be captured on a non-default stream. (However, "
        "after capture, it's ok to replay on the default stream.)",
        "CUDA error: capturing stream has unjoined work",
        "something else entirely"}) {
    const HazardInfo *H = hazardForMessage(Message);
    std::cout << "message -> " << (H ? H->Id : "none") << "\n";
  }
  std::cout << "base " << baseApiName("cuMemcpyDtoH_v2_ptds") << " "
            << baseApiName("cudaStreamSynchronize_ptsz") << " "
            << baseApiName("cuStreamBeginCapture_v2") << " "
            << baseApiName("cudaLaunchKernel") << "\n";
  std::cout << "glob " << namesMatch("cudaMemcpy*|!*Async*", "cudaMemcpy2D")
            << namesMatch("cudaMemcpy*|!*Async*", "cudaMemcpy2DAsync")
            << namesMatch("a*b*c", "aXXbYYc") << namesMatch("a*b*c", "acb")
            << namesMatch("", "x") << "\n";
  std::cout << "unknown " << (findHazard("no-such-hazard") == nullptr) << " "
            << (findCheck("cudagraph-host-sync") != nullptr) << "\n";
  return 0;
}

static int testJson() {
  JsonObject O;
  O.add("s", "quote\" backslash\\ newline\n tab\t ctl\x01");
  O.add("i", static_cast<int64_t>(-5));
  O.add("u", static_cast<uint64_t>(18446744073709551615ull));
  O.add("d", 0.25);
  O.add("inf", 1.0 / 0.0);
  O.addBool("b", true);
  O.addNull("n");
  O.add("v", std::vector<uint64_t>{1, 2, 3});
  std::string Text = O.str();
  std::cout << Text << "\n";
  JsonValue V;
  std::string Error;
  bool Ok = JsonValue::parse(Text, V, Error);
  std::cout << "roundtrip " << Ok << " s="
            << (V.getString("s") == "quote\" backslash\\ newline\n"
                                    " tab\t ctl\x01")
            << " i=" << V.getInt("i") << " b=" << V.getBool("b")
            << " v=" << V.get("v")->asArray().size() << "\n";
  std::cout << "handle " << V.getHandle("missing") << " ";
  JsonValue H;
  JsonValue::parse("{\"stream\":\"0x7f00ab\",\"n\":12}", H, Error);
  std::cout << std::hex << H.getHandle("stream") << std::dec << " "
            << H.getHandle("n") << "\n";
  for (const char *Bad :
       {"{", "{\"a\" 1}", "[1,]", "{\"a\":tru}", "\"x", "{} x"}) {
    JsonValue Ignored;
    std::string Why;
    bool Parsed = JsonValue::parse(Bad, Ignored, Why);
    std::cout << "bad " << Parsed << " " << Why << "\n";
  }
  JsonValue U;
  JsonValue::parse("\"\\u00e9\\u0041\"", U, Error);
  std::cout << "unicode " << U.asString() << "\n";
  return 0;
}

static ApiEvent api(uint64_t Thread, ApiDomain D, uint32_t Cbid,
                    const char *Name, ApiRole Role, bool Exit, int Result = 0) {
  ApiEvent E;
  E.Thread = Thread;
  E.Domain = D;
  E.Cbid = Cbid;
  E.Name = Name;
  E.Role = Role;
  E.IsExit = Exit;
  E.Result = Result;
  return E;
}

static void print(const std::vector<Report> &Reports) {
  for (const Report &R : Reports)
    std::cout << toJson(R).str() << "\n";
}

static int testTracker() {
  CaptureTracker T;
  // A capture opened by the driver call alone (no runtime frame seen).
  ApiEvent Begin = api(1, ApiDomain::Driver, 539, "cuStreamBeginCapture_v2",
                       ApiRole::CaptureBegin, true);
  Begin.Stream = {StreamKind::Explicit, 0x10, CaptureStatus::Active, 7};
  Begin.Mode = CaptureMode::ThreadLocal;
  print(T.onApi(Begin));
  std::cout << "open " << T.openCaptureCount() << "\n";

  // An exit whose enter was never seen stands alone.
  print(T.onApi(
      api(1, ApiDomain::Runtime, 3, "cudaMalloc", ApiRole::Other, true, 900)));

  // Calls in flight when listening stops are forgotten; the begin/end
  // frames survive.
  T.onApi(api(2, ApiDomain::Runtime, 9, "cudaMemcpy", ApiRole::Work, false));
  T.onApi(api(2, ApiDomain::Runtime, 319, "cudaStreamEndCapture",
              ApiRole::CaptureEnd, false));
  T.dropInFlightCalls();
  ApiEvent End = api(2, ApiDomain::Runtime, 319, "cudaStreamEndCapture",
                     ApiRole::CaptureEnd, true, 901);
  End.Stream = {StreamKind::Explicit, 0x10, CaptureStatus::Unknown, 7};
  print(T.onApi(End));
  std::cout << "open " << T.openCaptureCount() << "\n";

  // Outside any capture, throws only matter when they talk about capture.
  ThrowEvent Quiet{1, "std::runtime_error", "unrelated"};
  ThrowEvent Loud{1, "c10::Error",
                  "CUDA graphs must be captured on a non-default stream."};
  std::cout << "throws " << T.onThrow(Quiet).size() << " "
            << T.onThrow(Loud).size() << "\n";
  T.setRegion("r1");
  std::cout << "region " << T.region() << " " << T.regionStats().FrameworkErrors
            << "\n";
  return 0;
}

// Kept out of line so its frame, and the line of the call below, are in
// the stack.
__attribute__((noinline)) static std::vector<NativeFrame> stackHere() {
  return captureNativeStack(nullptr);
}

static int testStack() {
  int CallLine = __LINE__ + 1;
  std::vector<NativeFrame> Frames = stackHere();
  // The first frames are captureNativeStack's callers: stackHere, then us.
  bool SawHelper = false, SawSelf = false;
  for (const NativeFrame &F : Frames) {
    SawHelper |= F.Symbol.find("stackHere") != std::string::npos;
    SawSelf |=
        F.Symbol.find("testStack") != std::string::npos ||
        F.Module.find("cudagraph-harness-unittests") != std::string::npos;
  }
  // stackHere is static, so dladdr (exported symbols only) cannot name
  // it; addr2line does, later.
  std::cout << "frames " << (Frames.size() > 2) << " helper-named " << SawHelper
            << " self " << SawSelf << "\n";
  // A report line with the stack, for cudagraph-symbolize to resolve.
  JsonObject O;
  O.add("event", "capture_error");
  O.add("seq", static_cast<uint64_t>(1));
  O.add("api", "cudaDeviceSynchronize");
  O.add("result", 900);
  O.addBool("root_cause", true);
  O.add("expect_file", "HarnessUnitTests.cpp");
  O.add("expect_line", CallLine);
  O.addRaw("stack", toJson(Frames));
  std::cerr << O.str() << "\n";

  // An address outside every module keeps only the pc.
  NativeFrame Nowhere = describeAddress(0x10);
  std::cout << "nowhere module='" << Nowhere.Module << "' symbol='"
            << Nowhere.Symbol << "'\n";
  // An address in libc resolves to the module and a symbol, no line. (A
  // function sanitizers do not intercept: theirs would live elsewhere.)
  NativeFrame Libc = describeAddress(reinterpret_cast<uint64_t>(&::getppid));
  std::cout << "libc module " << (Libc.Module.find("libc") != std::string::npos)
            << " offset " << (Libc.ModuleOffset != 0) << "\n";
  std::cout << "demangle " << demangle("_ZN3foo3barEv") << " "
            << demangle("not_mangled") << " '" << demangle("") << "'\n";
  return 0;
}

// Throws and catches: run with the injection library preloaded, the throw
// passes through its __cxa_throw and must still be caught here.
static int testThrow() {
  try {
    throw std::runtime_error("thrown through the hook");
  } catch (const std::exception &E) {
    std::cout << "caught: " << E.what() << "\n";
  }
  try {
    throw 42;
  } catch (int Value) {
    std::cout << "caught int " << Value << "\n";
  }
  return 0;
}

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    std::cerr << "usage: cudagraph-harness-unittests "
                 "catalog|json|tracker|stack|throw\n";
    return 2;
  }
  std::string Which = Argv[1];
  if (Which == "catalog")
    return testCatalog();
  if (Which == "json")
    return testJson();
  if (Which == "tracker")
    return testTracker();
  if (Which == "stack")
    return testStack();
  if (Which == "throw")
    return testThrow();
  std::cerr << "unknown section '" << Which << "'\n";
  return 2;
}
