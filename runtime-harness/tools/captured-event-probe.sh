#!/usr/bin/env bash
# Builds and runs captured-event-probe.cu for every use of an event recorded
# inside a capture, in every mode, one process each (GPU machine: nvcc, a
# CUDA device).
#   bash runtime-harness/tools/captured-event-probe.sh
set -u
cd "$(dirname "$0")"
bin=${TMPDIR:-/tmp}/captured-event-probe
nvcc -std=c++17 -O1 -o "$bin" captured-event-probe.cu 2>&1 | grep -v warning | head -20
for mode in global thread relaxed; do
for how in plain external; do
for pre in - pre; do
for use in none sync query wait elapsed rerecord launch-sync launch-query launch-wait; do
  timeout 60 "$bin" "$use" "$mode" "$how" "$pre" || echo "$use $mode $how $pre rc=$?"
done; done; done; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
