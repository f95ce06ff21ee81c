#!/usr/bin/env bash
# Installs what building and testing oxiomp needs on a Debian machine, when it is missing:
# clang-19 (to build OpenMP programs) and libomp-19-dev (LLVM's libomp: the headers, and the
# reference runtime the tests and benchmarks compare against). Needs root or sudo for apt-get.
set -euo pipefail

need=()
command -v clang-19 >/dev/null 2>&1 || need+=(clang-19)
[ -e /usr/lib/llvm-19/lib/libomp.so.5 ] && [ -e /usr/lib/llvm-19/lib/clang/19/include/omp.h ] || need+=(libomp-19-dev)
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo is missing: install Rust (https://rustup.rs) first" >&2; exit 1; }

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
