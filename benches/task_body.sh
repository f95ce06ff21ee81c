#!/usr/bin/env bash
# task_body.sh - at-once task overhead against the body's length: benches/task_body.c built
# with clang-19 (run on oxiomp and on Debian's libomp) and with gcc (libgomp), interleaved per
# round; prints per body length L the median over rounds of each runtime's overhead (TSC
# ticks per task) and the medians of the per-round ratios oxiomp / libgomp and oxiomp / libomp.
#
# Usage: benches/task_body.sh [--rounds N] [L...]   (defaults: 3 rounds; L = 0 30 85 250)
# Environment: OXIOMP_LIB (default target/release/libomp.so), OMP_NUM_THREADS (default 2).
set -euo pipefail
ORIG_PWD=$PWD
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
rounds=3
lens=()
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=${2:?}; shift 2 ;;
    -*) echo "task_body.sh: unknown option $1" >&2; exit 2 ;;
    *) lens+=("$1"); shift ;;
    esac
done
[ ${#lens[@]} -gt 0 ] || lens=(0 30 85 250)
so=${OXIOMP_LIB:-$ROOT/target/release/libomp.so}
case "$so" in /*) ;; *) so=$ORIG_PWD/$so ;; esac
[ -f "$so" ] || { echo "task_body.sh: no library at $so (cargo build --release)" >&2; exit 1; }
B=target/bench
mkdir -p "$B/oxiomp-lib"
ln -sfn "$(realpath -e "$so")" "$B/oxiomp-lib/libomp.so.5"
gcc -O2 -c -o "$B/delay.o" benches/delay.c
clang-19 -fopenmp -O2 -o "$B/task_body-clang" benches/task_body.c "$B/delay.o"
gcc -fopenmp -O2 -o "$B/task_body-gcc" benches/task_body.c "$B/delay.o"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-close}
declare -A ours llvm gomp rg rl
. benches/lib.sh # median, quotient
for ((r = 1; r <= rounds; r++)); do
    for L in "${lens[@]}"; do
        o=$(LD_LIBRARY_PATH=$ROOT/$B/oxiomp-lib "$B/task_body-clang" "$L" | awk '{print $3}')
        l=$(env -u LD_LIBRARY_PATH "$B/task_body-clang" "$L" | awk '{print $3}')
        g=$("$B/task_body-gcc" "$L" | awk '{print $3}')
        ours[$L]+="$o "; llvm[$L]+="$l "; gomp[$L]+="$g "
        # Paired: the runs of one round see the same phase of the machine.
        rg[$L]+="$(quotient "$o" "$g") "; rl[$L]+="$(quotient "$o" "$l") "
        echo "round $r/$rounds L=$L oxiomp $o libomp $l libgomp $g" >&2
    done
done
echo "| L | oxiomp (ticks/task) | libomp | libgomp | oxiomp / libgomp | oxiomp / libomp |"
echo "|---:|---:|---:|---:|---:|---:|"
for L in "${lens[@]}"; do
    o=$(echo "${ours[$L]}" | median); l=$(echo "${llvm[$L]}" | median); g=$(echo "${gomp[$L]}" | median)
    printf "| %s | %.1f | %.1f | %.1f | %.2f | %.2f |\n" "$L" "$o" "$l" "$g" "$(echo "${rg[$L]}" | median)" \
        "$(echo "${rl[$L]}" | median)"
done
