#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds the library, runs the Rust unit
# tests, the C programs on our library (LD_LIBRARY_PATH and LD_PRELOAD) and on Debian's
# libomp, the export checks, the loom models, and the lint gates.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

cargo build --release --workspace
cargo test --release --workspace
# The task programs once more on a debug build of the library, whose assertions are on (among
# them: every task block taken from a free list is at rest, every gtid is the caller's).
cargo build
cargo test --test c_programs task_
# The engine's unit tests likewise on a debug build (its assertions and overflow checks on).
cargo test -p oxiomp-runtime --lib
# The concurrency cores (sync, barrier) under the loom model checker.
RUSTFLAGS="--cfg loom" cargo test --release -p oxiomp-runtime --lib --target-dir target/loom
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
