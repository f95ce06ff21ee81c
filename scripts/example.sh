#!/usr/bin/env bash
# The main job: installs what is missing, builds oxiomp, builds a bundled OpenMP program with
# clang-19 exactly as for LLVM's libomp, and runs it on oxiomp (then on libomp, for comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

cargo build --release
mkdir -p target/example/lib
ln -sf "$PWD/target/release/libomp.so" target/example/lib/libomp.so.5
clang-19 -fopenmp -O2 examples/pi.c -o target/example/pi

echo "== on oxiomp (LD_LIBRARY_PATH=target/example/lib)"
LD_LIBRARY_PATH=target/example/lib LD_BIND_NOW=1 target/example/pi
echo "== on oxiomp (LD_PRELOAD=target/release/libomp.so)"
LD_PRELOAD=target/release/libomp.so LD_BIND_NOW=1 target/example/pi
echo "== on Debian's libomp"
target/example/pi

echo "== traced (OMP_OVNI=1): examples/trace_demo.c on 4 threads"
clang-19 -fopenmp -O2 examples/trace_demo.c -o target/example/trace_demo
rm -rf target/example/ovni
OMP_OVNI=1 OVNI_TRACEDIR=target/example/ovni LD_LIBRARY_PATH=target/example/lib target/example/trace_demo
cargo build --release -p oxiomp-instrument --bin oxiomp-trace
target/release/oxiomp-trace check target/example/ovni
target/release/oxiomp-trace summary target/example/ovni
target/release/oxiomp-trace svg target/example/ovni target/example/trace.svg
target/release/oxiomp-trace paraver target/example/ovni target/example/trace
target/release/oxiomp-trace chrome target/example/ovni target/example/trace.json
