//===--- FindingLog.cpp - cudagraph-tidy ----------------------------------===//

#include "FindingLog.h"
#include "clang-tidy/GlobList.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include <algorithm>

namespace clang::tidy::cudagraph {

FindingLog &findingLog() {
  static FindingLog Log;
  return Log;
}

FindingFilters &findingFilters() {
  static FindingFilters Filters;
  return Filters;
}

const EmittedFinding *FindingLog::find(llvm::StringRef File, unsigned Offset,
                                       llvm::StringRef Check) const {
  for (const EmittedFinding &F : Findings)
    if (F.Offset == Offset && F.File == File && F.Check == Check)
      return &F;
  return nullptr;
}

std::string realPathOf(llvm::StringRef Path) {
  llvm::SmallString<256> Real;
  if (!llvm::sys::fs::real_path(Path, Real))
    return std::string(Real);
  llvm::SmallString<256> Abs(Path);
  llvm::sys::fs::make_absolute(Abs);
  llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  return std::string(Abs);
}

std::string normalizedCode(llvm::StringRef Line) {
  std::string Out;
  bool Space = false;
  for (size_t I = 0; I < Line.size(); ++I) {
    char C = Line[I];
    if (C == '/' && I + 1 < Line.size() && Line[I + 1] == '/')
      break; // a trailing comment (NOLINT added later) is not the code
    if (C == ' ' || C == '\t' || C == '\r' || C == '\n') {
      Space = !Out.empty();
      continue;
    }
    if (Space)
      Out += ' ';
    Space = false;
    Out += C;
  }
  return Out;
}

std::string fingerprintKey(llvm::StringRef Check, llvm::StringRef Hazard,
                           llvm::StringRef Function, llvm::StringRef FileName,
                           llvm::StringRef LineText) {
  return (Check + "\n" + Hazard + "\n" + Function + "\n" + FileName + "\n" +
          normalizedCode(LineText))
      .str();
}

std::string fingerprintOf(llvm::StringRef Key, unsigned Occurrence) {
  std::string Hashed = (Key + "\n").str() + std::to_string(Occurrence);
  return llvm::formatv("{0:x-16}", llvm::xxh3_64bits(Hashed)).str();
}

bool FindingFilters::loadBaseline(llvm::StringRef Path, std::string &Error) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer) {
    Error = "cannot read baseline '" + Path.str() +
            "': " + Buffer.getError().message();
    return false;
  }
  return loadBaselineText((*Buffer)->getBuffer(), Path, Error);
}

bool FindingFilters::loadBaselineText(llvm::StringRef Text,
                                      llvm::StringRef Path,
                                      std::string &Error) {
  llvm::Expected<llvm::json::Value> Parsed = llvm::json::parse(Text);
  if (!Parsed) {
    Error = "baseline '" + Path.str() +
            "' is not JSON: " + llvm::toString(Parsed.takeError());
    return false;
  }
  const llvm::json::Object *Root = Parsed->getAsObject();
  const llvm::json::Array *Findings =
      Root ? Root->getArray("findings") : nullptr;
  if (!Findings || Root->getString("tool") != "cudagraph-tidy") {
    Error = "'" + Path.str() +
            "' is not a cudagraph-tidy baseline (write one with "
            "--write-baseline)";
    return false;
  }
  for (const llvm::json::Value &F : *Findings) {
    const llvm::json::Object *O = F.getAsObject();
    std::optional<llvm::StringRef> Print =
        O ? O->getString("fingerprint") : std::nullopt;
    if (!Print) {
      Error = "baseline '" + Path.str() + "': a finding has no fingerprint";
      return false;
    }
    Baseline.insert(*Print);
  }
  HasBaseline = true;
  return true;
}

bool FindingFilters::loadChangedLines(llvm::StringRef DiffText,
                                      llvm::StringRef Root,
                                      std::string &Error) {
  std::string File;
  unsigned LineNo = 0;
  bool SawFile = false;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  DiffText.split(Lines, '\n');
  for (llvm::StringRef Line : Lines) {
    ++LineNo;
    if (Line.consume_front("+++ ")) {
      SawFile = true;
      Line = Line.split('\t').first.rtrim();
      if (Line == "/dev/null") {
        File.clear();
        continue;
      }
      Line.consume_front("b/");
      llvm::SmallString<256> Path(Root);
      llvm::sys::path::append(Path, Line);
      File = realPathOf(Path);
      Changed[File]; // a file in the diff with only deletions
      continue;
    }
    if (!Line.consume_front("@@ "))
      continue;
    // @@ -a[,b] +c[,d] @@
    size_t Plus = Line.find(" +");
    if (Plus == llvm::StringRef::npos || File.empty()) {
      if (Plus == llvm::StringRef::npos) {
        Error = "changed lines: line " + std::to_string(LineNo) +
                " is not a hunk header of a unified diff";
        return false;
      }
      continue;
    }
    llvm::StringRef New = Line.drop_front(Plus + 2).split(' ').first;
    auto [StartText, CountText] = New.split(',');
    unsigned Start = 0, Count = 1;
    if (StartText.getAsInteger(10, Start) ||
        (!CountText.empty() && CountText.getAsInteger(10, Count))) {
      Error = "changed lines: cannot read the hunk header on line " +
              std::to_string(LineNo);
      return false;
    }
    if (Count)
      Changed[File].push_back({Start, Start + Count - 1});
  }
  if (!SawFile && !DiffText.trim().empty()) {
    Error = "changed lines: no '+++ file' line; expected a unified diff "
            "(git diff -U0)";
    return false;
  }
  for (auto &[Name, Ranges] : Changed)
    llvm::sort(Ranges);
  HasChangedLines = true;
  return true;
}

bool FindingFilters::changed(llvm::StringRef RealFile, unsigned Line) const {
  auto It = Changed.find(RealFile.str());
  if (It == Changed.end())
    return false;
  for (const auto &[First, Last] : It->second)
    if (First <= Line && Line <= Last)
      return true;
  return false;
}

NolintLines::NolintLines(llvm::StringRef Text) {
  struct Open {
    unsigned Line;
    std::string Checks;
  };
  std::vector<Open> Begins;
  unsigned Line = 1;
  size_t LineStart = 0;
  for (size_t At = Text.find("NOLINT"); At != llvm::StringRef::npos;
       At = Text.find("NOLINT", At + 6)) {
    Line += Text.slice(LineStart, At).count('\n');
    LineStart = At;
    llvm::StringRef Rest = Text.drop_front(At + 6);
    enum { Same, Next, Begin, End } Kind = Same;
    if (Rest.consume_front("NEXTLINE"))
      Kind = Next;
    else if (Rest.consume_front("BEGIN"))
      Kind = Begin;
    else if (Rest.consume_front("END"))
      Kind = End;
    if (!Rest.empty() && (isalnum(Rest[0]) || Rest[0] == '_'))
      continue; // a longer word
    std::string Checks;
    if (Rest.consume_front("(")) {
      size_t Close = Rest.find(')');
      if (Close == llvm::StringRef::npos)
        continue;
      Checks = Rest.take_front(Close).str();
      if (llvm::StringRef(Checks).trim() == "*")
        Checks.clear();
    }
    switch (Kind) {
    case Same:
      Spans.push_back({Line, Line, Checks});
      break;
    case Next:
      Spans.push_back({Line + 1, Line + 1, Checks});
      break;
    case Begin:
      Begins.push_back({Line, Checks});
      break;
    case End:
      for (auto It = Begins.rbegin(); It != Begins.rend(); ++It)
        if (It->Checks == Checks) {
          Spans.push_back({It->Line, Line, Checks});
          Begins.erase(std::next(It).base());
          break;
        }
      break;
    }
  }
}

bool NolintLines::suppresses(unsigned Line, llvm::StringRef Check) const {
  for (const Span &S : Spans) {
    if (Line < S.First || Line > S.Last)
      continue;
    if (S.Checks.empty() ||
        GlobList(S.Checks, /*KeepNegativeGlobs=*/false).contains(Check))
      return true;
  }
  return false;
}

} // namespace clang::tidy::cudagraph
