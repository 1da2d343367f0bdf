#!/usr/bin/env bash
# Runs one build of cudagraph-tidy over every real-code list (the development
# corpus, each held-out set, the extension ops, the whole projects) and
# keeps one results file per list, for scripts/realcode/compare.py. Long:
# about an hour on two cores; not part of CI.
#
#   bash scripts/realcode/sweep.sh TOOL PREFIX [LIST...]
#
# TOOL is the cudagraph-tidy binary (copy it out of the build first when
# comparing builds); results go to /tmp/PREFIX-LIST.json, logs beside them,
# and one line per list to /tmp/PREFIX-sweep.log. The repositories must be
# fetched (/work/.mirror); the ops and several held-out lists need Debian's
# pybind11-dev, python3-dev and libopenmpi-dev.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
prefix=$2
shift 2
lists=("$@")
if [ ${#lists[@]} -eq 0 ]; then
  lists=(corpus)
  for f in "$here"/holdout*.txt; do
    case "$f" in *-labels.txt|*-triage.txt) continue ;; esac
    lists+=("$(basename "$f" .txt)")
  done
  lists+=(ops projects)
fi
cd "$here"
for s in "${lists[@]}"; do
  start=$(date +%s)
  if [ "$s" = projects ]; then
    python3 projects.py --tool "$tool" -j 2 --output "/tmp/$prefix-$s.json" > "/tmp/$prefix-$s.log" 2>&1
  else
    python3 run.py --corpus "$s.txt" --tool "$tool" -j 2 --output "/tmp/$prefix-$s.json" > "/tmp/$prefix-$s.log" 2>&1
  fi
  echo "$s rc=$? $(( $(date +%s) - start ))s" >> "/tmp/$prefix-sweep.log"
done
echo done >> "/tmp/$prefix-sweep.log"
