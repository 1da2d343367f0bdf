//===--- CatalogNames.h - name patterns of the hazard catalog ---*- C++ -*-===//
//
// How the catalog's Names field matches a function name, shared by the static
// checks and the runtime harness (and mirrored by catalog/catalog.py).
// Header-only and free of LLVM so that the harness builds without it.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_CATALOG_CATALOGNAMES_H
#define CUDAGRAPH_CATALOG_CATALOGNAMES_H

#include <cstddef>
#include <string_view>

namespace cudagraph::catalog {

/// Wildcard match where '*' matches any run of characters.
inline bool globMatch(std::string_view Pattern, std::string_view Text) {
  size_t P = 0, T = 0, StarP = std::string_view::npos, StarT = 0;
  while (T < Text.size()) {
    if (P < Pattern.size() && Pattern[P] == '*') {
      StarP = P++;
      StarT = T;
    } else if (P < Pattern.size() && Pattern[P] == Text[T]) {
      ++P;
      ++T;
    } else if (StarP != std::string_view::npos) {
      P = StarP + 1;
      T = ++StarT;
    } else {
      return false;
    }
  }
  while (P < Pattern.size() && Pattern[P] == '*')
    ++P;
  return P == Pattern.size();
}

/// Calls \p Fn(Pattern, Excluded) for each pattern of a Names list: patterns
/// separated by '|', ';' or ',', surrounding blanks and leading "::" ignored,
/// a leading '!' marking an exclusion.
template <typename Fn> void forEachPattern(std::string_view Names, Fn &&F) {
  while (!Names.empty()) {
    size_t End = Names.find_first_of("|;,");
    std::string_view Pattern = Names.substr(0, End);
    Names = End == std::string_view::npos ? std::string_view()
                                          : Names.substr(End + 1);
    while (!Pattern.empty() &&
           (Pattern.front() == ' ' || Pattern.front() == '\t'))
      Pattern.remove_prefix(1);
    while (!Pattern.empty() &&
           (Pattern.back() == ' ' || Pattern.back() == '\t'))
      Pattern.remove_suffix(1);
    bool Excluded = !Pattern.empty() && Pattern.front() == '!';
    if (Excluded)
      Pattern.remove_prefix(1);
    while (!Pattern.empty() && Pattern.front() == ':')
      Pattern.remove_prefix(1);
    if (!Pattern.empty())
      F(Pattern, Excluded);
  }
}

/// Whether \p Name matches some included pattern of \p Names and no
/// excluded one.
inline bool namesMatch(std::string_view Names, std::string_view Name) {
  while (!Name.empty() && Name.front() == ':')
    Name.remove_prefix(1);
  bool Included = false, Excluded = false;
  forEachPattern(Names, [&](std::string_view Pattern, bool Exclude) {
    if (globMatch(Pattern, Name))
      (Exclude ? Excluded : Included) = true;
  });
  return Included && !Excluded;
}

/// Strips the versioned and per-thread-stream suffixes the CUDA headers add
/// through macros (cuMemAllocHost_v2, cudaMemcpy_ptds, ...).
inline std::string_view stripCudaApiSuffix(std::string_view Name) {
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (std::string_view Suffix : {"_ptsz", "_ptds"})
      if (Name.size() > Suffix.size() &&
          Name.substr(Name.size() - Suffix.size()) == Suffix) {
        Name.remove_suffix(Suffix.size());
        Changed = true;
      }
    size_t Under = Name.rfind("_v");
    if (Under != std::string_view::npos && Under > 0 &&
        Under + 2 < Name.size() &&
        Name.find_first_not_of("0123456789", Under + 2) ==
            std::string_view::npos) {
      Name = Name.substr(0, Under);
      Changed = true;
    }
  }
  return Name;
}

} // namespace cudagraph::catalog

#endif // CUDAGRAPH_CATALOG_CATALOGNAMES_H
