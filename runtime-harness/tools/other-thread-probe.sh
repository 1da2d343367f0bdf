#!/usr/bin/env bash
# Builds and runs other-thread-probe.cu for every call it knows, in global and
# thread-local mode, one process each (GPU machine: nvcc, a CUDA device).
#   bash runtime-harness/tools/other-thread-probe.sh
set -u
cd "$(dirname "$0")"
bin=${TMPDIR:-/tmp}/other-thread-probe
nvcc -std=c++17 -O1 -o "$bin" other-thread-probe.cu -lcublas 2>&1 | grep -v warning | head -20
for mode in global thread; do
for op in none cudaStreamSynchronize-blocking cudaStreamSynchronize-nonblocking cudaStreamQuery cudaGraphLaunch cudaGraphLaunch-blocking cudaGraphExecDestroy cudaGraphDestroy cudaGraphInstantiate cudaDeviceSynchronize cudaEventSynchronize cudaEventQuery cudaMalloc cudaFree cudaMallocHost cudaFreeHost cudaMemcpy cudaMemcpyD2H cudaMemset cudaMemcpyAsync-nonblocking cudaMemcpyAsync-blocking kernel-blocking kernel-legacy cudaStreamCreate cudaStreamDestroy cudaEventCreate cudaStreamAddCallback cudaLaunchHostFunc cudaDeviceSetLimit cublasCreate cublasDestroy; do
  timeout 60 "$bin" "$op" "$mode" || echo "$op $mode rc=$?"
done; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
