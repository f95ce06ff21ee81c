#!/usr/bin/env bash
# oversub.sh - oxiomp against LLVM libomp when threads outnumber CPUs.
#
# Usage: benches/oversub.sh [--rounds N] [--factors "1 2 4"] [--no-one-cpu] [CONSTRUCT...]
#   defaults: --rounds 3, factors 1 2 4 (threads = factor x the CPUs this process may use),
#   constructs FIB_30 BRANCH_TASK_TREE SORT and EPCC's syncbench (PARALLEL FOR PARALLEL_FOR
#   BARRIER SINGLE CRITICAL LOCK ATOMIC REDUCTION ORDERED).
#   Also, unless --no-one-cpu: 2 threads under `taskset -c 0` (a container whose quota is one
#   CPU while nproc says more).
#
# The clang binary of benches/overhead.c (the one compare.sh builds: target/bench/
# overhead-clang) runs each construct on our library and on Debian's libomp, one process
# each, in an order that alternates from round to round, under /usr/bin/time for the CPU time
# the process spent in user and in system mode and its involuntary context switches.
# Times are medians over rounds of overhead.c's per-run median (us per construct, per
# fib(30), per sort); the ratio is the median over rounds of oxiomp/libomp within the round
# (paired). CPU time and involuntary context switches are the process's, divided by the
# repetitions of the construct it ran (calibration included; overhead.c prints them), medians
# over rounds: a run lasts about the same time on both runtimes, so the faster one runs more
# constructs, and per-run figures would not compare the same work.
#
# Environment: OXIOMP_LIB (default target/release/libomp.so); OMP_WAIT_POLICY, KMP_BLOCKTIME
# and OVH_* are passed to both runtimes (OMP_WAIT_POLICY=passive compares passive with
# passive); OVH_TIMEOUT per run (default 300 s).
# Output: table on stdout, markdown in target/bench/oversub.md, raw lines in target/bench/logs/.
set -euo pipefail

ORIG_PWD=$PWD
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. benches/lib.sh

rounds=3
factors="1 2 4"
one_cpu=1
constructs=()
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
    --factors) factors=${2:?--factors needs a value}; shift 2 ;;
    --no-one-cpu) one_cpu=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "oversub.sh: unknown option $1" >&2; exit 2 ;;
    *) constructs+=("${1^^}"); shift ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "oversub.sh: bad --rounds '$rounds'" >&2; exit 2; }
for f in $factors; do
    [[ $f =~ ^[1-9][0-9]*$ ]] || { echo "oversub.sh: bad factor '$f'" >&2; exit 2; }
done
[ ${#constructs[@]} -gt 0 ] ||
    constructs=(FIB_30 BRANCH_TASK_TREE SORT PARALLEL FOR PARALLEL_FOR BARRIER SINGLE CRITICAL LOCK ATOMIC REDUCTION ORDERED)

die() { echo "oversub.sh: ERROR: $*" >&2; exit 1; }
command -v clang-19 >/dev/null || die "clang-19 not found"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (Debian package 'time')"

OXIOMP_LIB=${OXIOMP_LIB:-$ROOT/target/release/libomp.so}
case "$OXIOMP_LIB" in /*) ;; *) OXIOMP_LIB=$ORIG_PWD/$OXIOMP_LIB ;; esac
[ -f "$OXIOMP_LIB" ] || die "oxiomp library not found at '$OXIOMP_LIB' (cargo build --release)"
ours_real=$(realpath -e "$OXIOMP_LIB")

BENCH=target/bench
mkdir -p "$BENCH/logs" "$BENCH/oversub-lib"
A=$BENCH/overhead-clang
gcc -O2 -c -o "$BENCH/delay.o" benches/delay.c || die "gcc build of delay.c failed"
clang-19 -fopenmp -O2 -o "$A" benches/overhead.c "$BENCH/delay.o" || die "clang-19 build failed"
ln -sfn "$ours_real" "$BENCH/oversub-lib/libomp.so.5"
LIBDIR=$(cd "$BENCH/oversub-lib" && pwd)

mapfile -t known < <("$A" --list)
for c in "${constructs[@]}"; do
    printf '%s\n' "${known[@]}" | grep -qx -- "$c" || die "unknown construct '$c'; known: ${known[*]}"
done

run_rt() { # run_rt RUNTIME CMD...
    local rt=$1; shift
    case "$rt" in
    oxiomp) env LD_LIBRARY_PATH="$LIBDIR" "$@" ;;
    libomp) env -u LD_LIBRARY_PATH "$@" ;;
    esac
}
loaded() { run_rt "$1" env LD_TRACE_LOADED_OBJECTS=1 "$A" | awk '$1 == "libomp.so.5" { print $3; exit }'; }
[ "$(realpath -e "$(loaded oxiomp)")" = "$ours_real" ] || die "the oxiomp run would not load $ours_real"
ll_real=$(realpath -e "$(loaded libomp)")
[ "$ll_real" != "$ours_real" ] || die "the libomp run would load our library"

ncpu=$(nproc)
configs=() # "label|threads|prefix"
for f in $factors; do configs+=("$((f * ncpu)) threads on $ncpu CPUs|$((f * ncpu))|"); done
[ "$one_cpu" = 1 ] && configs+=("2 threads, taskset -c 0|2|taskset -c 0")

export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
TIMEOUT=${OVH_TIMEOUT:-300}
raw=$BENCH/logs/oversub-$(date +%Y%m%d-%H%M%S)-$$.txt
: >"$raw"
echo "# oxiomp: $ours_real; libomp: $ll_real; $ncpu CPUs; OMP_PROC_BIND=$OMP_PROC_BIND" \
    "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset} KMP_BLOCKTIME=${KMP_BLOCKTIME:-unset}" >&2

for ((r = 1; r <= rounds; r++)); do
    for cfg in "${configs[@]}"; do
        IFS='|' read -r label nt prefix <<<"$cfg"
        for c in "${constructs[@]}"; do
            order=(oxiomp libomp)
            ((r % 2)) || order=(libomp oxiomp)
            for rt in "${order[@]}"; do
                set +e
                # shellcheck disable=SC2086 # $prefix is a command prefix or empty
                out=$(run_rt "$rt" env OMP_NUM_THREADS="$nt" $prefix /usr/bin/time -f 'TIME %U %S %c' \
                    timeout -k 5 "$TIMEOUT" "$A" "$c" 2>&1)
                rc=$?
                set -e
                v=$(awk -v c="$c" '$1 == c { print $2; exit }' <<<"$out")
                t=$(awk '$1 == "TIME" { print $2, $3, $4; exit }' <<<"$out")
                n=$(sed -n 's/^# .* tested=\([0-9]*\)$/\1/p' <<<"$out" | head -n 1)
                if [ $rc -ne 0 ] || [ -z "$v" ] || [ -z "$t" ] || [ -z "$n" ]; then
                    echo "round $r: $c on $rt ($label) FAILED (exit $rc)" >&2
                    continue
                fi
                echo "$r|$label|$c|$rt|$v|$t|$n" >>"$raw"
                printf 'round %d/%d  %-26s %-16s %-7s %s us (user sys csw: %s; %s constructs)\n' \
                    "$r" "$rounds" "$label" "$c" "$rt" "$v" "$t" "$n" >&2
            done
        done
    done
done

md=$BENCH/oversub.md
python3 - "$raw" "$md" "$ours_real" "$ll_real" <<'PY'
import collections, statistics, sys, datetime
raw, md, ours, ll = sys.argv[1:]
d = collections.defaultdict(dict)  # (label, c) -> rt -> [(round, v, user, sys, csw)], per construct
labels, cons = [], []
for line in open(raw):
    r, label, c, rt, v, t, n = line.rstrip("\n").split("|")
    u, s, csw = t.split()
    n = int(n)
    d[(label, c)].setdefault(rt, []).append((r, float(v), float(u) * 1e6 / n, float(s) * 1e6 / n, int(csw) / n))
    if label not in labels: labels.append(label)
    if c not in cons: cons.append(c)
med = statistics.median
def g(x): return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"
rows = ["| threads | construct | oxiomp (us) | libomp (us) | oxiomp/libomp | user us ox / lo | sys us ox / lo | inv. csw ox / lo |",
        "|---|---|---:|---:|---:|---:|---:|---:|"]
for label in labels:
    for c in cons:
        m = d.get((label, c), {})
        o, l = m.get("oxiomp", []), m.get("libomp", [])
        if not o or not l:
            rows.append(f"| {label} | {c} | {'error' if not o else g(med([x[1] for x in o]))} | {'error' if not l else g(med([x[1] for x in l]))} | n/a | | | |")
            continue
        lr = {x[0]: x[1] for x in l}
        ratios = [x[1] / lr[x[0]] for x in o if x[0] in lr and x[1] > 0 and lr[x[0]] > 0]
        ratio = f"{med(ratios):.2f}" if ratios else "n/a"
        def col(k): return f"{g(med([x[k] for x in o]))} / {g(med([x[k] for x in l]))}"
        rows.append(f"| {label} | {c} | {g(med([x[1] for x in o]))} | {g(med([x[1] for x in l]))} | {ratio} | {col(2)} | {col(3)} | {col(4)} |")
text = "\n".join(rows)
print(text)
with open(md, "w") as f:
    f.write(f"# Oversubscription: oxiomp against libomp\n\n{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; "
            f"oxiomp `{ours}`, libomp `{ll}`.\n\n{text}\n")
PY
echo "# markdown: $md   raw: $raw" >&2
