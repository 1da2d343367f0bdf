#!/usr/bin/env bash
# Builds and runs other-stream-probe.cu: calls on a stream that is not
# capturing while another stream captures, in every mode, one process each
# (GPU machine: nvcc, a CUDA device).
#   bash runtime-harness/tools/other-stream-probe.sh
set -u
cd "$(dirname "$0")"
bin=${TMPDIR:-/tmp}/other-stream-probe
nvcc -std=c++17 -O1 -o "$bin" other-stream-probe.cu 2>&1 | grep -v warning | head -20
for mode in global thread relaxed; do
for use in graph-launch graph-exec-destroy graph-instantiate stream-sync event-sync free kernel; do
  timeout 60 "$bin" "$use" "$mode" || echo "$use $mode rc=$?"
done; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
