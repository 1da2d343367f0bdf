//===--- Events.h - what the injection observes and reports -----*- C++ -*-===//
//
// ApiEvent and ThrowEvent are what the CUPTI callback and the throw hook see,
// already decoded (role, target stream, capture status). Report is what the
// harness writes. Both sides are plain data so that the bookkeeping can be
// driven by recorded streams in tests, without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_HARNESS_EVENTS_H
#define CUDAGRAPH_HARNESS_EVENTS_H

#include "cudagraph/harness/Catalog.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cudagraph {
namespace harness {

class JsonObject;
class JsonValue;

enum class ApiDomain : uint8_t { Runtime, Driver };

/// What an API does, as far as capture bookkeeping cares.
enum class ApiRole : uint8_t {
  Other,
  CaptureBegin,
  CaptureEnd,
  Work, ///< Enqueues work on a stream: launch, memcpy, memset, host func.
  ModeExchange,
};

enum class CaptureMode : uint8_t { Global, ThreadLocal, Relaxed, Unknown };

enum class StreamKind : uint8_t {
  None,      ///< The call has no stream.
  Legacy,    ///< The legacy default stream (0 or cudaStreamLegacy).
  PerThread, ///< The per-thread default stream.
  Explicit,
};

enum class CaptureStatus : uint8_t { Unknown, None, Active, Invalidated };

struct StreamState {
  StreamKind Kind = StreamKind::None;
  uint64_t Handle = 0;
  CaptureStatus Status = CaptureStatus::Unknown;
  uint64_t CaptureId = 0; ///< CUDA's capture sequence id; 0 if unknown.
};

/// One runtime or driver API callback.
struct ApiEvent {
  uint64_t Thread = 0;
  ApiDomain Domain = ApiDomain::Runtime;
  uint32_t Cbid = 0;
  std::string Name;
  ApiRole Role = ApiRole::Other;
  bool IsExit = false;
  int Result = 0; ///< cudaError_t or CUresult; exit only.
  /// CaptureBegin/CaptureEnd: the capturing stream and its capture id.
  /// Work: the stream that receives the work and whether it is capturing.
  StreamState Stream;
  /// CaptureBegin: the mode asked for.
  CaptureMode Mode = CaptureMode::Unknown;
};

/// A C++ exception thrown while a capture is open (or one that talks about
/// capture, such as libtorch refusing to capture on the default stream).
struct ThrowEvent {
  uint64_t Thread = 0;
  std::string Type;
  std::string Message;
};

enum class ReportKind : uint8_t {
  CaptureBegin,
  CaptureEnd,
  CaptureError,
  Escape,
  FrameworkError,
};

/// One line of the harness's report.
struct Report {
  ReportKind Kind = ReportKind::CaptureError;
  uint64_t Seq = 0;
  uint64_t Thread = 0;
  std::string Region;

  std::string Api;
  ApiDomain Domain = ApiDomain::Runtime;
  int Result = 0;
  /// The driver call under a runtime call that returned the error or
  /// carried the work (empty when the API itself was the driver call).
  std::string InnerApi;
  int InnerResult = 0;
  StreamState Stream;

  std::vector<uint64_t> Captures;    ///< Open captures the event belongs to.
  CaptureMode Mode = CaptureMode::Unknown;
  std::vector<uint64_t> RootCauseOf; ///< Captures this event invalidated.
  /// This error only reports an earlier failure (901 after a root cause).
  bool Echo = false;
  /// For echoes, capture ends and framework errors: the seq of the root
  /// cause of the capture, 0 if none was seen.
  uint64_t RootCauseSeq = 0;
  std::string RootCauseApi;
  int RootCauseResult = 0;

  std::string ExceptionType;
  std::string Message;

  const HazardInfo *Hazard = nullptr; ///< Catalog entry for Api, if any.
};

bool isCaptureError(int Result);
/// "cudaErrorStreamCaptureUnsupported" for 900 and so on; "" otherwise.
const char *captureErrorName(int Result);

const char *toString(ApiDomain D);
const char *toString(ApiRole R);
const char *toString(CaptureMode M);
const char *toString(StreamKind K);
const char *toString(CaptureStatus S);
const char *toString(ReportKind K);

/// Parses the names written by toString; false if unknown.
bool parseApiDomain(std::string_view S, ApiDomain &Out);
bool parseApiRole(std::string_view S, ApiRole &Out);
bool parseCaptureMode(std::string_view S, CaptureMode &Out);
bool parseStreamKind(std::string_view S, StreamKind &Out);
bool parseCaptureStatus(std::string_view S, CaptureStatus &Out);

/// Serializes a report (without the stack, which only the live injection
/// knows) as one JSON object.
JsonObject toJson(const Report &R);

/// The recorded form of an API event (one line of a trace), and back.
JsonObject toJson(const ApiEvent &E);
JsonObject toJson(const ThrowEvent &E);
/// Reads a trace line; returns false with Error set if malformed.
bool eventFromJson(const JsonValue &V, ApiEvent &Api, ThrowEvent &Throw,
                   bool &IsThrow, std::string &Error);

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_EVENTS_H
