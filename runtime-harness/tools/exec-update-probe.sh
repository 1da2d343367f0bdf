#!/usr/bin/env bash
# Builds and runs exec-update-probe.cu for each case (GPU machine: nvcc, a
# CUDA device): what a failed graph update returns and leaves in the
# runtime's last error.
#   bash runtime-harness/tools/exec-update-probe.sh
set -u
cd "$(dirname "$0")"
bin=${TMPDIR:-/tmp}/exec-update-probe
nvcc -std=c++17 -O1 -o "$bin" exec-update-probe.cu -lcuda 2>&1 | grep -v warning | head -20
for what in same topology cleared peek driver; do
  timeout 60 "$bin" "$what" || echo "$what rc=$?"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
