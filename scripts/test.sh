#!/usr/bin/env bash
# Builds everything and runs every test: installs what is missing (Debian 12),
# configures with CMake, builds with ninja and runs the lit suite.
# Ends with a line "N passed, N failed".
#
#   bash scripts/test.sh [LIT-PATH...]
#
# LIT-PATH (relative to the build's test folder) picks part of the suite.
# CUDAGRAPH_BUILD_DIR, CUDAGRAPH_JOBS and CUDAGRAPH_CMAKE_ARGS (extra
# configure arguments) change the build; scripts/test-sanitize.sh uses them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUDAGRAPH_BUILD_DIR:-$root/build}
jobs=${CUDAGRAPH_JOBS:-2}
# Backslash-escaped spaces stay inside one argument.
read -a extra <<< "${CUDAGRAPH_CMAKE_ARGS:-}"

bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >/dev/null
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
skipped=$(( $(count Unsupported || echo 0) + $(count Skipped || echo 0) ))
reports=$(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log" || true)
rm -f "$log"
echo "$passed passed, $failed failed, $skipped skipped${CUDAGRAPH_CMAKE_ARGS:+, $reports sanitizer reports}"
if [ "$passed" -eq 0 ]; then
  echo "test: no test ran" >&2
  exit 1
fi
exit "$status"
