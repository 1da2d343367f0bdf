//===--- Injection.cpp - the CUPTI injection library ----------------------===//
//
// Loaded by the CUDA driver through CUDA_INJECTION64_PATH, which calls
// InitializeInjection during cuInit. One CUPTI subscriber, one callback that
// switches on domain, callback id and enter/exit; the decisions are made by
// CaptureTracker.
//
// Cost: while no capture is open only the driver's capture begin/end
// callbacks are on, so launches, copies and graph replays never enter this
// library. The first begin-capture switches the runtime and driver domains
// on; the last end-capture switches them off again.
//
// Environment:
//   CUDAGRAPH_HARNESS_OUTPUT     report path ("%p" = pid; "-" = stderr);
//                                default cudagraph-harness.%p.jsonl
//   CUDAGRAPH_HARNESS_TRACE      also record every decoded event here (for
//                                replaying through cudagraph-replay-events)
//   CUDAGRAPH_HARNESS_CALLBACKS  "capture" (default); "all": keep every
//                                callback on and filter in the callback;
//                                "off": load nothing (for measurements)
//   CUDAGRAPH_HARNESS_THROWS     "capture" (default): record exceptions
//                                thrown while a capture is open or a probe
//                                region runs; "all": also any exception
//                                that mentions capture
//   CUDAGRAPH_HARNESS_QUIET      "1": no summary lines on stderr
//   CUDAGRAPH_HARNESS_SIGNALS    "0": leave fatal signals alone (by default
//                                a target_signal event with the open
//                                captures is written, then the program's
//                                own handler or the default action runs)
//   CUDAGRAPH_CUPTI_LIBRARY      libcupti to load
//
//===----------------------------------------------------------------------===//

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "Injection.h"
#include "ApiTable.h"
#include "ReportWriter.h"
#include "cudagraph/harness/CaptureTracker.h"
#include "cudagraph/harness/HarnessControl.h"
#include "cudagraph/harness/Json.h"

#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>

#ifndef CUDAGRAPH_HARNESS_VERSION
#define CUDAGRAPH_HARNESS_VERSION "0"
#endif
#ifndef CUDAGRAPH_CUPTI_DEFAULT_PATH
#define CUDAGRAPH_CUPTI_DEFAULT_PATH "libcupti.so"
#endif

namespace cudagraph {
namespace harness {
namespace {

/// CUPTI and driver entry points, looked up at run time so the library
/// links neither (it is also preloaded into processes that never use CUDA).
struct CudaApis {
  decltype(&cuptiSubscribe) Subscribe = nullptr;
  decltype(&cuptiSubscribe_v2) SubscribeV2 = nullptr;
  decltype(&cuptiEnableCallback) EnableCallback = nullptr;
  decltype(&cuptiEnableDomain) EnableDomain = nullptr;
  decltype(&cuptiGetResultString) ResultString = nullptr;
  decltype(&cuptiGetVersion) GetVersion = nullptr;
  using CaptureInfoV3Fn = CUresult (*)(CUstream, CUstreamCaptureStatus *,
                                       cuuint64_t *, CUgraph *,
                                       const CUgraphNode **,
                                       const CUgraphEdgeData **, size_t *);
  using IsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus *);
  CaptureInfoV3Fn CaptureInfo = nullptr;
  IsCapturingFn IsCapturing = nullptr;
  std::string CuptiPath;

  bool loadCupti(std::string &Error) {
    void *Lib = nullptr;
    if (const char *Env = std::getenv("CUDAGRAPH_CUPTI_LIBRARY"))
      Lib = dlopen(Env, RTLD_NOW | RTLD_GLOBAL);
    // Reuse a CUPTI the process already has (PyTorch ships its own).
    for (const char *Name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
      if (!Lib)
        Lib = dlopen(Name, RTLD_NOW | RTLD_NOLOAD);
    for (const char *Name :
         {CUDAGRAPH_CUPTI_DEFAULT_PATH, "libcupti.so.13", "libcupti.so"})
      if (!Lib)
        Lib = dlopen(Name, RTLD_NOW | RTLD_GLOBAL);
    if (!Lib) {
      const char *Why = dlerror();
      Error = std::string("cannot load libcupti: ") + (Why ? Why : "?");
      return false;
    }
    Subscribe =
        reinterpret_cast<decltype(Subscribe)>(dlsym(Lib, "cuptiSubscribe"));
    SubscribeV2 = reinterpret_cast<decltype(SubscribeV2)>(
        dlsym(Lib, "cuptiSubscribe_v2"));
    EnableCallback = reinterpret_cast<decltype(EnableCallback)>(
        dlsym(Lib, "cuptiEnableCallback"));
    EnableDomain = reinterpret_cast<decltype(EnableDomain)>(
        dlsym(Lib, "cuptiEnableDomain"));
    ResultString = reinterpret_cast<decltype(ResultString)>(
        dlsym(Lib, "cuptiGetResultString"));
    GetVersion =
        reinterpret_cast<decltype(GetVersion)>(dlsym(Lib, "cuptiGetVersion"));
    Dl_info Info;
    if (Subscribe && dladdr(reinterpret_cast<void *>(Subscribe), &Info))
      CuptiPath = Info.dli_fname ? Info.dli_fname : "";
    if (!Subscribe || !EnableCallback || !EnableDomain) {
      Error = "libcupti lacks cuptiSubscribe/cuptiEnableCallback";
      return false;
    }
    return true;
  }

  void loadDriver() {
    void *Lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!Lib)
      return;
    CaptureInfo = reinterpret_cast<CaptureInfoV3Fn>(
        dlsym(Lib, "cuStreamGetCaptureInfo_v3"));
    IsCapturing =
        reinterpret_cast<IsCapturingFn>(dlsym(Lib, "cuStreamIsCapturing"));
  }

  std::string resultString(CUptiResult R) const {
    const char *S = nullptr;
    if (ResultString && ResultString(R, &S) == CUPTI_SUCCESS && S)
      return S;
    return "CUPTI error " + std::to_string(static_cast<int>(R));
  }
};

/// The open captures as JSON, kept where a fatal-signal handler can read
/// them without a lock or an allocation. Written under the tracker mutex.
class OpenCaptureSnapshot {
public:
  static constexpr size_t Capacity = 4096;
  void update(const std::string &Json, unsigned Count) {
    int Next = 1 - Current.load(std::memory_order_relaxed);
    // Too many to fit: the count is still right.
    const std::string &Text = Json.size() < Capacity ? Json : Truncated;
    std::memcpy(Text_[Next], Text.c_str(), Text.size() + 1);
    Counts[Next] = Count;
    Current.store(Next, std::memory_order_release);
  }
  const char *text() const {
    return Text_[Current.load(std::memory_order_acquire)];
  }
  unsigned count() const {
    return Counts[Current.load(std::memory_order_acquire)];
  }

private:
  const std::string Truncated = "\"too many to list\"";
  char Text_[2][Capacity] = {"[]", "[]"};
  unsigned Counts[2] = {0, 0};
  std::atomic<int> Current{0};
};

struct Harness {
  std::atomic<bool> Active{false};
  std::atomic<int> OpenCaptures{0};
  std::atomic<bool> RegionActive{false};
  bool DynamicDomains = true;
  bool ThrowsAll = false;
  bool Quiet = false;
  CudaApis Apis;
  CUpti_SubscriberHandle Subscriber = nullptr;

  std::mutex TrackerMutex;
  CaptureTracker Tracker;
  OpenCaptureSnapshot OpenSnapshot;

  std::mutex DomainMutex;
  bool DomainsOn = false;

  ReportWriter Writer;
  ReportWriter Trace;
  bool Tracing = false;
  std::string ThrowHookMode = "none";

  std::atomic<unsigned> RootCauses{0}, Escapes{0}, FrameworkErrors{0};
};

Harness &harness() {
  // Never destroyed: callbacks and throws can arrive during exit.
  static Harness *H = new Harness;
  return *H;
}

thread_local bool InCallback = false;

uint64_t threadId() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

std::string readCmdline() {
  std::ifstream In("/proc/self/cmdline", std::ios::binary);
  std::string Raw((std::istreambuf_iterator<char>(In)),
                  std::istreambuf_iterator<char>());
  std::string Json = "[";
  size_t Start = 0;
  while (Start < Raw.size()) {
    size_t End = Raw.find('\0', Start);
    if (End == std::string::npos)
      End = Raw.size();
    if (Json.size() > 1)
      Json += ',';
    appendJsonString(Json, Raw.substr(Start, End - Start));
    Start = End + 1;
  }
  return Json + "]";
}

void writeEvent(JsonObject &O) {
  O.add("pid", static_cast<int64_t>(getpid()));
  O.add("time_ns", nowNs());
  harness().Writer.writeLine(O.str());
}

/// The tracker's open captures as a JSON array. Called under TrackerMutex.
std::string openCapturesJson(const CaptureTracker &T) {
  std::string Out = "[";
  for (const CaptureTracker::OpenCapture &C : T.openCaptures()) {
    if (Out.size() > 1)
      Out += ',';
    JsonObject O;
    O.add("capture_id", C.Id);
    char Stream[32];
    std::snprintf(Stream, sizeof(Stream), "0x%llx",
                  static_cast<unsigned long long>(C.Stream));
    O.add("stream", Stream);
    O.add("mode", toString(C.Mode));
    O.add("thread", C.Thread);
    if (!C.RootCauseApi.empty()) {
      O.add("root_cause_api", C.RootCauseApi);
      O.add("root_cause_result", C.RootCauseResult);
    }
    Out += O.str();
  }
  return Out + "]";
}

/// Refreshes what a fatal signal would report. Called under TrackerMutex.
void refreshOpenSnapshot() {
  Harness &H = harness();
  H.OpenSnapshot.update(openCapturesJson(H.Tracker),
                        static_cast<unsigned>(H.Tracker.openCaptureCount()));
}

/// Writes reports with the stacks of the calling thread; called without
/// locks held, since reading Python frames takes the GIL.
void emit(std::vector<Report> &Reports) {
  Harness &H = harness();
  for (Report &R : Reports) {
    JsonObject O = toJson(R);
    static const int Anchor = 0;
    O.addRaw("stack", toJson(captureNativeStack(&Anchor)));
    std::vector<PythonFrame> Py = capturePythonStack(64);
    if (!Py.empty())
      O.addRaw("python_stack", toJson(Py));
    writeEvent(O);

    bool Root = !R.RootCauseOf.empty();
    if (Root)
      ++H.RootCauses;
    if (R.Kind == ReportKind::Escape)
      ++H.Escapes;
    if (R.Kind == ReportKind::FrameworkError)
      ++H.FrameworkErrors;
    if (H.Quiet || !(Root || R.Kind == ReportKind::Escape ||
                     R.Kind == ReportKind::FrameworkError))
      continue;
    // Python frames already carry a line; native ones get theirs from
    // cudagraph-symbolize after the run.
    std::string Where;
    for (const PythonFrame &F : Py) {
      if (F.File.find("/torch/") != std::string::npos || F.File.empty() ||
          F.File[0] == '<')
        continue;
      Where = " at " + F.File + ":" + std::to_string(F.Line);
      break;
    }
    if (Root)
      std::fprintf(stderr,
                   "cudagraph-harness: capture %llu invalidated by %s "
                   "(%d %s)%s\n",
                   static_cast<unsigned long long>(R.RootCauseOf.front()),
                   R.Api.c_str(), R.Result, captureErrorName(R.Result),
                   Where.c_str());
    else if (R.Kind == ReportKind::Escape)
      std::fprintf(stderr,
                   "cudagraph-harness: %s ran on the %s stream during "
                   "capture, outside the graph%s\n",
                   R.Api.c_str(), toString(R.Stream.Kind), Where.c_str());
    else
      std::fprintf(
          stderr, "cudagraph-harness: %s thrown during capture: %s%s\n",
          R.ExceptionType.c_str(),
          R.Message.substr(0, R.Message.find('\n')).c_str(), Where.c_str());
  }
}

/// While idle only the driver's capture begin/end callbacks are on: every
/// runtime call goes through the runtime and then the driver, so that is
/// enough to see a capture begin, and with no runtime callback enabled
/// CUPTI leaves runtime calls alone.
void enableIdleCallbacks() {
  Harness &H = harness();
  for (uint32_t Cbid : controlCallbackIds(ApiDomain::Driver))
    H.Apis.EnableCallback(1, H.Subscriber, CUPTI_CB_DOMAIN_DRIVER_API, Cbid);
}

void setDomains(bool On) {
  Harness &H = harness();
  for (CUpti_CallbackDomain D :
       {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API})
    H.Apis.EnableDomain(On ? 1 : 0, H.Subscriber, D);
  if (!On)
    enableIdleCallbacks();
  H.DomainsOn = On;
}

/// Switches the full domains on while captures are open. A thread that
/// finds another one switching leaves it to that one, which re-checks.
void syncDomains() {
  Harness &H = harness();
  if (!H.DynamicDomains)
    return;
  std::unique_lock<std::mutex> Lock(H.DomainMutex, std::try_to_lock);
  if (!Lock.owns_lock())
    return;
  while (H.DomainsOn != (H.OpenCaptures.load() > 0)) {
    bool On = !H.DomainsOn;
    setDomains(On);
    if (!On) {
      std::lock_guard<std::mutex> TrackerLock(H.TrackerMutex);
      H.Tracker.dropInFlightCalls();
    }
  }
}

StreamState queryStream(StreamState S) {
  Harness &H = harness();
  if (S.Kind == StreamKind::None)
    return S;
  if (S.Kind == StreamKind::Legacy) {
    S.Status = CaptureStatus::None; // The legacy stream never captures.
    return S;
  }
  CUstream Stream = S.Kind == StreamKind::PerThread
                        ? CU_STREAM_PER_THREAD
                        : reinterpret_cast<CUstream>(S.Handle);
  CUstreamCaptureStatus Status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t Id = 0;
  CUresult R = CUDA_ERROR_NOT_SUPPORTED;
  if (H.Apis.CaptureInfo)
    R = H.Apis.CaptureInfo(Stream, &Status, &Id, nullptr, nullptr, nullptr,
                           nullptr);
  else if (H.Apis.IsCapturing)
    R = H.Apis.IsCapturing(Stream, &Status);
  if (R != CUDA_SUCCESS)
    return S;
  S.CaptureId = Id;
  S.Status = Status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? CaptureStatus::Active
             : Status == CU_STREAM_CAPTURE_STATUS_INVALIDATED
                 ? CaptureStatus::Invalidated
                 : CaptureStatus::None;
  return S;
}

void record(const ApiEvent &E) {
  Harness &H = harness();
  if (H.Tracing)
    H.Trace.writeLine(toJson(E).str());
}

void onApi(ApiDomain Domain, CUpti_CallbackId Cbid,
           const CUpti_CallbackData &Data) {
  Harness &H = harness();
  const ApiInfo &Info = apiInfo(Domain, Cbid);
  bool Control = Info.Role == ApiRole::CaptureBegin ||
                 Info.Role == ApiRole::CaptureEnd ||
                 Info.Role == ApiRole::ModeExchange;
  // The path every call takes while nothing is captured (only reached when
  // CUDAGRAPH_HARNESS_CALLBACKS=all, or on a straggling callback).
  if (!Control && H.OpenCaptures.load(std::memory_order_relaxed) == 0)
    return;

  ApiEvent E;
  E.Thread = threadId();
  E.Domain = Domain;
  E.Cbid = Cbid;
  E.Name = Data.functionName ? Data.functionName : "?";
  E.Role = Info.Role;
  E.IsExit = Data.callbackSite == CUPTI_API_EXIT;
  if (E.IsExit && Data.functionReturnValue)
    E.Result = Domain == ApiDomain::Runtime
                   ? static_cast<int>(
                         *static_cast<cudaError_t *>(Data.functionReturnValue))
                   : static_cast<int>(
                         *static_cast<CUresult *>(Data.functionReturnValue));

  switch (Info.Role) {
  case ApiRole::CaptureBegin:
    E.Stream = decodeStream(Info, Data.functionParams);
    E.Mode = decodeMode(Info, Data.functionParams);
    if (E.IsExit && E.Result == 0)
      E.Stream = queryStream(E.Stream);
    else if (!E.IsExit)
      installThrowHook(); // Objects loaded since the last capture.
    break;
  case ApiRole::CaptureEnd:
    E.Stream = decodeStream(Info, Data.functionParams);
    // After the call the stream no longer knows its capture; ask before.
    if (!E.IsExit) {
      E.Stream = queryStream(E.Stream);
      if (Data.correlationData)
        *Data.correlationData = E.Stream.CaptureId;
    } else if (Data.correlationData) {
      E.Stream.CaptureId = *Data.correlationData;
    }
    break;
  case ApiRole::Work:
    // On failure too: an error on a capturing stream belongs to that
    // stream's capture.
    if (E.IsExit)
      E.Stream = queryStream(decodeStream(Info, Data.functionParams));
    break;
  case ApiRole::ModeExchange:
  case ApiRole::Other:
    break;
  }

  std::vector<Report> Reports;
  bool Idle = false;
  {
    std::lock_guard<std::mutex> Lock(H.TrackerMutex);
    record(E);
    Reports = H.Tracker.onApi(E);
    int Count = static_cast<int>(H.Tracker.openCaptureCount());
    if (Control || !Reports.empty() || Count != H.OpenCaptures.load())
      refreshOpenSnapshot();
    H.OpenCaptures.store(Count);
    Idle = H.Tracker.threadIdle(E.Thread);
  }
  // Switch only once the outermost call returned: switching off inside
  // cudaStreamEndCapture would lose its exit, and with it the report.
  if (E.IsExit && Idle && (Control || H.OpenCaptures.load() == 0))
    syncDomains();
  if (!Reports.empty())
    emit(Reports);
}

void CUPTIAPI onCallback(void *, CUpti_CallbackDomain Domain,
                         CUpti_CallbackId Cbid, const void *Data) {
  // Our own driver queries call back into us; ignore them.
  if (InCallback || !Data)
    return;
  InCallback = true;
  switch (Domain) {
  case CUPTI_CB_DOMAIN_RUNTIME_API:
    onApi(ApiDomain::Runtime, Cbid,
          *static_cast<const CUpti_CallbackData *>(Data));
    break;
  case CUPTI_CB_DOMAIN_DRIVER_API:
    onApi(ApiDomain::Driver, Cbid,
          *static_cast<const CUpti_CallbackData *>(Data));
    break;
  default:
    break;
  }
  InCallback = false;
}

void writeSummary() {
  Harness &H = harness();
  if (!H.Active.load())
    return;
  std::string Open;
  std::vector<CaptureTracker::OpenCapture> Left;
  {
    std::lock_guard<std::mutex> Lock(H.TrackerMutex);
    Open = openCapturesJson(H.Tracker);
    Left = H.Tracker.openCaptures();
  }
  JsonObject O;
  O.add("event", "harness_end");
  O.add("root_causes", H.RootCauses.load());
  O.add("escapes", H.Escapes.load());
  O.add("framework_errors", H.FrameworkErrors.load());
  // Captures begun and never ended: the program exited inside them.
  O.addRaw("open_captures", Open);
  writeEvent(O);
  if (!H.Quiet)
    for (const CaptureTracker::OpenCapture &C : Left)
      std::fprintf(
          stderr,
          "cudagraph-harness: the program exited with capture %llu "
          "still open (%s mode, begun by thread %llu); its end-capture "
          "never ran\n",
          static_cast<unsigned long long>(C.Id), toString(C.Mode),
          static_cast<unsigned long long>(C.Thread));
  if (!H.Quiet && (H.RootCauses || H.Escapes || H.FrameworkErrors))
    std::fprintf(stderr,
                 "cudagraph-harness: %u capture root cause(s), %u escape(s), "
                 "%u framework error(s); report: %s\n",
                 H.RootCauses.load(), H.Escapes.load(),
                 H.FrameworkErrors.load(), H.Writer.path().c_str());
}

//===----------------------------------------------------------------------===//
// The target dies, forks or execs.
//
// A fatal signal writes one target_signal event (the open captures come
// from OpenSnapshot, built beforehand, since a handler may not lock or
// allocate), then hands the signal on: to the handler the program had
// installed, or to the default action. exec() needs nothing: the report
// descriptor is close-on-exec and the new image, if it uses CUDA, starts a
// new harness on the same file ("%p" keeps the pid). A forked child starts
// with no capture open, since the parent's captures are not its own.
//===----------------------------------------------------------------------===//

constexpr int FatalSignals[] = {SIGSEGV, SIGBUS,  SIGFPE,
                                SIGILL,  SIGABRT, SIGTERM};
struct sigaction PreviousActions[NSIG];
std::atomic<bool> SignalReported[NSIG];

const char *signalName(int Sig) {
  switch (Sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  case SIGABRT:
    return "SIGABRT";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "signal";
  }
}

/// Appends to a fixed buffer; async-signal-safe.
class SignalText {
public:
  SignalText &operator<<(const char *S) {
    while (*S && Size + 1 < sizeof(Buffer))
      Buffer[Size++] = *S++;
    return *this;
  }
  SignalText &operator<<(uint64_t V) {
    char Digits[24];
    int N = 0;
    do {
      Digits[N++] = static_cast<char>('0' + V % 10);
      V /= 10;
    } while (V);
    while (N && Size + 1 < sizeof(Buffer))
      Buffer[Size++] = Digits[--N];
    return *this;
  }
  const char *data() const { return Buffer; }
  size_t size() const { return Size; }

private:
  char Buffer[OpenCaptureSnapshot::Capacity + 512];
  size_t Size = 0;
};

void onFatalSignal(int Sig, siginfo_t *Info, void *Context) {
  int SavedErrno = errno;
  Harness &H = harness();
  if (Sig > 0 && Sig < NSIG && !SignalReported[Sig].exchange(true)) {
    struct timespec Now;
    clock_gettime(CLOCK_REALTIME, &Now);
    SignalText Line;
    Line << "{\"event\":\"target_signal\",\"signal\":"
         << static_cast<uint64_t>(Sig) << ",\"name\":\"" << signalName(Sig)
         << "\",\"thread\":" << threadId()
         << ",\"open_captures\":" << H.OpenSnapshot.text()
         << ",\"pid\":" << static_cast<uint64_t>(getpid()) << ",\"time_ns\":"
         << static_cast<uint64_t>(Now.tv_sec) * 1000000000ull +
                static_cast<uint64_t>(Now.tv_nsec)
         << "}\n";
    H.Writer.writeFromSignal(Line.data(), Line.size());
    if (!H.Quiet) {
      SignalText Say;
      Say << "cudagraph-harness: the program got " << signalName(Sig)
          << " with " << static_cast<uint64_t>(H.OpenSnapshot.count())
          << " capture(s) open; report: " << H.Writer.path().c_str() << "\n";
      ssize_t Ignored = ::write(STDERR_FILENO, Say.data(), Say.size());
      (void)Ignored;
    }
  }
  const struct sigaction &Old = PreviousActions[Sig];
  if ((Old.sa_flags & SA_SIGINFO) && Old.sa_sigaction) {
    Old.sa_sigaction(Sig, Info, Context);
  } else if (!(Old.sa_flags & SA_SIGINFO) && Old.sa_handler != SIG_DFL) {
    if (Old.sa_handler != SIG_IGN)
      Old.sa_handler(Sig);
  } else {
    // The default action: restore it; the signal, raised again, arrives
    // as soon as this handler returns (a fault also recurs by itself).
    struct sigaction Default;
    std::memset(&Default, 0, sizeof(Default));
    Default.sa_handler = SIG_DFL;
    sigemptyset(&Default.sa_mask);
    sigaction(Sig, &Default, nullptr);
    raise(Sig);
  }
  errno = SavedErrno;
}

void installSignalHandlers() {
  for (int Sig : FatalSignals) {
    struct sigaction Action;
    std::memset(&Action, 0, sizeof(Action));
    Action.sa_sigaction = onFatalSignal;
    Action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&Action.sa_mask);
    sigaction(Sig, &Action, &PreviousActions[Sig]);
  }
}

void beforeFork() {
  Harness &H = harness();
  H.TrackerMutex.lock();
  H.Writer.lock();
  H.Trace.lock();
}

void afterForkInParent() {
  Harness &H = harness();
  H.Trace.unlock();
  H.Writer.unlock();
  H.TrackerMutex.unlock();
}

void afterForkInChild() {
  Harness &H = harness();
  uint64_t Inherited = H.Tracker.openCaptureCount();
  H.Tracker = CaptureTracker();
  H.OpenCaptures.store(0);
  H.RegionActive.store(false);
  H.RootCauses.store(0);
  H.Escapes.store(0);
  H.FrameworkErrors.store(0);
  refreshOpenSnapshot();
  H.Trace.unlock();
  H.Writer.unlock();
  H.TrackerMutex.unlock();
  JsonObject O;
  O.add("event", "fork_child");
  O.add("parent_pid", static_cast<int64_t>(getppid()));
  // The parent's captures stay the parent's; the child cannot end them.
  O.add("parent_open_captures", Inherited);
  writeEvent(O);
}

bool envIs(const char *Name, const char *Value) {
  const char *V = std::getenv(Name);
  return V && std::strcmp(V, Value) == 0;
}

void reportSetupFailure(const char *Event, const std::string &Message,
                        const std::string &Holder) {
  std::fprintf(stderr,
               "cudagraph-harness: %s; the program runs on without the "
               "harness\n",
               Message.c_str());
  JsonObject O;
  O.add("event", Event);
  O.add("message", Message);
  if (!Holder.empty())
    O.add("holder", Holder);
  writeEvent(O);
}

void initialize() {
  Harness &H = harness();
  // Loaded but inert: lets the overhead benchmark tell the cost of CUPTI
  // from the cost of loading this library.
  if (envIs("CUDAGRAPH_HARNESS_CALLBACKS", "off"))
    return;
  const char *Output = std::getenv("CUDAGRAPH_HARNESS_OUTPUT");
  if (!H.Writer.open(Output ? Output : "cudagraph-harness.%p.jsonl"))
    return;
  if (const char *TracePath = std::getenv("CUDAGRAPH_HARNESS_TRACE"))
    H.Tracing = H.Trace.open(TracePath);
  H.DynamicDomains = !envIs("CUDAGRAPH_HARNESS_CALLBACKS", "all");
  H.ThrowsAll = envIs("CUDAGRAPH_HARNESS_THROWS", "all");
  H.Quiet = envIs("CUDAGRAPH_HARNESS_QUIET", "1");

  std::string Error;
  if (!H.Apis.loadCupti(Error)) {
    reportSetupFailure("harness_error", Error, "");
    return;
  }

  CUptiResult R;
  char Holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {0};
  if (H.Apis.SubscribeV2) {
    CUpti_SubscriberParams Params;
    std::memset(&Params, 0, sizeof(Params));
    Params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    Params.subscriberName = "cudagraph-harness";
    Params.oldSubscriberName = Holder;
    Params.oldSubscriberSize = sizeof(Holder) - 1;
    R = H.Apis.SubscribeV2(&H.Subscriber, onCallback, nullptr, &Params);
  } else {
    R = H.Apis.Subscribe(&H.Subscriber, onCallback, nullptr);
  }
  if (R == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    std::string Who = "another CUPTI subscriber";
    if (Holder[0])
      Who += std::string(" (\"") + Holder + "\")";
    reportSetupFailure(
        "subscriber_conflict",
        Who + " already holds CUPTI, as a profiler such as Nsight or the "
              "PyTorch profiler does; capture hazards are not recorded in "
              "this process",
        Holder);
    return;
  }
  if (R != CUPTI_SUCCESS) {
    reportSetupFailure("harness_error",
                       "cuptiSubscribe failed: " + H.Apis.resultString(R), "");
    return;
  }

  if (!H.DynamicDomains) {
    H.Apis.EnableDomain(1, H.Subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    H.Apis.EnableDomain(1, H.Subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  } else {
    for (uint32_t Cbid : controlCallbackIds(ApiDomain::Driver)) {
      CUptiResult ER = H.Apis.EnableCallback(1, H.Subscriber,
                                             CUPTI_CB_DOMAIN_DRIVER_API, Cbid);
      if (ER != CUPTI_SUCCESS) {
        reportSetupFailure(
            "harness_error",
            "cuptiEnableCallback failed: " + H.Apis.resultString(ER), "");
        return;
      }
    }
  }
  H.Apis.loadDriver();
  H.ThrowHookMode = installThrowHook();

  uint32_t CuptiVersion = 0;
  if (H.Apis.GetVersion)
    H.Apis.GetVersion(&CuptiVersion);
  JsonObject O;
  O.add("event", "harness_start");
  O.add("tool", "cudagraph-inject");
  O.add("version", CUDAGRAPH_HARNESS_VERSION);
  O.addRaw("argv", readCmdline());
  O.add("cupti", H.Apis.CuptiPath);
  O.add("cupti_api_version", static_cast<uint64_t>(CuptiVersion));
  O.add("callbacks", H.DynamicDomains ? "capture" : "all");
  O.add("throw_hook", H.ThrowHookMode);
  O.addBool("signals", !envIs("CUDAGRAPH_HARNESS_SIGNALS", "0"));
  writeEvent(O);
  H.Active.store(true);
  std::atexit(writeSummary);
  pthread_atfork(beforeFork, afterForkInParent, afterForkInChild);
  if (!envIs("CUDAGRAPH_HARNESS_SIGNALS", "0"))
    installSignalHandlers();
}

} // namespace

void noteCxxThrow(void *Object, std::type_info *Type) {
  Harness &H = harness();
  if (!H.Active.load(std::memory_order_relaxed) || !Type)
    return;
  if (H.OpenCaptures.load(std::memory_order_relaxed) == 0 &&
      !H.RegionActive.load(std::memory_order_relaxed) && !H.ThrowsAll)
    return;
  ThrowEvent E;
  E.Thread = threadId();
  E.Type = demangle(Type->name());
  // Only a std::exception has a message; __do_catch also adjusts the
  // pointer to the std::exception base.
  void *Adjusted = Object;
  if (typeid(std::exception).__do_catch(Type, &Adjusted, 1)) {
    std::string What = static_cast<std::exception *>(Adjusted)->what();
    // libtorch appends where it threw and a C++ backtrace; the stack in
    // the report says that better.
    for (const char *Tail : {"\nException raised from", "\nframe #"}) {
      size_t At = What.find(Tail);
      if (At != std::string::npos)
        What.resize(At);
    }
    E.Message = What.substr(0, 2000);
  } else if (H.OpenCaptures.load() == 0) {
    return; // Not a message we can read, and nothing is being captured.
  }
  std::vector<Report> Reports;
  {
    std::lock_guard<std::mutex> Lock(H.TrackerMutex);
    if (H.Tracing)
      H.Trace.writeLine(toJson(E).str());
    Reports = H.Tracker.onThrow(E);
  }
  emit(Reports);
}

} // namespace harness
} // namespace cudagraph

using namespace cudagraph::harness;

extern "C" CUDAGRAPH_EXPORT int InitializeInjection() {
  static std::once_flag Once;
  std::call_once(Once, initialize);
  return 1;
}

extern "C" CUDAGRAPH_EXPORT int cudagraphHarnessControlVersion() {
  return CUDAGRAPH_HARNESS_CONTROL_VERSION;
}

extern "C" CUDAGRAPH_EXPORT void cudagraphHarnessSetRegion(const char *Name) {
  Harness &H = harness();
  std::string Region = Name ? Name : "";
  {
    std::lock_guard<std::mutex> Lock(H.TrackerMutex);
    H.Tracker.setRegion(Region);
  }
  H.RegionActive.store(!Region.empty());
}

extern "C" CUDAGRAPH_EXPORT void cudagraphHarnessWrite(const char *Json) {
  if (Json && *Json)
    harness().Writer.writeLine(Json);
}

extern "C" CUDAGRAPH_EXPORT int
cudagraphHarnessRegionStats(CudagraphRegionStats *Out) {
  Harness &H = harness();
  if (!Out || !H.Active.load())
    return 1;
  std::lock_guard<std::mutex> Lock(H.TrackerMutex);
  const RegionStats &S = H.Tracker.regionStats();
  std::memset(Out, 0, sizeof(*Out));
  Out->CaptureErrors = S.CaptureErrors;
  Out->Escapes = S.Escapes;
  Out->FrameworkErrors = S.FrameworkErrors;
  Out->RootCauseResult = S.FirstRootCauseResult;
  std::snprintf(Out->RootCauseApi, sizeof(Out->RootCauseApi), "%s",
                S.FirstRootCauseApi.c_str());
  std::snprintf(Out->EscapeApi, sizeof(Out->EscapeApi), "%s",
                S.FirstEscapeApi.c_str());
  return 0;
}
