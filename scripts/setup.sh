#!/usr/bin/env bash
# Installs what building and testing oxiomp needs on a Debian machine, when it is missing:
# clang-19 (to build OpenMP programs), gcc and libgomp1 (gcc-built programs and their reference
# runtime), libomp-19-dev (LLVM's libomp: the headers, the reference runtime the tests and
# benchmarks compare against, and Archer, its OMPT data-race detector) and libclang-rt-19-dev
# (ThreadSanitizer, for Archer); and builds BSC's ovni (its
# emulator `ovniemu`, which the tests run on the traces) from ../shared/vendor into
# $HOME/.cache/ovni-1.14.0, once (cmake is installed when missing). Needs root or sudo for
# apt-get.
set -euo pipefail

need=()
command -v clang-19 >/dev/null 2>&1 || need+=(clang-19)
[ -e /usr/lib/llvm-19/lib/libomp.so.5 ] && [ -e /usr/lib/llvm-19/lib/clang/19/include/omp.h ] || need+=(libomp-19-dev)
# ThreadSanitizer's runtime, for the Archer tests (Archer itself, libarcher.so, is libomp-19-dev's).
[ -e /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.tsan-x86_64.a ] || need+=(libclang-rt-19-dev)
# gdb, with LLVM's OMPD plugin (in libomp-19-dev), for the debugger tests.
command -v gdb >/dev/null 2>&1 || need+=(gdb)
# gcc (its omp.h) and Debian's libgomp: the gcc-built test programs, run on oxiomp and on
# libgomp as their reference.
command -v gcc >/dev/null 2>&1 || need+=(gcc)
[ -e /usr/lib/x86_64-linux-gnu/libgomp.so.1 ] || need+=(libgomp1)
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo is missing: install Rust (https://rustup.rs) first" >&2; exit 1; }

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# ovni's emulator, for the trace tests (a test tool, never linked: see ../shared/vendor).
ovni_bin=${HOME:-/root}/.cache/ovni-1.14.0/bin
if [ ! -x "$ovni_bin/ovniemu" ]; then
  build_ovni=$(cd "$(dirname "$0")/.." && pwd)/../shared/tools/build-ovni.sh
  if [ ! -x "$build_ovni" ]; then
    echo "setup: $build_ovni is missing: the trace tests need ovni's emulator" >&2
    exit 1
  fi
  command -v cmake >/dev/null 2>&1 || {
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq cmake >/dev/null
  }
  echo "setup: building ovni 1.14.0 (about a minute)"
  "$build_ovni" "${ovni_bin%/bin}" >/dev/null
fi
