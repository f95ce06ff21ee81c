#!/usr/bin/env bash
# compare.sh - EPCC-style construct overheads: oxiomp vs LLVM libomp vs libgomp.
#
# Usage: benches/compare.sh [--rounds N] [--threads T] [--baseline LIB] [--checked] [CONSTRUCT...]
#   defaults: --rounds 5 --threads 2, constructs PARALLEL BARRIER
#   ALL as a construct name expands to every construct overhead.c knows.
#   --baseline LIB: also runs binary A on LIB, another build of oxiomp (say, of the commit
#   before a change), in the same interleaved rounds, and adds its time and the paired
#   ratio oxiomp/baseline: a change's before/after measured as the comparisons are.
#   --checked: also runs binaries A and G on oxiomp with the run-time checks on
#   (OXIOMP_CHECK=1), in the same rounds, and adds their times and the paired ratios
#   checked/unchecked of each binary: what the checks cost per construct.
#
# Builds benches/overhead.c twice into target/bench/, both linking the same
# benches/delay.c object (so both time the same delay machine code):
#   overhead-clang  (clang-19 -fopenmp: needs libomp.so.5)  = binary "A"
#   overhead-gcc    (gcc -fopenmp: libgomp)                 = binary "G"
# and, every round, runs each construct interleaved as
#   A on oxiomp  (LD_LIBRARY_PATH=target/bench/oxiomp-lib, libomp.so.5 -> ours)
#   A on libomp  (LD_LIBRARY_PATH unset: Debian's /usr/lib/llvm-19 libomp)
#   G on libgomp
#   G on oxiomp  (the same directory, libgomp.so.1 -> ours)
# (the order rotates from round to round: none of them always runs first),
# one process per construct and runtime, so a crash or hang (timeout
# ${OVH_TIMEOUT:-120} s) is left out. Times are medians over rounds of overhead.c's
# per-run median; ratios are medians over rounds of the ratio within each round
# (paired: the runs of one round see the same phase of the machine).
#
# Environment:
#   OXIOMP_LIB      our library (default target/release/libomp.so)
#   OMP_PROC_BIND   default "close"; OMP_PLACES passed through if set
#   OVH_OUTER, OVH_TIME_MS, OVH_*  passed through to overhead.c
#   OVH_TIMEOUT     per-run timeout in seconds (default 120)
#   OVH_CFLAGS      extra compiler flags for both binaries (say -g: source locations in
#                   clang's ident_t, which the run-time checks name)
# Before each construct's runs of a round, benches/pingpong.c measures the machine's floor for
# a hand-over between the two first CPUs (a cache line's round trip, ns), and again after
# them; the table shows the median over the construct's rounds ("rtt ns"): a VM's two CPUs
# may share a core complex
# (~110 ns here) or not (~540 ns), which changes from minute to minute and moves every
# fork, join, barrier and ordered figure with it.
# Output: table on stdout, markdown in target/bench/overhead.md,
#         raw per-run output and stderr in target/bench/logs/.
set -euo pipefail

ORIG_PWD=$PWD
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

rounds=5
threads=2
baseline=""
checked=""
constructs=()
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
    --rounds=*) rounds=${1#*=}; shift ;;
    --threads) threads=${2:?--threads needs a value}; shift 2 ;;
    --threads=*) threads=${1#*=}; shift ;;
    --baseline) baseline=${2:?--baseline needs a library}; shift 2 ;;
    --baseline=*) baseline=${1#*=}; shift ;;
    --checked) checked=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
    *) constructs+=("$1"); shift ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: bad --rounds '$rounds'" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: bad --threads '$threads'" >&2; exit 2; }
[ ${#constructs[@]} -gt 0 ] || constructs=(PARALLEL BARRIER)

die() { echo "compare.sh: ERROR: $*" >&2; exit 1; }

# --- our library -------------------------------------------------------------
if [ -n "${OXIOMP_LIB:-}" ]; then
    case "$OXIOMP_LIB" in /*) ;; *) OXIOMP_LIB=$ORIG_PWD/$OXIOMP_LIB ;; esac
else
    OXIOMP_LIB=$ROOT/target/release/libomp.so
fi
[ -f "$OXIOMP_LIB" ] || die "oxiomp library not found at '$OXIOMP_LIB'.
    Run 'cargo build --release' first (or set OXIOMP_LIB=/path/to/libomp.so)."
ours_real=$(realpath -e "$OXIOMP_LIB")
if [ -n "$baseline" ]; then
    case "$baseline" in /*) ;; *) baseline=$ORIG_PWD/$baseline ;; esac
    [ -f "$baseline" ] || die "baseline library not found at '$baseline'"
    base_real=$(realpath -e "$baseline")
    [ "$base_real" != "$ours_real" ] || die "--baseline is the library under test itself"
fi

# --- build -------------------------------------------------------------------
BENCH=target/bench
mkdir -p "$BENCH/logs"
A=$BENCH/overhead-clang
G=$BENCH/overhead-gcc
command -v clang-19 >/dev/null || die "clang-19 not found"
command -v gcc >/dev/null || die "gcc not found"
# delay() is one object file shared by both binaries (see benches/delay.c).
gcc -O2 -c -o "$BENCH/delay.o" benches/delay.c || die "gcc build of delay.c failed"
# shellcheck disable=SC2086 # OVH_CFLAGS is a list of flags
clang-19 -fopenmp -O2 ${OVH_CFLAGS:-} -o "$A" benches/overhead.c "$BENCH/delay.o" || die "clang-19 build failed"
# shellcheck disable=SC2086
gcc -fopenmp -O2 ${OVH_CFLAGS:-} -o "$G" benches/overhead.c "$BENCH/delay.o" || die "gcc build failed"
P=$BENCH/pingpong
gcc -O2 -pthread -o "$P" benches/pingpong.c || die "gcc build of pingpong.c failed"

LIBDIR=$BENCH/oxiomp-lib
mkdir -p "$LIBDIR"
ln -sfn "$ours_real" "$LIBDIR/libomp.so.5"
ln -sfn "$ours_real" "$LIBDIR/libgomp.so.1"
LIBDIR_ABS=$(cd "$LIBDIR" && pwd)
BASEDIR_ABS=""
if [ -n "$baseline" ]; then
    mkdir -p "$BENCH/baseline-lib"
    ln -sfn "$base_real" "$BENCH/baseline-lib/libomp.so.5"
    BASEDIR_ABS=$(cd "$BENCH/baseline-lib" && pwd)
fi

# Expand ALL / validate names (case-insensitive) against the binary's list.
mapfile -t known < <("$G" --list)
sel=()
for c in "${constructs[@]}"; do
    cu=${c^^}
    if [ "$cu" = ALL ]; then sel+=("${known[@]}"); continue; fi
    printf '%s\n' "${known[@]}" | grep -qx -- "$cu" ||
        die "unknown construct '$c'; known: ${known[*]}"
    sel+=("$cu")
done
constructs=("${sel[@]}")

# --- runtime environments ------------------------------------------------------
# Pinning: with OMP_PROC_BIND unset the OS may migrate threads between cores
# (or stack two on one core) in the middle of a measurement; each migration
# costs cold caches and a spin-waiting thread sharing a core with the thread it
# waits for costs a whole time slice. Binding one thread per core makes the
# numbers far more repeatable. Override with OMP_PROC_BIND=false etc.
export OMP_PROC_BIND=${OMP_PROC_BIND:-close}
export OMP_NUM_THREADS=$threads
unset OMP_DISPLAY_ENV KMP_AFFINITY GOMP_CPU_AFFINITY 2>/dev/null || true

# run_rt RUNTIME CMD...: run with the right library environment
run_rt() {
    local rt=$1; shift
    case "$rt" in
    oxiomp | gcc-oxiomp) env LD_LIBRARY_PATH="$LIBDIR_ABS" "$@" ;;
    checked | gcc-checked) env LD_LIBRARY_PATH="$LIBDIR_ABS" OXIOMP_CHECK=1 "$@" ;;
    baseline) env LD_LIBRARY_PATH="$BASEDIR_ABS" "$@" ;;
    libomp | libgomp) env -u LD_LIBRARY_PATH "$@" ;;
    esac
}

# resolved PATH-OF-LIB for a runtime, via the dynamic loader itself
resolve() { # resolve RUNTIME BINARY SONAME
    run_rt "$1" env LD_TRACE_LOADED_OBJECTS=1 "$2" |
        awk -v so="$3" '$1 == so && $2 == "=>" { print $3; exit }'
}

# --- check which library each configuration really loads ----------------------
ox_path=$(resolve oxiomp "$A" libomp.so.5)
ll_path=$(resolve libomp "$A" libomp.so.5)
gomp_path=$(resolve libgomp "$G" libgomp.so.1)
gox_path=$(resolve gcc-oxiomp "$G" libgomp.so.1)
[ -n "$ox_path" ] && [ -e "$ox_path" ] || die "A with LD_LIBRARY_PATH=$LIBDIR_ABS does not resolve libomp.so.5 ('$ox_path')"
[ -n "$ll_path" ] && [ -e "$ll_path" ] || die "A without LD_LIBRARY_PATH does not resolve libomp.so.5 ('$ll_path'); is Debian's libomp5-19 installed?"
[ -n "$gomp_path" ] || die "G does not resolve libgomp.so.1"
[ -n "$gox_path" ] && [ "$(realpath -e "$gox_path")" = "$ours_real" ] ||
    die "G with LD_LIBRARY_PATH=$LIBDIR_ABS would load '$gox_path', not our library. Refusing to measure."
case "$gomp_path" in "$LIBDIR_ABS"/*) die "libgomp run resolves into $LIBDIR_ABS" ;; esac
ox_real=$(realpath -e "$ox_path")
ll_real=$(realpath -e "$ll_path")
[ "$ox_real" = "$ours_real" ] ||
    die "oxiomp run would load $ox_path (-> $ox_real), not our library $ours_real. Refusing to measure."
case "$ll_path" in "$LIBDIR_ABS"/*) die "libomp run resolves into $LIBDIR_ABS" ;; esac
if [ "$ll_real" = "$ours_real" ]; then
    # Only legitimate when OXIOMP_LIB is Debian's own file (testing this script).
    echo "compare.sh: WARNING: OXIOMP_LIB is the system libomp ($ll_real): comparing libomp with itself" >&2
fi
if [ -n "$baseline" ]; then
    b_path=$(resolve baseline "$A" libomp.so.5)
    [ -n "$b_path" ] && [ "$(realpath -e "$b_path")" = "$base_real" ] ||
        die "baseline run would load '$b_path', not $base_real. Refusing to measure."
fi
if run_rt libgomp env LD_TRACE_LOADED_OBJECTS=1 "$G" | grep -q 'libomp'; then
    die "gcc binary unexpectedly loads libomp"
fi
# Two cores leave no headroom: any other busy process (a cargo build...)
# inflates every figure several-fold. Say so, in the report too.
load1=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load1" 'BEGIN { exit !(l > 0.5) }'; then
    echo "compare.sh: WARNING: load average is $load1; other processes are running, numbers will be inflated" >&2
fi
echo "# oxiomp : $ox_path -> $ox_real" >&2
echo "# libomp : $ll_path -> $ll_real" >&2
echo "# libgomp: $gomp_path" >&2
[ -z "$baseline" ] || echo "# baseline: $base_real" >&2
echo "# threads=$threads rounds=$rounds OMP_PROC_BIND=$OMP_PROC_BIND OMP_PLACES=${OMP_PLACES:-unset} constructs: ${constructs[*]}" >&2

# --- measure -----------------------------------------------------------------
RUNTIMES=(oxiomp libomp libgomp gcc-oxiomp)
[ -z "$baseline" ] || RUNTIMES+=(baseline)
[ -z "$checked" ] || RUNTIMES+=(checked gcc-checked)
TIMEOUT=${OVH_TIMEOUT:-120}
declare -A vals   # "$rt/$c" -> space-separated per-round medians
declare -A per    # "$rt/$c/$r" -> that round's median (for paired ratios)
declare -A errs   # "$rt/$c" -> number of failed runs
declare -A rtts   # "$c" -> space-separated cache-line round trips (ns), two per round
stamp=$(date +%Y%m%d-%H%M%S)-$$
raw=$BENCH/logs/raw-$stamp.txt
: >"$raw"

for ((r = 1; r <= rounds; r++)); do
    for c in "${constructs[@]}"; do
        rtt=$("$P" 2>/dev/null || echo n/a)
        [[ $rtt =~ ^[0-9]+$ ]] && rtts[$c]+="$rtt "
        echo "$r rtt $c $rtt" >>"$raw"
        for ((k = 0; k < ${#RUNTIMES[@]}; k++)); do
            rt=${RUNTIMES[(k + r - 1) % ${#RUNTIMES[@]}]}
            bin=$A; case "$rt" in libgomp | gcc-oxiomp | gcc-checked) bin=$G ;; esac
            log=$BENCH/logs/$rt-$c-r$r.err
            set +e
            out=$(run_rt "$rt" timeout -k 5 "$TIMEOUT" "$bin" "$c" 2>"$log")
            rc=$?
            set -e
            line=$(printf '%s\n' "$out" | awk -v c="$c" '$1 == c { print; exit }')
            med=$(awk '{ print $2 }' <<<"$line")
            if [ $rc -ne 0 ] || ! [[ $med =~ ^-?[0-9.]+([eE][-+]?[0-9]+)?$ ]]; then
                errs[$rt/$c]=$((${errs[$rt/$c]:-0} + 1))
                [ $rc -eq 124 ] && why="timeout ${TIMEOUT}s" || why="exit $rc"
                echo "round $r: $c on $rt FAILED ($why), see $log" >&2
                echo "$r $rt $c ERROR $why" >>"$raw"
            else
                vals[$rt/$c]+="$med "
                per[$rt/$c/$r]=$med
                echo "$r $rt $line" >>"$raw"
                printf 'round %d/%d  %-18s %-8s %s us\n' "$r" "$rounds" "$c" "$rt" "$med" >&2
            fi
        done
        rtt=$("$P" 2>/dev/null || echo n/a)
        [[ $rtt =~ ^[0-9]+$ ]] && rtts[$c]+="$rtt "
        echo "$r rtt-after $c $rtt" >>"$raw"
    done
done

# --- report ------------------------------------------------------------------
. "$ROOT/benches/lib.sh" # median
# 3 significant digits, but no exponent for values >= 1000
sig3() { awk -v x="$1" 'BEGIN { if (x >= 1000 || x <= -1000) printf "%.0f", x; else printf "%.3g", x }'; }
fmt() { if [ "$1" = error ]; then echo error; else sig3 "$1"; fi; }
# paired_ratio CONSTRUCT RUNTIME [OVER]: the median over rounds of OVER's value (default
# oxiomp) divided by RUNTIME's in the same round (both runs of a round see the same phase of
# the machine, so the ratio cancels what drifts between rounds); rounds where either failed
# or either value is not positive are left out, "n/a" when none is left.
paired_ratio() {
    local c=$1 rt=$2 over=${3:-oxiomp} r a b rs=""
    for ((r = 1; r <= rounds; r++)); do
        a=${per[$over/$c/$r]:-}; b=${per[$rt/$c/$r]:-}
        [ -n "$a" ] && [ -n "$b" ] || continue
        awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 0) }' || continue
        rs+="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.17g", a / b }') "
    done
    if [ -z "$rs" ]; then echo "n/a"; else sig3 "$(median <<<"$rs")"; fi
}

md=$BENCH/overhead.md
{
    echo "# Construct overheads (us), EPCC method"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, OMP_NUM_THREADS=$threads, OMP_PROC_BIND=$OMP_PROC_BIND," \
        "$rounds rounds, OVH_OUTER=${OVH_OUTER:-20} OVH_TIME_MS=${OVH_TIME_MS:-100}${OVH_SCHED_DELAY_US:+ OVH_SCHED_DELAY_US=$OVH_SCHED_DELAY_US}${OVH_CFLAGS:+ OVH_CFLAGS=$OVH_CFLAGS}${checked:+, --checked}."
    echo "Times: median over rounds of each run's EPCC median. Ratios: median over rounds of the"
    echo "ratio within the round (paired: both runs of a round see the same phase of the machine)."
    echo "oxiomp: \`$ours_real\`; libomp: \`$ll_real\`; libgomp: \`$gomp_path\`${baseline:+; baseline: \`$base_real\`}."
    echo "gcc: the gcc-built binary on oxiomp (as libgomp.so.1), and its ratio to the same binary on libgomp."
    echo "Load average at start: $load1 (anything well above 0 on 2 CPUs inflates the figures)."
    echo "Schedule tests (STATIC..TASKLOOP_1) are us per loop of 1024 iterations per thread."
    echo
    echo "rtt: the cache line round trip between the two first CPUs (benches/pingpong.c), ns,"
    echo "median over the construct's rounds (measured before and after each round's runs of it)."
    echo
    hdr="| construct | oxiomp us | libomp us | libgomp us | oxiomp/libomp | oxiomp/libgomp | gcc: oxiomp us | gcc: oxiomp/libgomp | rtt ns |"
    sep="|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    [ -z "$baseline" ] || { hdr+=" baseline us | oxiomp/baseline |"; sep+="---:|---:|"; }
    [ -z "$checked" ] || {
        hdr+=" checked us | checked/oxiomp | gcc: checked us | gcc: checked/oxiomp |"
        sep+="---:|---:|---:|---:|"
    }
    echo "$hdr"
    echo "$sep"
} >"$md"

printf '%-18s %10s %10s %10s %14s %15s %11s %12s %7s' construct "oxiomp us" "libomp us" "libgomp us" oxiomp/libomp oxiomp/libgomp "gcc-ox us" "gcc ox/gomp" "rtt ns"
[ -z "$baseline" ] || printf ' %11s %15s' "baseline us" oxiomp/baseline
[ -z "$checked" ] || printf ' %11s %15s %14s %18s' "checked us" checked/oxiomp "gcc-ck us" "gcc ck/oxiomp"
echo
for c in "${constructs[@]}"; do
    declare -A m=()
    for rt in "${RUNTIMES[@]}"; do
        if [ -z "${vals[$rt/$c]:-}" ]; then
            m[$rt]=error
        else
            m[$rt]=$(median <<<"${vals[$rt/$c]}")
        fi
    done
    o=$(fmt "${m[oxiomp]}"); l=$(fmt "${m[libomp]}"); g=$(fmt "${m[libgomp]}"); go=$(fmt "${m[gcc-oxiomp]}")
    r1=$(paired_ratio "$c" libomp); r2=$(paired_ratio "$c" libgomp); r4=$(paired_ratio "$c" libgomp gcc-oxiomp)
    if [ -n "${rtts[$c]:-}" ]; then rt_ns=$(median <<<"${rtts[$c]}"); else rt_ns=n/a; fi
    printf '%-18s %10s %10s %10s %14s %15s %11s %12s %7s' "$c" "$o" "$l" "$g" "$r1" "$r2" "$go" "$r4" "$rt_ns"
    row="| $c | $o | $l | $g | $r1 | $r2 | $go | $r4 | $rt_ns |"
    if [ -n "$baseline" ]; then
        b=$(fmt "${m[baseline]}"); r3=$(paired_ratio "$c" baseline)
        printf ' %11s %15s' "$b" "$r3"
        row+=" $b | $r3 |"
    fi
    if [ -n "$checked" ]; then
        ck=$(fmt "${m[checked]}"); r5=$(paired_ratio "$c" oxiomp checked)
        gk=$(fmt "${m[gcc-checked]}"); r6=$(paired_ratio "$c" gcc-oxiomp gcc-checked)
        printf ' %11s %15s %14s %18s' "$ck" "$r5" "$gk" "$r6"
        row+=" $ck | $r5 | $gk | $r6 |"
    fi
    echo
    echo "$row" >>"$md"
    unset m
done
failed=""
for k in "${!errs[@]}"; do failed+=" $k (${errs[$k]}x)"; done
if [ -n "$failed" ]; then
    echo "Failed runs (left out of the medians):$failed." >>"$md"
    echo "compare.sh: failed runs (left out of the medians):$failed" >&2
fi
echo >&2
echo "# markdown: $md   raw: $raw" >&2
