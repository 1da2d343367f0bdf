//===--- Catalog.h - the hazard catalog as seen from C++ --------*- C++ -*-===//
//
// The runtime harness reads catalog/Hazards.def through the X-macro, so the
// ids and check names it writes into reports are the ones the static checks
// and the docs use. Nothing here keeps a second list of hazards.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_HARNESS_CATALOG_H
#define CUDAGRAPH_HARNESS_CATALOG_H

#include <string_view>
#include <vector>

namespace cudagraph {
namespace harness {

struct CheckInfo {
  const char *Name;
  const char *Status; // "Implemented" or "Planned".
  const char *Summary;
};

struct HazardInfo {
  const char *Id;
  const char *Check;
  const char *Kind;
  const char *Names; // '|'-separated globs, '!' excludes.
  const char *GpuVerdict;
  const char *Outcome;
};

const std::vector<CheckInfo> &checks();
const std::vector<HazardInfo> &hazards();

/// The hazard with this id, or null.
const HazardInfo *findHazard(std::string_view Id);
/// The check with this name, or null.
const CheckInfo *findCheck(std::string_view Name);

/// Whether a fully qualified name matches a hazard's Names list; mirrors
/// catalog.py's name_matches (globs with '*', a leading '!' excludes).
bool namesMatch(std::string_view Names, std::string_view QualifiedName);

/// An API name without its version and per-thread suffixes
/// ("cuMemcpyDtoH_v2_ptds" -> "cuMemcpyDtoH").
std::string_view baseApiName(std::string_view ApiName);

/// The first hazard whose Names match an API name (for example
/// "cudaDeviceSynchronize" or "cuCtxSynchronize"), or null.
const HazardInfo *hazardForApi(std::string_view ApiName);

/// The one hazard whose Outcome quotes a message that Message contains
/// (libtorch's wording), or null when none or several do.
const HazardInfo *hazardForMessage(std::string_view Message);

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_CATALOG_H
