//===--- ApiTable.cpp - what each CUPTI callback id means to us -----------===//

#include "ApiTable.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <array>
#include <cstddef>
#include <cstring>

namespace cudagraph {
namespace harness {

namespace {

constexpr size_t RuntimeSize = CUPTI_RUNTIME_TRACE_CBID_SIZE;
constexpr size_t DriverSize = CUPTI_DRIVER_TRACE_CBID_SIZE;

struct Tables {
  std::array<ApiInfo, RuntimeSize> Runtime;
  std::array<ApiInfo, DriverSize> Driver;

  ApiInfo &at(ApiDomain D, uint32_t Cbid) {
    return D == ApiDomain::Runtime ? Runtime[Cbid] : Driver[Cbid];
  }

  void capture(ApiDomain D, uint32_t Cbid, ApiRole Role, size_t ModeOffset,
               bool PerThread) {
    ApiInfo &I = at(D, Cbid);
    I.Role = Role;
    I.Stream = ApiInfo::StreamAt::First;
    I.ModeOffset = static_cast<uint16_t>(ModeOffset);
    I.PerThreadDefault = PerThread;
  }

  Tables() {
    using D = ApiDomain;
    // Begin and end of capture. The mode offset is never 0 because the
    // stream comes first, so 0 can mean "no mode parameter".
#define RT_CBID(Name) CUPTI_RUNTIME_TRACE_CBID_##Name
#define DRV_CBID(Name) CUPTI_DRIVER_TRACE_CBID_##Name
    capture(D::Runtime, RT_CBID(cudaStreamBeginCapture_v10000),
            ApiRole::CaptureBegin,
            offsetof(cudaStreamBeginCapture_v10000_params, mode), false);
    capture(D::Runtime, RT_CBID(cudaStreamBeginCapture_ptsz_v10000),
            ApiRole::CaptureBegin,
            offsetof(cudaStreamBeginCapture_ptsz_v10000_params, mode), true);
    capture(D::Runtime, RT_CBID(cudaStreamBeginCaptureToGraph_v12030),
            ApiRole::CaptureBegin,
            offsetof(cudaStreamBeginCaptureToGraph_v12030_params, mode), false);
    capture(D::Runtime, RT_CBID(cudaStreamBeginCaptureToGraph_ptsz_v12030),
            ApiRole::CaptureBegin,
            offsetof(cudaStreamBeginCaptureToGraph_ptsz_v12030_params, mode),
            true);
    capture(D::Runtime, RT_CBID(cudaStreamEndCapture_v10000),
            ApiRole::CaptureEnd, 0, false);
    capture(D::Runtime, RT_CBID(cudaStreamEndCapture_ptsz_v10000),
            ApiRole::CaptureEnd, 0, true);
    at(D::Runtime, RT_CBID(cudaThreadExchangeStreamCaptureMode_v10010)).Role =
        ApiRole::ModeExchange;

    capture(D::Driver, DRV_CBID(cuStreamBeginCapture), ApiRole::CaptureBegin,
            0, false);
    capture(D::Driver, DRV_CBID(cuStreamBeginCapture_ptsz),
            ApiRole::CaptureBegin, 0, true);
    capture(D::Driver, DRV_CBID(cuStreamBeginCapture_v2),
            ApiRole::CaptureBegin,
            offsetof(cuStreamBeginCapture_v2_params, mode), false);
    capture(D::Driver, DRV_CBID(cuStreamBeginCapture_v2_ptsz),
            ApiRole::CaptureBegin,
            offsetof(cuStreamBeginCapture_v2_ptsz_params, mode), true);
    capture(D::Driver, DRV_CBID(cuStreamBeginCaptureToGraph),
            ApiRole::CaptureBegin,
            offsetof(cuStreamBeginCaptureToGraph_params, mode), false);
    capture(D::Driver, DRV_CBID(cuStreamBeginCaptureToGraph_ptsz),
            ApiRole::CaptureBegin,
            offsetof(cuStreamBeginCaptureToGraph_ptsz_params, mode), true);
    capture(D::Driver, DRV_CBID(cuStreamEndCapture), ApiRole::CaptureEnd, 0,
            false);
    capture(D::Driver, DRV_CBID(cuStreamEndCapture_ptsz), ApiRole::CaptureEnd,
            0, true);
    at(D::Driver, DRV_CBID(cuThreadExchangeStreamCaptureMode)).Role =
        ApiRole::ModeExchange;

    // Work: launches, copies and memsets, from the generated table.
#define CUDAGRAPH_CBID_Runtime(Name) CUPTI_RUNTIME_TRACE_CBID_##Name
#define CUDAGRAPH_CBID_Driver(Name) CUPTI_DRIVER_TRACE_CBID_##Name
#define CUDAGRAPH_WORK_FIELD(Domain, Name, Member)                             \
  {                                                                            \
    ApiInfo &I = at(D::Domain, CUDAGRAPH_CBID_##Domain(Name));                 \
    I.Role = ApiRole::Work;                                                    \
    I.Stream = ApiInfo::StreamAt::Field;                                       \
    I.Offset = offsetof(Name##_params, Member);                                \
    I.PerThreadDefault = std::strstr(#Name, "_ptsz") != nullptr;               \
  }
#define CUDAGRAPH_WORK_CONFIG(Domain, Name, Member)                            \
  {                                                                            \
    ApiInfo &I = at(D::Domain, CUDAGRAPH_CBID_##Domain(Name));                 \
    I.Role = ApiRole::Work;                                                    \
    I.Stream = ApiInfo::StreamAt::Config;                                      \
    I.Offset = offsetof(Name##_params, config);                                \
    I.ConfigOffset =                                                           \
        D::Domain == D::Driver                                                 \
            ? static_cast<uint16_t>(offsetof(CUlaunchConfig, hStream))         \
            : static_cast<uint16_t>(offsetof(cudaLaunchConfig_t, stream));     \
    I.PerThreadDefault = std::strstr(#Name, "_ptsz") != nullptr;               \
  }
#define CUDAGRAPH_WORK_IMPLICIT(Domain, Name, Kind)                            \
  {                                                                            \
    ApiInfo &I = at(D::Domain, CUDAGRAPH_CBID_##Domain(Name));                 \
    I.Role = ApiRole::Work;                                                    \
    I.Stream = ApiInfo::StreamAt::Implicit;                                    \
    I.ImplicitKind = StreamKind::Kind;                                         \
  }
#include "WorkApis.def"
#undef CUDAGRAPH_CBID_Runtime
#undef CUDAGRAPH_CBID_Driver
#undef RT_CBID
#undef DRV_CBID
  }
};

const Tables &tables() {
  static const Tables T;
  return T;
}

} // namespace

const ApiInfo &apiInfo(ApiDomain Domain, uint32_t Cbid) {
  static const ApiInfo None;
  const Tables &T = tables();
  if (Domain == ApiDomain::Runtime)
    return Cbid < RuntimeSize ? T.Runtime[Cbid] : None;
  return Cbid < DriverSize ? T.Driver[Cbid] : None;
}

std::vector<uint32_t> controlCallbackIds(ApiDomain Domain) {
  std::vector<uint32_t> Ids;
  size_t Size = Domain == ApiDomain::Runtime ? RuntimeSize : DriverSize;
  for (uint32_t Cbid = 0; Cbid < Size; ++Cbid) {
    ApiRole Role = apiInfo(Domain, Cbid).Role;
    if (Role == ApiRole::CaptureBegin || Role == ApiRole::CaptureEnd ||
        Role == ApiRole::ModeExchange)
      Ids.push_back(Cbid);
  }
  return Ids;
}

static StreamState classify(uint64_t Handle, bool PerThreadDefault) {
  StreamState S;
  S.Handle = Handle;
  if (Handle == 0)
    S.Kind = PerThreadDefault ? StreamKind::PerThread : StreamKind::Legacy;
  else if (Handle == reinterpret_cast<uint64_t>(CU_STREAM_LEGACY))
    S.Kind = StreamKind::Legacy;
  else if (Handle == reinterpret_cast<uint64_t>(CU_STREAM_PER_THREAD))
    S.Kind = StreamKind::PerThread;
  else
    S.Kind = StreamKind::Explicit;
  return S;
}

static uint64_t readPointer(const void *Base, size_t Offset) {
  uint64_t Value = 0;
  const void *Ptr = nullptr;
  std::memcpy(&Ptr, static_cast<const char *>(Base) + Offset, sizeof(Ptr));
  Value = reinterpret_cast<uint64_t>(Ptr);
  return Value;
}

StreamState decodeStream(const ApiInfo &Info, const void *Params) {
  switch (Info.Stream) {
  case ApiInfo::StreamAt::Nowhere:
    return StreamState();
  case ApiInfo::StreamAt::Implicit: {
    StreamState S;
    S.Kind = Info.ImplicitKind;
    return S;
  }
  case ApiInfo::StreamAt::First:
    if (!Params)
      return StreamState();
    return classify(readPointer(Params, 0), Info.PerThreadDefault);
  case ApiInfo::StreamAt::Field:
    if (!Params)
      return StreamState();
    return classify(readPointer(Params, Info.Offset), Info.PerThreadDefault);
  case ApiInfo::StreamAt::Config: {
    if (!Params)
      return StreamState();
    uint64_t Config = readPointer(Params, Info.Offset);
    if (!Config)
      return StreamState();
    return classify(readPointer(reinterpret_cast<const void *>(Config),
                                Info.ConfigOffset),
                    Info.PerThreadDefault);
  }
  }
  return StreamState();
}

CaptureMode decodeMode(const ApiInfo &Info, const void *Params) {
  if (Info.Role != ApiRole::CaptureBegin)
    return CaptureMode::Unknown;
  // cuStreamBeginCapture without a mode predates modes: it captures in
  // global mode.
  if (!Info.ModeOffset || !Params)
    return CaptureMode::Global;
  int Mode = 0;
  std::memcpy(&Mode, static_cast<const char *>(Params) + Info.ModeOffset,
              sizeof(Mode));
  switch (Mode) {
  case CU_STREAM_CAPTURE_MODE_GLOBAL:
    return CaptureMode::Global;
  case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
    return CaptureMode::ThreadLocal;
  case CU_STREAM_CAPTURE_MODE_RELAXED:
    return CaptureMode::Relaxed;
  default:
    return CaptureMode::Unknown;
  }
}

} // namespace harness
} // namespace cudagraph
