#!/usr/bin/env bash
# The GPU half of the round trip (scripts/roundtrip.sh prints this command).
# Run from the repository root on the GPU machine:
#
#   bash runtime-harness/tools/gpu-roundtrip.sh [OUTDIR]
#
# Builds runtime-harness as a standalone CMake project (no LLVM needed), runs
# every fixture region under the harness, the example programs, the CUPTI
# conflict check and the overhead benchmark, and packs everything into
# OUTDIR/gpu-results.tgz (OUTDIR defaults to $OUT, the device tool's folder).
# Stages can be picked with CUDAGRAPH_STAGES=build,fixtures,examples,faults,bench.
# "faults" runs the fault matrix (run-faults.py), with the two-GPU cases when
# the machine has two GPUs, and compares every fixture region's results with
# and without the harness.
set -u
ROOT=$PWD
DEST=${1:-${OUT:-$PWD}}
B=${CUDAGRAPH_BUILD_DIR:-/tmp/cudagraph-harness-build}
R=/tmp/gpu-results
STAGES=",${CUDAGRAPH_STAGES:-build,fixtures,examples,faults,bench},"
rm -rf "$R"; mkdir -p "$R/examples"
log() { echo "[$(date +%T)] $*" | tee -a "$R/steps.log"; }
pack() { tar czf "$DEST/gpu-results.tgz" -C /tmp gpu-results; }
want() { case "$STAGES" in *",$1,"*) return 0 ;; esac; return 1; }

python3 runtime-harness/tools/collect-env.py > "$R/env.json" 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

if want build; then
  log "configure"
  cmake -S runtime-harness -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    > "$R/cmake.log" 2>&1 || log "configure failed"
  log "build"
  timeout 330 ninja -k 0 -C "$B" > "$R/build.log" 2>&1 || log "build failed (rc=$?)"
  tail -3 "$R/build.log" | tee -a "$R/steps.log"
  pack
fi

if want fixtures; then
  log "fixtures"
  timeout 240 python3 runtime-harness/tools/run-fixtures.py --build "$B" \
    --out "$R/fixtures" --jobs 8 > "$R/fixtures.log" 2>&1 || log "fixtures rc=$?"
  tail -3 "$R/fixtures.log" | tee -a "$R/steps.log"
  pack
fi

if want examples; then
  log "examples"
  run() { local name=$1; shift
    timeout 120 "$B/bin/cudagraph-run" -o "$R/examples/$name.jsonl" -- "$@" \
      > "$R/examples/$name.log" 2>&1; echo "rc=$?" >> "$R/examples/$name.log"; }
  for mode in sync escape query crash clean; do run "bad_capture-$mode" "$B/bin/bad_capture" $mode; done
  run bad_capture_torch-item "$B/bin/bad_capture_torch" item
  run bad_capture_torch-generator "$B/bin/bad_capture_torch" generator
  run bad_capture_py python3 "$ROOT/runtime-harness/examples/bad_capture.py"
  run cupti_holder "$B/bin/cupti_holder"
  # Every callback on, filtered in the callback: the same reports.
  CUDAGRAPH_HARNESS_CALLBACKS=all run bad_capture_torch-item-allcallbacks "$B/bin/bad_capture_torch" item
  # Loaded only through CUDA_INJECTION64_PATH (no preload): exceptions are
  # seen through the rewritten GOT slots.
  timeout 120 "$B/bin/cudagraph-run" --no-preload -o "$R/examples/bad_capture_torch-item-nopreload.jsonl" \
    -- "$B/bin/bad_capture_torch" item > "$R/examples/bad_capture_torch-item-nopreload.log" 2>&1
  pack
fi

if want faults; then
  log "faults"
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  two=""; [ "${gpus:-0}" -ge 2 ] && two="--two-gpus"
  timeout 420 python3 runtime-harness/tools/run-faults.py --build "$B" \
    --out "$R/faults" $two --fixtures > "$R/faults.log" 2>&1 || log "faults rc=$?"
  tail -40 "$R/faults.log" | tee -a "$R/steps.log"
  pack
fi

if want bench; then
  log "bench"
  timeout 200 python3 bench/harness/run_bench.py --bin "$B/bin" \
    --lib "$B/lib/libcudagraph-inject.so" --reps 11 -o "$R/bench.json" \
    > "$R/bench.log" 2>&1 || log "bench rc=$?"
  pack
fi
log "done"
pack
