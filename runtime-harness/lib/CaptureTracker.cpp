//===--- CaptureTracker.cpp - capture bookkeeping and root causes ---------===//

#include "cudagraph/harness/CaptureTracker.h"

#include <algorithm>
#include <cctype>

namespace cudagraph {
namespace harness {

static bool containsNoCase(std::string_view Haystack, std::string_view Needle) {
  auto It = std::search(Haystack.begin(), Haystack.end(), Needle.begin(),
                        Needle.end(), [](char A, char B) {
                          return std::tolower(static_cast<unsigned char>(A)) ==
                                 std::tolower(static_cast<unsigned char>(B));
                        });
  return It != Haystack.end();
}

std::vector<Report> CaptureTracker::onApi(const ApiEvent &E) {
  if (E.IsExit)
    return onExit(E);
  Frame F;
  F.Domain = E.Domain;
  F.Cbid = E.Cbid;
  F.Name = E.Name;
  F.Role = E.Role;
  Stacks[E.Thread].push_back(std::move(F));
  return {};
}

std::vector<Report> CaptureTracker::onExit(const ApiEvent &E) {
  Frame F;
  bool Found = false;
  auto StackIt = Stacks.find(E.Thread);
  if (StackIt != Stacks.end()) {
    std::vector<Frame> &Stack = StackIt->second;
    // Match from the top; frames above the match lost their exit (the
    // callback was switched off meanwhile) and are dropped.
    for (size_t I = Stack.size(); I-- > 0;) {
      if (Stack[I].Domain == E.Domain && Stack[I].Cbid == E.Cbid) {
        F = std::move(Stack[I]);
        Stack.resize(I);
        Found = true;
        break;
      }
    }
  }
  if (!Found) {
    // The enter was missed (listening started mid-call): stand alone.
    F.Domain = E.Domain;
    F.Cbid = E.Cbid;
    F.Name = E.Name;
    F.Role = E.Role;
  }
  applyOwnEffects(F, E);

  if (StackIt != Stacks.end() && !StackIt->second.empty()) {
    mergeInto(StackIt->second.back(), F, E.Result);
    return {};
  }
  if (StackIt != Stacks.end())
    Stacks.erase(StackIt);
  return finish(F, E);
}

CaptureTracker::OpenCapture *CaptureTracker::findOpen(uint64_t Id,
                                                      uint64_t Stream) {
  for (OpenCapture &C : Open)
    if (Id ? C.Id == Id : (Stream && C.Stream == Stream))
      return &C;
  return nullptr;
}

void CaptureTracker::applyOwnEffects(Frame &F, const ApiEvent &E) {
  switch (E.Role) {
  case ApiRole::CaptureBegin:
    if (E.Result != 0 || F.Begin)
      break;
    // Already open: reported by the call underneath, whose caller's enter
    // was not seen (the runtime domain was off until the capture began).
    if (findOpen(E.Stream.CaptureId, E.Stream.Handle))
      break;
    {
      OpenCapture New;
      New.Id = E.Stream.CaptureId ? E.Stream.CaptureId : NextSyntheticId++;
      New.Stream = E.Stream.Handle;
      New.Mode = E.Mode;
      New.Thread = E.Thread;
      Open.push_back(New);
      F.BeginCaptureId = New.Id;
    }
    F.Begin = InnerCall{E.Name, 0, E.Stream};
    break;
  case ApiRole::CaptureEnd:
    if (F.End)
      break;
    if (OpenCapture *C = findOpen(E.Stream.CaptureId, E.Stream.Handle)) {
      F.Ended = *C;
      LastEnded[E.Thread] = *C;
      Open.erase(Open.begin() + (C - Open.data()));
    }
    F.End = InnerCall{E.Name, E.Result, E.Stream};
    break;
  case ApiRole::Work:
    // The outermost decode wins: the runtime call names the stream the user
    // passed, the driver call underneath may only see the resolved one.
    if (E.Result == 0 && E.Stream.Kind != StreamKind::None)
      F.Work = InnerCall{E.Name, 0, E.Stream};
    break;
  case ApiRole::ModeExchange:
  case ApiRole::Other:
    break;
  }
}

void CaptureTracker::mergeInto(Frame &Parent, const Frame &Child,
                               int ChildResult) {
  if (!Parent.Error) {
    if (isCaptureError(ChildResult))
      Parent.Error = InnerCall{Child.Name, ChildResult, {}};
    else if (Child.Error)
      Parent.Error = Child.Error;
  }
  if (!Parent.Work && Child.Work)
    Parent.Work = Child.Work;
  if (!Parent.Begin && Child.Begin) {
    Parent.Begin = Child.Begin;
    Parent.BeginCaptureId = Child.BeginCaptureId;
  }
  if (!Parent.End && Child.End) {
    Parent.End = Child.End;
    Parent.Ended = Child.Ended;
  }
}

Report CaptureTracker::makeReport(ReportKind Kind, const ApiEvent &E,
                                  const Frame &F) {
  Report R;
  R.Kind = Kind;
  R.Seq = NextSeq++;
  R.Thread = E.Thread;
  R.Region = Region;
  R.Api = F.Name;
  R.Domain = F.Domain;
  R.Result = E.Result;
  return R;
}

std::vector<CaptureTracker::OpenCapture *>
CaptureTracker::affectedCaptures(uint64_t Thread, const StreamState &S) {
  std::vector<OpenCapture *> Out;
  if (S.CaptureId && (S.Status == CaptureStatus::Active ||
                      S.Status == CaptureStatus::Invalidated)) {
    if (OpenCapture *C = findOpen(S.CaptureId, 0))
      Out.push_back(C);
    if (!Out.empty())
      return Out;
  }
  // A prohibited call poisons global-mode captures of every thread and the
  // calling thread's own captures; relaxed captures elsewhere are untouched.
  for (OpenCapture &C : Open)
    if (C.Mode == CaptureMode::Global || C.Mode == CaptureMode::Unknown ||
        C.Thread == Thread)
      Out.push_back(&C);
  if (Out.empty())
    for (OpenCapture &C : Open)
      Out.push_back(&C);
  return Out;
}

std::vector<Report> CaptureTracker::finish(const Frame &F, const ApiEvent &E) {
  std::vector<Report> Out;

  if (F.Begin) {
    Report R = makeReport(ReportKind::CaptureBegin, E, F);
    R.Stream = F.Begin->Stream;
    R.Captures = {F.BeginCaptureId};
    if (OpenCapture *C = findOpen(F.BeginCaptureId, 0))
      R.Mode = C->Mode;
    if (F.Begin->Name != F.Name)
      R.InnerApi = F.Begin->Name;
    Out.push_back(std::move(R));
    return Out;
  }

  if (F.End) {
    Report R = makeReport(ReportKind::CaptureEnd, E, F);
    R.Result = E.Result ? E.Result : F.End->Result;
    R.Stream = F.End->Stream;
    if (F.End->Name != F.Name) {
      R.InnerApi = F.End->Name;
      R.InnerResult = F.End->Result;
    }
    if (F.Ended) {
      R.Captures = {F.Ended->Id};
      R.Mode = F.Ended->Mode;
      if (F.Ended->RootCauseSeq) {
        R.RootCauseSeq = F.Ended->RootCauseSeq;
        R.RootCauseApi = F.Ended->RootCauseApi;
        R.RootCauseResult = F.Ended->RootCauseResult;
        R.Echo = R.Result == 901;
      } else if (isCaptureError(R.Result) && R.Result != 901) {
        // Nothing failed earlier: end-capture itself found the problem
        // (unjoined work, 904).
        R.RootCauseOf = {F.Ended->Id};
        auto Last = LastEnded.find(E.Thread);
        if (Last != LastEnded.end() && Last->second.Id == F.Ended->Id) {
          Last->second.RootCauseSeq = R.Seq;
          Last->second.RootCauseApi = R.Api;
          Last->second.RootCauseResult = R.Result;
        }
        ++Stats.CaptureErrors;
        if (Stats.FirstRootCauseApi.empty()) {
          Stats.FirstRootCauseApi = R.Api;
          Stats.FirstRootCauseResult = R.Result;
        }
      }
    }
    R.Hazard = hazardForApi(R.Api);
    if (!isCaptureError(R.Result))
      R.Hazard = nullptr;
    Out.push_back(std::move(R));
    return Out;
  }

  bool OwnError = isCaptureError(E.Result);
  if (OwnError || F.Error) {
    Report R = makeReport(ReportKind::CaptureError, E, F);
    R.Result = OwnError ? E.Result : F.Error->Result;
    if (F.Error && F.Error->Name != F.Name) {
      R.InnerApi = F.Error->Name;
      R.InnerResult = F.Error->Result;
    }
    R.Stream = E.Stream;
    std::vector<OpenCapture *> Affected = affectedCaptures(E.Thread, E.Stream);
    for (OpenCapture *C : Affected)
      R.Captures.push_back(C->Id);
    if (!Affected.empty())
      R.Mode = Affected.front()->Mode;
    // 901 only says that an earlier call already broke the capture, and
    // the last-error getters only repeat an earlier call's error.
    bool Repeats = R.Result == 901 || R.Api == "cudaGetLastError" ||
                   R.Api == "cudaPeekAtLastError";
    if (!Repeats) {
      for (OpenCapture *C : Affected) {
        if (C->RootCauseSeq)
          continue;
        C->RootCauseSeq = R.Seq;
        C->RootCauseApi = R.Api;
        C->RootCauseResult = R.Result;
        R.RootCauseOf.push_back(C->Id);
      }
    }
    if (R.RootCauseOf.empty()) {
      for (OpenCapture *C : Affected) {
        if (!C->RootCauseSeq)
          continue;
        R.RootCauseSeq = C->RootCauseSeq;
        R.RootCauseApi = C->RootCauseApi;
        R.RootCauseResult = C->RootCauseResult;
        R.Echo = Repeats;
        break;
      }
    } else {
      ++Stats.CaptureErrors;
      if (Stats.FirstRootCauseApi.empty()) {
        Stats.FirstRootCauseApi = R.Api;
        Stats.FirstRootCauseResult = R.Result;
      }
    }
    R.Hazard = hazardForApi(R.Api);
    if (!R.Hazard && !R.InnerApi.empty())
      R.Hazard = hazardForApi(R.InnerApi);
    Out.push_back(std::move(R));
    return Out;
  }

  if (F.Work && anyCaptureOpen()) {
    const StreamState &S = F.Work->Stream;
    bool Capturing = S.Kind != StreamKind::Legacy &&
                     (S.Status == CaptureStatus::Active ||
                      S.Status == CaptureStatus::Invalidated ||
                      S.Status == CaptureStatus::Unknown);
    if (!Capturing) {
      Report R = makeReport(ReportKind::Escape, E, F);
      if (F.Work->Name != F.Name)
        R.InnerApi = F.Work->Name;
      R.Stream = S;
      for (const OpenCapture &C : Open)
        R.Captures.push_back(C.Id);
      R.Mode = Open.front().Mode;
      R.Hazard = hazardForApi(R.Api);
      if (!R.Hazard && S.Kind == StreamKind::Legacy)
        R.Hazard = findHazard("legacy-stream-work");
      ++Stats.Escapes;
      if (Stats.FirstEscapeApi.empty())
        Stats.FirstEscapeApi = R.Api;
      Out.push_back(std::move(R));
    }
  }
  return Out;
}

std::vector<Report> CaptureTracker::onThrow(const ThrowEvent &E) {
  if (Open.empty() && !containsNoCase(E.Message, "captur"))
    return {};
  auto Last = LastEnded.find(E.Thread);
  Report R;
  R.Kind = ReportKind::FrameworkError;
  R.Seq = NextSeq++;
  R.Thread = E.Thread;
  R.Region = Region;
  R.ExceptionType = E.Type;
  R.Message = E.Message;
  for (const OpenCapture &C : Open) {
    R.Captures.push_back(C.Id);
    if (R.Mode == CaptureMode::Unknown)
      R.Mode = C.Mode;
    if (!R.RootCauseSeq && C.RootCauseSeq) {
      R.RootCauseSeq = C.RootCauseSeq;
      R.RootCauseApi = C.RootCauseApi;
      R.RootCauseResult = C.RootCauseResult;
    }
  }
  if (Open.empty() && Last != LastEnded.end() && Last->second.RootCauseSeq) {
    const OpenCapture &C = Last->second;
    R.Captures.push_back(C.Id);
    R.Mode = C.Mode;
    R.RootCauseSeq = C.RootCauseSeq;
    R.RootCauseApi = C.RootCauseApi;
    R.RootCauseResult = C.RootCauseResult;
  }
  R.Hazard = hazardForMessage(E.Message);
  ++Stats.FrameworkErrors;
  if (Stats.FirstFrameworkMessage.empty())
    Stats.FirstFrameworkMessage = E.Message.substr(0, E.Message.find('\n'));
  return {std::move(R)};
}

void CaptureTracker::setRegion(std::string Name) {
  Region = std::move(Name);
  Stats = RegionStats();
}

void CaptureTracker::dropInFlightCalls() {
  for (auto It = Stacks.begin(); It != Stacks.end();) {
    std::vector<Frame> &Stack = It->second;
    Stack.erase(std::remove_if(Stack.begin(), Stack.end(),
                               [](const Frame &F) {
                                 return F.Role != ApiRole::CaptureBegin &&
                                        F.Role != ApiRole::CaptureEnd;
                               }),
                Stack.end());
    It = Stack.empty() ? Stacks.erase(It) : std::next(It);
  }
}

} // namespace harness
} // namespace cudagraph
