#!/usr/bin/env bash
# The main job: builds cudagraph-tidy and analyzes examples/ against the real
# libtorch (Debian's libtorch-dev) and CUDA 13 headers, printing the findings.
# Usage: bash scripts/analyze-examples.sh [extra cudagraph-tidy options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUDAGRAPH_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target cudagraph-tidy -- -j2 >/dev/null

# A compilation database for the examples, as a build system would write it.
db="$build/examples"
mkdir -p "$db"
python3 "$root/examples/compile_db.py" "$db/compile_commands.json"

mapfile -t sources < <(python3 -c 'import json,sys; [print(e["file"]) for e in json.load(open(sys.argv[1]))]' "$db/compile_commands.json")
echo "Analyzing ${#sources[@]} files in examples/ with cudagraph-tidy (checks: cudagraph-*)" >&2
out=$(mktemp)
"$build/bin/cudagraph-tidy" -p "$db" --quiet "$@" "${sources[@]}" >"$out" 2>/dev/null || true
sed "s|$root/||g" "$out"
echo
echo "Findings per check:"
grep -oE 'warning: .*\[(cudagraph-[a-z-]+)\]$' "$out" | grep -oE 'cudagraph-[a-z-]+\]$' | tr -d ']' | sort | uniq -c
rm -f "$out"
