//===--- ApiTable.h - what each CUPTI callback id means to us ---*- C++ -*-===//
//
// Maps runtime and driver callback ids to an ApiRole and says where the call
// keeps its stream, so the callback can decode a call with a table lookup.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_HARNESS_INJECT_APITABLE_H
#define CUDAGRAPH_HARNESS_INJECT_APITABLE_H

#include "cudagraph/harness/Events.h"

#include <cstdint>
#include <vector>

namespace cudagraph {
namespace harness {

struct ApiInfo {
  enum class StreamAt : uint8_t {
    Nowhere,
    Field,    ///< A stream parameter at Offset.
    Config,   ///< A launch config pointer at Offset; stream at ConfigOffset.
    Implicit, ///< No stream parameter: the default stream ImplicitKind.
    First,    ///< Capture begin/end: the first parameter.
  };
  ApiRole Role = ApiRole::Other;
  StreamAt Stream = StreamAt::Nowhere;
  /// Stream 0 means the per-thread default stream (a _ptsz entry point).
  bool PerThreadDefault = false;
  StreamKind ImplicitKind = StreamKind::Legacy;
  uint16_t Offset = 0;
  uint16_t ConfigOffset = 0;
  /// Capture begin: offset of the mode parameter; 0 when there is none.
  uint16_t ModeOffset = 0;
};

const ApiInfo &apiInfo(ApiDomain Domain, uint32_t Cbid);

/// The callback ids whose callbacks stay on even while no capture is open.
std::vector<uint32_t> controlCallbackIds(ApiDomain Domain);

/// Decodes the stream a call targets (handle and kind; status is left
/// Unknown for the caller to query).
StreamState decodeStream(const ApiInfo &Info, const void *Params);
/// Decodes the capture mode a begin-capture call asks for.
CaptureMode decodeMode(const ApiInfo &Info, const void *Params);

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_INJECT_APITABLE_H
