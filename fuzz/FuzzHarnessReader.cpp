//===--- FuzzHarnessReader.cpp - the harness's event reader under a fuzzer ===//
//
// Feeds each input line to the JSON parser, decodes it as a recorded event
// and replays it through the capture tracker, as cudagraph-replay-events
// does with a trace: malformed lines must be refused with an error, never
// crash, and any event stream, however unlikely, must leave the tracker
// consistent.
//
//===----------------------------------------------------------------------===//

#include "cudagraph/harness/CaptureTracker.h"
#include "cudagraph/harness/Json.h"

#include <cstdint>
#include <string>
#include <string_view>

using namespace cudagraph::harness;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text(reinterpret_cast<const char *>(Data), Size);
  CaptureTracker Tracker;
  size_t Start = 0;
  while (Start <= Text.size()) {
    size_t End = Text.find('\n', Start);
    if (End == std::string_view::npos)
      End = Text.size();
    std::string_view Line = Text.substr(Start, End - Start);
    Start = End + 1;
    JsonValue V;
    std::string Error;
    if (!JsonValue::parse(Line, V, Error))
      continue;
    // Whatever parsed must print back.
    (void)V.getString("kind");
    if (V.getString("kind") == "region") {
      Tracker.setRegion(V.getString("name"));
      continue;
    }
    ApiEvent Api;
    ThrowEvent Throw;
    bool IsThrow = false;
    if (!eventFromJson(V, Api, Throw, IsThrow, Error))
      continue;
    std::vector<Report> Reports =
        IsThrow ? Tracker.onThrow(Throw) : Tracker.onApi(Api);
    for (const Report &R : Reports)
      (void)toJson(R).str();
    if (Tracker.openCaptureCount() != Tracker.openCaptures().size())
      __builtin_trap();
  }
  Tracker.dropInFlightCalls();
  return 0;
}
