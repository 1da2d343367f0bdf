#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets with clang-19 (coverage, ASan,
# UBSan) in build-fuzz and runs them, and runs the cudagraph-confirm
# mutation fuzzer. Not part of CI: it runs for as long as it is told.
#
#   bash scripts/fuzz.sh [SECONDS-PER-TARGET [TARGET...]]   (default 600, all)
#
# Targets: analysis (grammar-built and mutated sources through every
# check), filters (baselines and diffs), harness-reader (report and trace
# lines through the JSON parser and the capture tracker), confirm (damaged
# fixes, reports and SARIF through cudagraph-confirm). Corpora grow under
# build-fuzz/corpus/TARGET, seeded from fuzz/seeds and the lit inputs;
# crashes go to build-fuzz/crashes/TARGET. Turn each crash into a file under
# fuzz/regressions/TARGET (the lit suite replays them) and fix its cause.
# Ends with one line per target: runs, corpus size, crashes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUDAGRAPH_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(analysis filters harness-reader confirm)
wants() { local t; for t in "${targets[@]}"; do [ "$t" = "$1" ] && return 0; done; return 1; }
jobs=${CUDAGRAPH_JOBS:-2}

bash "$root/scripts/setup.sh" libclang-rt-19-dev
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" -DCUDAGRAPH_FUZZ=ON \
  -DCUDAGRAPH_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target cudagraph-fuzz-analysis cudagraph-fuzz-filters \
  cudagraph-fuzz-harness-reader -- -j"$jobs"

seed() { # TARGET: the corpus folder, seeded once
  local corpus=$build/corpus/$1
  if [ ! -d "$corpus" ]; then
    mkdir -p "$corpus"
    cp "$root"/fuzz/seeds/"$1"/* "$corpus"/ 2>/dev/null || true
  fi
  echo "$corpus"
}

# Analysis seeds also include every lit input, as raw text (first byte 0).
analysis=$(seed analysis)
for f in "$root"/test/checks/*.cpp "$root"/test/analysis/*.cpp; do
  out=$analysis/lit-$(basename "$f")
  [ -e "$out" ] || { printf '\0' > "$out"; cat "$f" >> "$out"; }
done
harness=$(seed harness-reader)
for f in "$root"/test/harness/Inputs/*.trace.jsonl; do
  cp -n "$f" "$harness/" 2>/dev/null || true
done
filters=$(seed filters)

summary=()
for target in analysis filters harness-reader; do
  wants "$target" || continue
  corpus=$build/corpus/$target
  crashes=$build/crashes/$target
  mkdir -p "$crashes"
  log=$build/fuzz-$target.log
  set +e
  ASAN_OPTIONS=detect_leaks=1 "$build/bin/cudagraph-fuzz-$target" "$corpus" \
    -max_total_time="$seconds" -timeout=60 -rss_limit_mb=6144 -max_len=16384 \
    -artifact_prefix="$crashes/" -print_final_stats=1 > "$log" 2>&1
  set -e
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  found=$(find "$crashes" -type f | wc -l)
  summary+=("fuzz: $target: $runs runs in ${seconds}s, corpus $(ls "$corpus" | wc -l), crashes $found ($log)")
done

if wants confirm; then
  set +e
  python3 "$root/fuzz/fuzz_confirm.py" --seconds "$seconds" --crashes "$build/crashes/confirm" \
    > "$build/fuzz-confirm.log" 2>&1
  set -e
  summary+=("fuzz: confirm: $(tail -1 "$build/fuzz-confirm.log")")
fi
printf '%s\n' "${summary[@]}"
