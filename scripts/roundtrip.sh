#!/usr/bin/env bash
# The round trip: static findings on the fixture corpus, the same fixtures run
# on a GPU under the runtime harness, and the join of the two.
#
#   scripts/roundtrip.sh static          analyze runtime-harness/fixtures here
#                                        (needs build/bin/cudagraph-tidy)
#   scripts/roundtrip.sh device-command  print the command to run on the GPU
#                                        machine, from the repository root; it
#                                        writes gpu-results.tgz into $OUT
#   scripts/roundtrip.sh confirm RESULTS join RESULTS (gpu-results.tgz or its
#                                        unpacked folder) with the static
#                                        findings, then regenerate
#                                        docs/confirmation.md and the harness
#                                        section of docs/performance.md
#
# Work files go to build/roundtrip (CUDAGRAPH_ROUNDTRIP_DIR). The device step
# is a separate command because the GPU machine is reached through a tool,
# not a shell; see docs/harness.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${CUDAGRAPH_ROUNDTRIP_DIR:-$root/build/roundtrip}
tidy=${CUDAGRAPH_TIDY:-$root/build/bin/cudagraph-tidy}
fixtures=runtime-harness/fixtures
device_command="bash runtime-harness/tools/gpu-roundtrip.sh"

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

static_step() {
  if [ ! -x "$tidy" ]; then
    echo "roundtrip: $tidy not found; build the analyzer first (cmake --build build)" >&2
    exit 2
  fi
  mkdir -p "$work/static"
  cd "$root"
  # CUDA files: the tool brings the CUDA 13 shims itself. libtorch files:
  # the hermetic stub headers stand in for libtorch.
  "$tidy" --export-fixes="$work/static/raw.yaml" $fixtures/raw/*.cu \
    -- -std=c++17 -Iruntime-harness/include > "$work/static/raw.log" 2>&1 || true
  "$tidy" --export-fixes="$work/static/torch.yaml" $fixtures/torch/*.cpp \
    -- -std=c++17 -Iruntime-harness/include -isystem test/Inputs/libtorch/include \
    -isystem test/Inputs/cuda/include > "$work/static/torch.log" 2>&1 || true
  for part in raw torch; do
    if [ ! -s "$work/static/$part.yaml" ]; then
      echo "roundtrip: no findings file for $part; see $work/static/$part.log" >&2
      exit 1
    fi
    printf 'roundtrip: %-5s %3d findings, %d compile errors -> %s\n' "$part" \
      "$(grep -c 'DiagnosticName:  *cudagraph-' "$work/static/$part.yaml" || true)" \
      "$(grep -c 'DiagnosticName:  *clang-diagnostic-error' "$work/static/$part.yaml" || true)" \
      "$work/static/$part.yaml"
  done
  echo "$device_command" > "$work/device-command.txt"
  echo "roundtrip: next, on the GPU machine: $device_command"
}

confirm_step() {
  local results=${1:-}
  if [ -z "$results" ] || [ ! -e "$results" ]; then
    echo "roundtrip: confirm needs the device results (gpu-results.tgz or its folder)" >&2
    exit 2
  fi
  for part in raw torch; do
    [ -s "$work/static/$part.yaml" ] || { echo "roundtrip: run '$0 static' first" >&2; exit 2; }
  done
  if [ -f "$results" ]; then
    rm -rf "$work/gpu"; mkdir -p "$work/gpu"
    tar xzf "$results" -C "$work/gpu"
    results="$work/gpu/gpu-results"
  elif [ -d "$results/gpu-results" ]; then
    results="$results/gpu-results"
  fi
  cd "$root"
  local confirm=(runtime-harness/confirm/cudagraph-confirm
    --fixes "$work/static/raw.yaml" --fixes "$work/static/torch.yaml"
    --source-root "$root" --known $fixtures/known-disagreements.yaml
    "$results/fixtures/reports")
  local status=0
  "${confirm[@]}" > "$work/confirm.txt" || status=$?
  "${confirm[@]}" --json > "$work/confirm.json" || true
  if [ "$status" -ge 2 ]; then
    cat "$work/confirm.txt" >&2
    exit "$status"
  fi
  tail -1 "$work/confirm.txt"
  python3 runtime-harness/tools/confirmation-table.py --results "$results" \
    --fixes "$work/static/raw.yaml" --fixes "$work/static/torch.yaml" \
    --source-root "$root" --known $fixtures/known-disagreements.yaml \
    --confirm-json "$work/confirm.json" -o docs/confirmation.md || status=1
  if [ -f "$results/bench.json" ]; then
    python3 bench/harness/write_performance.py --bench "$results/bench.json" \
      --env "$results/env.json" --doc docs/performance.md
  fi
  exit "$status"
}

case "${1:-}" in
  static) static_step ;;
  device-command) echo "$device_command" ;;
  confirm) shift; confirm_step "$@" ;;
  -h|--help|"") usage ;;
  *) echo "roundtrip: unknown step '$1'" >&2; usage >&2; exit 2 ;;
esac
