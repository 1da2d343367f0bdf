#!/usr/bin/env bash
# Builds and runs other-thread-probe.cu for every call it knows, in global and
# thread-local mode, one process each, then the same calls made by the
# capturing thread itself on other streams in every mode (GPU machine: nvcc,
# a CUDA device).
#   bash runtime-harness/tools/other-thread-probe.sh
set -u
cd "$(dirname "$0")"
bin=${TMPDIR:-/tmp}/other-thread-probe
nvcc -std=c++17 -O1 -o "$bin" other-thread-probe.cu -lcublas 2>&1 | grep -v warning | head -20
ops=" none cudaStreamSynchronize-blocking cudaStreamSynchronize-nonblocking cudaStreamQuery cudaGraphLaunch cudaGraphLaunch-blocking cudaGraphExecDestroy cudaGraphDestroy cudaGraphInstantiate cudaDeviceSynchronize cudaEventSynchronize cudaEventQuery cudaMalloc cudaFree cudaMallocHost cudaFreeHost cudaMemcpy cudaMemcpyD2H cudaMemset cudaMemcpyAsync-nonblocking cudaMemcpyAsync-blocking kernel-blocking kernel-legacy cudaStreamCreate cudaStreamDestroy cudaEventCreate cudaStreamAddCallback cudaLaunchHostFunc cudaDeviceSetLimit cublasCreate cublasDestroy cudaMallocAsync cudaFreeAsync cudaMallocAsync-legacy cudaMallocFromPoolAsync cudaMemPoolTrimTo cudaGraphUpload cudaGraphExecUpdate cudaStreamBeginCapture cudaStreamGetCaptureInfo cudaEventRecord cudaFuncGetAttributes cudaMemGetInfo"
for where in other same; do
for mode in global thread relaxed; do
[ "$where" = other ] && [ "$mode" = relaxed ] && continue
for op in $ops; do
  timeout 60 "$bin" "$op" "$mode" "$where" || echo "$op $mode $where rc=$?"
done; done; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
