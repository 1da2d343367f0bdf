//===--- Catalog.cpp - the hazard catalog as seen from C++ ----------------===//

#include "cudagraph/harness/Catalog.h"
#include "CatalogNames.h"

#include <cstring>

namespace cudagraph {
namespace harness {

const std::vector<CheckInfo> &checks() {
  static const std::vector<CheckInfo> Checks = {
#define CUDAGRAPH_CHECK(Name, Status, Summary) {Name, #Status, Summary},
#include "Hazards.def"
  };
  return Checks;
}

const std::vector<HazardInfo> &hazards() {
  static const std::vector<HazardInfo> Hazards = {
#define CUDAGRAPH_HAZARD(Id, Check, Kind, Names, Flags, GpuVerdict, Effect,    \
                         Outcome, Instead)                                     \
  {Id, Check, #Kind, Names, #GpuVerdict, Outcome},
#include "Hazards.def"
  };
  return Hazards;
}

const HazardInfo *findHazard(std::string_view Id) {
  for (const HazardInfo &H : hazards())
    if (Id == H.Id)
      return &H;
  return nullptr;
}

const CheckInfo *findCheck(std::string_view Name) {
  for (const CheckInfo &C : checks())
    if (Name == C.Name)
      return &C;
  return nullptr;
}

bool namesMatch(std::string_view Names, std::string_view QualifiedName) {
  return catalog::namesMatch(Names, QualifiedName);
}

std::string_view baseApiName(std::string_view ApiName) {
  // Versioned and per-thread entry points ("cuMemcpyDtoH_v2_ptds",
  // "cudaStreamSynchronize_ptsz") are the same API to a reader.
  return catalog::stripCudaApiSuffix(ApiName);
}

/// Whether a hazard's Names identify an API by name alone (not a parameter
/// name, not APIs that are hazards only for some arguments).
static bool namesApis(const HazardInfo &H) {
  std::string_view Kind = H.Kind;
  return *H.Names && Kind != "PinnedFlag" && Kind != "LegacyStream";
}

const HazardInfo *hazardForApi(std::string_view ApiName) {
  std::string_view Base = baseApiName(ApiName);
  for (const HazardInfo &H : hazards())
    if (namesApis(H) &&
        (namesMatch(H.Names, ApiName) || namesMatch(H.Names, Base)))
      return &H;
  return nullptr;
}

const HazardInfo *hazardForMessage(std::string_view Message) {
  const HazardInfo *Match = nullptr;
  for (const HazardInfo &H : hazards()) {
    std::string_view Outcome = H.Outcome;
    bool Quoted = false;
    // Outcomes quote the messages libtorch throws: "\"...\"".
    for (size_t Open = Outcome.find('"'); Open != std::string_view::npos;) {
      size_t Close = Outcome.find('"', Open + 1);
      if (Close == std::string_view::npos)
        break;
      std::string_view Quote = Outcome.substr(Open + 1, Close - Open - 1);
      while (!Quote.empty() && Quote.back() == '.')
        Quote.remove_suffix(1);
      if (Quote.size() > 8 && Message.find(Quote) != std::string_view::npos)
        Quoted = true;
      Open = Outcome.find('"', Close + 1);
    }
    if (!Quoted)
      continue;
    if (Match)
      return nullptr; // Several hazards throw this message: say nothing.
    Match = &H;
  }
  return Match;
}

} // namespace harness
} // namespace cudagraph
