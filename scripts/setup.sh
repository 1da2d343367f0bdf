#!/usr/bin/env bash
# Installs what the build and the tests need on Debian 12 (run as root),
# plus any packages named as arguments (scripts/fuzz.sh adds libFuzzer's).
# Packages already present are skipped, so repeated runs are quick.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t wanted < <(grep -v '^#' "$here/apt-packages.txt" | sed '/^$/d')
wanted+=("$@")
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -d /usr/local/cuda/include ]; then
  echo "setup: note: no CUDA toolkit at /usr/local/cuda; CUDA tests and the runtime harness are skipped" >&2
fi
