//===--- ReplayEvents.cpp - drive the tracker from a recorded trace -------===//
//
// cudagraph-replay-events TRACE.jsonl
//
// Reads decoded events, as the injection records them with
// CUDAGRAPH_HARNESS_TRACE (or as written by hand for a test), feeds them to
// CaptureTracker and prints the reports it makes, one JSON object a line.
// A line {"kind":"region","name":"..."} starts a probe region, and
// {"kind":"stats"} prints the region's statistics. Lines starting with '#'
// and blank lines are skipped.
//
//===----------------------------------------------------------------------===//

#include "cudagraph/harness/CaptureTracker.h"
#include "cudagraph/harness/Json.h"

#include <fstream>
#include <iostream>
#include <string>

using namespace cudagraph::harness;

static void printStats(const RegionStats &S) {
  JsonObject O;
  O.add("event", "stats");
  O.add("capture_errors", S.CaptureErrors);
  O.add("escapes", S.Escapes);
  O.add("framework_errors", S.FrameworkErrors);
  O.add("root_cause_api", S.FirstRootCauseApi);
  O.add("root_cause_result", S.FirstRootCauseResult);
  O.add("escape_api", S.FirstEscapeApi);
  O.add("framework_message", S.FirstFrameworkMessage);
  std::cout << O.str() << "\n";
}

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    std::cerr << "usage: cudagraph-replay-events TRACE.jsonl\n";
    return 2;
  }
  std::ifstream In(Argv[1]);
  if (!In) {
    std::cerr << "cudagraph-replay-events: cannot read '" << Argv[1] << "'\n";
    return 2;
  }
  CaptureTracker Tracker;
  std::string Line;
  unsigned LineNo = 0;
  while (std::getline(In, Line)) {
    ++LineNo;
    size_t First = Line.find_first_not_of(" \t\r");
    if (First == std::string::npos || Line[First] == '#')
      continue;
    JsonValue V;
    std::string Error;
    if (!JsonValue::parse(Line, V, Error)) {
      std::cerr << Argv[1] << ":" << LineNo << ": malformed JSON: " << Error
                << "\n";
      return 2;
    }
    std::string Kind = V.getString("kind");
    if (Kind == "region") {
      Tracker.setRegion(V.getString("name"));
      continue;
    }
    if (Kind == "stats") {
      printStats(Tracker.regionStats());
      continue;
    }
    ApiEvent Api;
    ThrowEvent Throw;
    bool IsThrow = false;
    if (!eventFromJson(V, Api, Throw, IsThrow, Error)) {
      std::cerr << Argv[1] << ":" << LineNo << ": " << Error << "\n";
      return 2;
    }
    std::vector<Report> Reports =
        IsThrow ? Tracker.onThrow(Throw) : Tracker.onApi(Api);
    for (const Report &R : Reports)
      std::cout << toJson(R).str() << "\n";
  }
  if (Tracker.anyCaptureOpen())
    std::cout << "{\"event\":\"open_at_end\",\"captures\":"
              << Tracker.openCaptureCount() << "}\n";
  return 0;
}
