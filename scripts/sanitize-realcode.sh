#!/usr/bin/env bash
# The sanitizer build (scripts/test-sanitize.sh builds it) over the real-code
# corpus that docs/accuracy.md scores: every file through the instrumented
# cudagraph-tidy, with sanitizer reports made distinct from findings (exit
# status 86/87 instead of 1). Needs the corpus repositories fetched (see
# scripts/realcode/run.py). Not part of CI: it takes tens of minutes.
#
#   bash scripts/sanitize-realcode.sh [run.py options: -j N, --corpus FILE, --only S]
#
# Ends with "sanitize-realcode: F files, C crashed, R sanitizer reports" and
# lists the files with reports. Exit status 1 if any.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUDAGRAPH_SANITIZE_BUILD_DIR:-$root/build-sanitize}
out=$build/realcode-results.json
if [ ! -x "$build/bin/cudagraph-tidy" ]; then
  echo "sanitize-realcode: no $build/bin/cudagraph-tidy; run scripts/test-sanitize.sh first" >&2
  exit 2
fi
# Full unwinding at malloc: Debian's libclang-cpp has no frame pointers, and the
# suppressions match frames inside it.
export ASAN_OPTIONS="detect_leaks=1:exitcode=86:halt_on_error=1:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
export LSAN_OPTIONS="suppressions=$root/scripts/sanitize/lsan.supp"
rm -f "$out"
python3 "$root/scripts/realcode/run.py" --tool "$build/bin/cudagraph-tidy" \
  --output "$out" "$@" > "$build/realcode.log" 2>&1 || true
if [ ! -s "$out" ]; then
  echo "sanitize-realcode: the corpus run wrote no results; see $build/realcode.log" >&2
  tail -5 "$build/realcode.log" >&2
  exit 2
fi
python3 - "$out" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
results = results.get("results", results) if isinstance(results, dict) else results
ran = [r for r in results if "skipped" not in r]
crashed = [r for r in ran if r.get("returncode") not in (None, 0, 1, 3)]
reports = [r for r in ran if r.get("returncode") in (86, 87)]
print("sanitize-realcode: %d files, %d crashed, %d sanitizer reports" % (len(ran), len(crashed), len(reports)))
for r in reports + [c for c in crashed if c not in reports]:
    print("  %s (exit %s)" % (r.get("entry"), r.get("returncode")))
sys.exit(1 if reports or crashed else 0)
PY
