#!/usr/bin/env bash
# The sanitizer build: the analyzer, the plugin and the harness built with
# AddressSanitizer and UndefinedBehaviorSanitizer (CUDAGRAPH_SANITIZE) in
# build-sanitize, then the lit suite run against it. Any report fails the
# test that caused it.
#
#   bash scripts/test-sanitize.sh [LIT-PATH...]
#
# Ends with "N passed, N failed, N skipped, N sanitizer reports".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# -O1 keeps the instrumented build quick to run; -g1 gives reports lines.
export CUDAGRAPH_BUILD_DIR=${CUDAGRAPH_SANITIZE_BUILD_DIR:-$root/build-sanitize}
export CUDAGRAPH_CMAKE_ARGS="-DCMAKE_CXX_FLAGS_RELEASE=-O1\ -g1 -DCUDAGRAPH_SANITIZE=${CUDAGRAPH_SANITIZE:-address,undefined}"
exec bash "$root/scripts/test.sh" "$@"
