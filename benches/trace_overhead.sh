#!/usr/bin/env bash
# trace_overhead.sh - the cost of tracing: benches/overhead.c on oxiomp with tracing off and
# with OMP_OVNI=1, interleaved per round, as paired ratios (goal: at most 1.1x).
#
# Usage: benches/trace_overhead.sh [--rounds N] [--threads T] [CONSTRUCT...]
#   defaults: --rounds 3 --threads 2, constructs PARALLEL BARRIER FOR SINGLE CRITICAL
#             DYNAMIC_1 PARALLEL_TASK
# Environment: OXIOMP_LIB, the library to measure (default target/release/libomp.so), as in
# compare.sh: so that two builds can be measured one after the other.
# Output: a table on stdout and target/bench/trace-overhead.md.
set -euo pipefail
ORIG_PWD=$PWD
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
rounds=3
threads=2
constructs=()
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    -*) echo "trace_overhead.sh: unknown option $1" >&2; exit 2 ;;
    *) constructs+=("${1^^}"); shift ;;
    esac
done
[ ${#constructs[@]} -gt 0 ] || constructs=(PARALLEL BARRIER FOR SINGLE CRITICAL DYNAMIC_1 PARALLEL_TASK)
so=${OXIOMP_LIB:-$ROOT/target/release/libomp.so}
case "$so" in /*) ;; *) so=$ORIG_PWD/$so ;; esac
[ -f "$so" ] || { echo "trace_overhead.sh: no library at $so (cargo build --release, or set OXIOMP_LIB)" >&2; exit 1; }
so=$(realpath -e "$so")
echo "# oxiomp: $so" >&2
B=target/bench
mkdir -p "$B/oxiomp-lib"
ln -sfn "$so" "$B/oxiomp-lib/libomp.so.5"
gcc -O2 -c -o "$B/delay.o" benches/delay.c
clang-19 -fopenmp -O2 -o "$B/overhead-clang" benches/overhead.c "$B/delay.o"
export OMP_NUM_THREADS=$threads OMP_PROC_BIND=${OMP_PROC_BIND:-close} LD_LIBRARY_PATH=$ROOT/$B/oxiomp-lib
tdir=$(mktemp -d)
trap 'rm -rf "$tdir"' EXIT
. benches/lib.sh # median, quotient
declare -A off on ratio
for ((r = 1; r <= rounds; r++)); do
    for c in "${constructs[@]}"; do
        a=$(env -u OMP_OVNI "$B/overhead-clang" "$c" 2>/dev/null | awk '{print $2}')
        off[$c]+="$a "
        v=$(OMP_OVNI=1 OVNI_TRACEDIR="$tdir/t" "$B/overhead-clang" "$c" 2>/dev/null | awk '{print $2}')
        rm -rf "$tdir/t"
        on[$c]+="$v "
        # The paired ratio of this round (the VM has slow and fast phases: a ratio of
        # medians could compare one's slow phase with the other's fast one).
        ratio[$c]+="$(quotient "$v" "$a") "
        echo "round $r/$rounds $c off $a on $v" >&2
    done
done
{
    echo "| construct | tracing off (us) | tracing on (us) | on / off (median of per-round ratios) |"
    echo "|---|---:|---:|---:|"
    for c in "${constructs[@]}"; do
        a=$(echo "${off[$c]}" | median)
        b=$(echo "${on[$c]}" | median)
        echo "| $c | $a | $b | $(echo "${ratio[$c]}" | median | awk '{ printf "%.2f", $1 }') |"
    done
} | tee "$B/trace-overhead.md"
