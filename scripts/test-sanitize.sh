#!/usr/bin/env bash
# The sanitizer build: the analyzer, the plugin and the harness built with
# AddressSanitizer and UndefinedBehaviorSanitizer (CUDAGRAPH_SANITIZE), then
# the lit suite run against it. Any report fails the test that caused it.
#
#   bash scripts/test-sanitize.sh [LIT-PATH...]
#
# LIT-PATH defaults to the whole suite. The build goes to build-sanitize
# (CUDAGRAPH_SANITIZE_BUILD_DIR). Ends with "N passed, N failed".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUDAGRAPH_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${CUDAGRAPH_JOBS:-2}
sanitizers=${CUDAGRAPH_SANITIZE:-address,undefined}

bash "$root/scripts/setup.sh"
# -O1 keeps the instrumented build quick to run; -g1 gives reports lines.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" -DCUDAGRAPH_SANITIZE="$sanitizers" >/dev/null
cmake --build "$build" -- -j"$jobs"

lit=/usr/lib/llvm-19/build/utils/lit/lit.py
paths=()
for p in "${@:-.}"; do paths+=("$build/test/$p"); done
log=$(mktemp)
set +e
python3 "$lit" -sv -j"$jobs" "${paths[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
count() { grep -E "^ *$1: *[0-9]+" "$log" | grep -oE '[0-9]+' | head -1; }
passed=$(( $(count Passed || echo 0) + $(count "Expectedly Failed" || echo 0) ))
failed=$(( $(count Failed || echo 0) + $(count "Unexpectedly Passed" || echo 0) + $(count Unresolved || echo 0) + $(count "Timed Out" || echo 0) ))
reports=$(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log" || true)
rm -f "$log"
echo "sanitize: $passed passed, $failed failed, $reports sanitizer reports"
if [ "$passed" -eq 0 ]; then
  echo "sanitize: no test ran" >&2
  exit 1
fi
exit "$status"
