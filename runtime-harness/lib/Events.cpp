//===--- Events.cpp - what the injection observes and reports -------------===//

#include "cudagraph/harness/Events.h"
#include "cudagraph/harness/Json.h"

namespace cudagraph {
namespace harness {

bool isCaptureError(int Result) { return Result >= 900 && Result <= 908; }

const char *captureErrorName(int Result) {
  switch (Result) {
  case 900:
    return "cudaErrorStreamCaptureUnsupported";
  case 901:
    return "cudaErrorStreamCaptureInvalidated";
  case 902:
    return "cudaErrorStreamCaptureMerge";
  case 903:
    return "cudaErrorStreamCaptureUnmatched";
  case 904:
    return "cudaErrorStreamCaptureUnjoined";
  case 905:
    return "cudaErrorStreamCaptureIsolation";
  case 906:
    return "cudaErrorStreamCaptureImplicit";
  case 907:
    return "cudaErrorCapturedEvent";
  case 908:
    return "cudaErrorStreamCaptureWrongThread";
  default:
    return "";
  }
}

const char *toString(ApiDomain D) {
  return D == ApiDomain::Runtime ? "runtime" : "driver";
}

const char *toString(ApiRole R) {
  switch (R) {
  case ApiRole::Other:
    return "other";
  case ApiRole::CaptureBegin:
    return "capture-begin";
  case ApiRole::CaptureEnd:
    return "capture-end";
  case ApiRole::Work:
    return "work";
  case ApiRole::ModeExchange:
    return "mode-exchange";
  }
  return "other";
}

const char *toString(CaptureMode M) {
  switch (M) {
  case CaptureMode::Global:
    return "global";
  case CaptureMode::ThreadLocal:
    return "thread-local";
  case CaptureMode::Relaxed:
    return "relaxed";
  case CaptureMode::Unknown:
    return "unknown";
  }
  return "unknown";
}

const char *toString(StreamKind K) {
  switch (K) {
  case StreamKind::None:
    return "none";
  case StreamKind::Legacy:
    return "legacy";
  case StreamKind::PerThread:
    return "per-thread";
  case StreamKind::Explicit:
    return "explicit";
  }
  return "none";
}

const char *toString(CaptureStatus S) {
  switch (S) {
  case CaptureStatus::Unknown:
    return "unknown";
  case CaptureStatus::None:
    return "none";
  case CaptureStatus::Active:
    return "active";
  case CaptureStatus::Invalidated:
    return "invalidated";
  }
  return "unknown";
}

const char *toString(ReportKind K) {
  switch (K) {
  case ReportKind::CaptureBegin:
    return "capture_begin";
  case ReportKind::CaptureEnd:
    return "capture_end";
  case ReportKind::CaptureError:
    return "capture_error";
  case ReportKind::Escape:
    return "escape";
  case ReportKind::FrameworkError:
    return "framework_error";
  }
  return "capture_error";
}

template <typename EnumT, size_t N>
static bool parseEnum(std::string_view S, EnumT &Out,
                      const EnumT (&Values)[N]) {
  for (EnumT V : Values) {
    if (S == toString(V)) {
      Out = V;
      return true;
    }
  }
  return false;
}

bool parseApiDomain(std::string_view S, ApiDomain &Out) {
  static const ApiDomain Values[] = {ApiDomain::Runtime, ApiDomain::Driver};
  return parseEnum(S, Out, Values);
}

bool parseApiRole(std::string_view S, ApiRole &Out) {
  static const ApiRole Values[] = {ApiRole::Other, ApiRole::CaptureBegin,
                                   ApiRole::CaptureEnd, ApiRole::Work,
                                   ApiRole::ModeExchange};
  return parseEnum(S, Out, Values);
}

bool parseCaptureMode(std::string_view S, CaptureMode &Out) {
  static const CaptureMode Values[] = {CaptureMode::Global,
                                       CaptureMode::ThreadLocal,
                                       CaptureMode::Relaxed,
                                       CaptureMode::Unknown};
  return parseEnum(S, Out, Values);
}

bool parseStreamKind(std::string_view S, StreamKind &Out) {
  static const StreamKind Values[] = {StreamKind::None, StreamKind::Legacy,
                                      StreamKind::PerThread,
                                      StreamKind::Explicit};
  return parseEnum(S, Out, Values);
}

bool parseCaptureStatus(std::string_view S, CaptureStatus &Out) {
  static const CaptureStatus Values[] = {
      CaptureStatus::Unknown, CaptureStatus::None, CaptureStatus::Active,
      CaptureStatus::Invalidated};
  return parseEnum(S, Out, Values);
}

static void addStream(JsonObject &O, const StreamState &S) {
  O.add("stream_kind", toString(S.Kind));
  if (S.Kind == StreamKind::Explicit)
    O.add("stream", hexString(S.Handle));
  if (S.Status != CaptureStatus::Unknown)
    O.add("stream_capture", toString(S.Status));
}

JsonObject toJson(const Report &R) {
  JsonObject O;
  O.add("event", toString(R.Kind));
  O.add("seq", R.Seq);
  O.add("thread", R.Thread);
  if (!R.Region.empty())
    O.add("region", R.Region);
  if (!R.Api.empty()) {
    O.add("api", R.Api);
    O.add("domain", toString(R.Domain));
  }
  if (R.Kind != ReportKind::FrameworkError &&
      R.Kind != ReportKind::CaptureBegin) {
    O.add("result", R.Result);
    if (isCaptureError(R.Result))
      O.add("result_name", captureErrorName(R.Result));
  }
  if (!R.InnerApi.empty()) {
    O.add("driver_api", R.InnerApi);
    if (R.InnerResult)
      O.add("driver_result", R.InnerResult);
  }
  if (R.Kind != ReportKind::FrameworkError)
    addStream(O, R.Stream);
  O.add("captures", R.Captures);
  O.add("capture_mode", toString(R.Mode));
  if (R.Kind == ReportKind::CaptureError || R.Kind == ReportKind::CaptureEnd) {
    O.addBool("root_cause", !R.RootCauseOf.empty());
    if (!R.RootCauseOf.empty())
      O.add("root_cause_of", R.RootCauseOf);
    O.addBool("echo", R.Echo);
  }
  if (R.RootCauseSeq) {
    O.add("root_cause_seq", R.RootCauseSeq);
    O.add("root_cause_api", R.RootCauseApi);
    O.add("root_cause_result", R.RootCauseResult);
  }
  if (R.Kind == ReportKind::FrameworkError) {
    O.add("exception_type", R.ExceptionType);
    O.add("message", R.Message);
  }
  if (R.Hazard) {
    O.add("hazard", R.Hazard->Id);
    O.add("check", R.Hazard->Check);
  }
  return O;
}

JsonObject toJson(const ApiEvent &E) {
  JsonObject O;
  O.add("kind", E.IsExit ? "exit" : "enter");
  O.add("thread", E.Thread);
  O.add("domain", toString(E.Domain));
  O.add("cbid", static_cast<uint64_t>(E.Cbid));
  O.add("name", E.Name);
  O.add("role", toString(E.Role));
  if (E.IsExit)
    O.add("result", E.Result);
  if (E.Stream.Kind != StreamKind::None) {
    O.add("stream_kind", toString(E.Stream.Kind));
    O.add("stream", hexString(E.Stream.Handle));
  }
  if (E.Stream.Status != CaptureStatus::Unknown)
    O.add("stream_capture", toString(E.Stream.Status));
  if (E.Stream.CaptureId)
    O.add("capture_id", E.Stream.CaptureId);
  if (E.Mode != CaptureMode::Unknown)
    O.add("mode", toString(E.Mode));
  return O;
}

JsonObject toJson(const ThrowEvent &E) {
  JsonObject O;
  O.add("kind", "throw");
  O.add("thread", E.Thread);
  O.add("type", E.Type);
  O.add("message", E.Message);
  return O;
}

bool eventFromJson(const JsonValue &V, ApiEvent &Api, ThrowEvent &Throw,
                   bool &IsThrow, std::string &Error) {
  std::string Kind = V.getString("kind");
  if (Kind == "throw") {
    IsThrow = true;
    Throw = ThrowEvent();
    Throw.Thread = static_cast<uint64_t>(V.getInt("thread"));
    Throw.Type = V.getString("type");
    Throw.Message = V.getString("message");
    return true;
  }
  if (Kind != "enter" && Kind != "exit") {
    Error = "unknown event kind '" + Kind + "'";
    return false;
  }
  IsThrow = false;
  Api = ApiEvent();
  Api.IsExit = Kind == "exit";
  Api.Thread = static_cast<uint64_t>(V.getInt("thread"));
  Api.Cbid = static_cast<uint32_t>(V.getInt("cbid"));
  Api.Name = V.getString("name");
  if (Api.Name.empty()) {
    Error = "event without a name";
    return false;
  }
  Api.Result = static_cast<int>(V.getInt("result"));
  if (!parseApiDomain(V.getString("domain", "runtime"), Api.Domain) ||
      !parseApiRole(V.getString("role", "other"), Api.Role) ||
      !parseStreamKind(V.getString("stream_kind", "none"), Api.Stream.Kind) ||
      !parseCaptureStatus(V.getString("stream_capture", "unknown"),
                          Api.Stream.Status) ||
      !parseCaptureMode(V.getString("mode", "unknown"), Api.Mode)) {
    Error = "unknown domain, role, stream kind, capture status or mode";
    return false;
  }
  Api.Stream.Handle = V.getHandle("stream");
  Api.Stream.CaptureId = static_cast<uint64_t>(V.getInt("capture_id"));
  return true;
}

} // namespace harness
} // namespace cudagraph
