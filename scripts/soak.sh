#!/usr/bin/env bash
# soak.sh - an opt-in soak run of the C test programs on our library (not part of CI, not
# called by scripts/test.sh): each program runs R times at each thread count, to catch rare
# failures and hangs that one run per thread count (the suite) misses.
#
#   scripts/soak.sh [--reps R] [--threads LIST] [--timeout SECS] [PROGRAM...]
#
#   --reps R         runs per program and thread count (default 50)
#   --threads LIST   OMP_NUM_THREADS values, comma-separated (default 1,2,4,16); a program
#                    whose `threads=` directive lists its own values runs only at the values
#                    of LIST it allows (task_resubmit: 2,4), `threads=none` runs without
#                    OMP_NUM_THREADS
#   --timeout SECS   per-run limit (default 120); a run over it counts as a hang
#   PROGRAM          tests/c programs, as `task_basic` or `task_basic.c`, or the path of a
#                    C file (anywhere; compiled with -Itests/c); default: every
#                    tests/c/task_*.c
#
# It builds nothing but the programs (clang-19 -fopenmp -O2 -Itests/c plus the file's
# `cflags=`, as tests/c_programs.rs does) and runs them on target/release/libomp.so (or
# $OXIOMP_LIB), which must be built already (cargo build --release). Like the harness it clears
# OMP_*/KMP_*/LD_*/OVNI* from the environment, applies the file's `env=` and `prefix=`
# directives, sets LD_BIND_NOW=1, checks once per program that the loader picks our library,
# and requires each `stderr-contains=` text. No reference (Debian libomp) runs, no traces.
# Every failure or timeout is reported with the program, thread count and run number, its
# output kept under the work directory; the exit status is 1 when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

reps=50
threads=1,2,4,16
timeout_s=120
usage() { sed -n '6,16s/^# \{0,1\}//p' "$0"; }
while [ $# -gt 0 ]; do
  case $1 in
    --reps) reps=${2:?--reps needs a value}; shift 2 ;;
    --reps=*) reps=${1#*=}; shift ;;
    --threads) threads=${2:?--threads needs a value}; shift 2 ;;
    --threads=*) threads=${1#*=}; shift ;;
    --timeout) timeout_s=${2:?--timeout needs a value}; shift 2 ;;
    --timeout=*) timeout_s=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "soak.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "soak.sh: --reps must be a positive integer" >&2; exit 2; }
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || { echo "soak.sh: --timeout must be a positive integer" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "soak.sh: --threads must be like 1,2,4,16" >&2; exit 2; }
IFS=, read -r -a thread_list <<<"$threads"

srcs=()
if [ $# -eq 0 ]; then
  srcs=(tests/c/task_*.c)
else
  for a in "$@"; do
    if [[ $a == */* && -f $a ]]; then
      srcs+=("$a")
    elif [ -f "tests/c/${a%.c}.c" ]; then
      srcs+=("tests/c/${a%.c}.c")
    else
      echo "soak.sh: no program $a (tests/c/${a%.c}.c)" >&2
      exit 2
    fi
  done
fi

lib=${OXIOMP_LIB:-target/release/libomp.so}
[ -f "$lib" ] || { echo "soak.sh: $lib is missing: build it first (cargo build --release)" >&2; exit 2; }
lib=$(realpath "$lib")
newer=$(find runtime/src kmp-abi/src instrument/src src -name '*.rs' -newer "$lib" 2>/dev/null | head -n 1)
[ -z "$newer" ] || echo "soak.sh: warning: $newer is newer than $lib (not rebuilt here)" >&2

# The environment every run starts from: the caller's OpenMP/runtime/loader/tracing settings
# removed, as the harness does.
for v in $(compgen -e); do
  case $v in OMP_* | KMP_* | LD_* | OVNI*) unset "$v" ;; esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/oxiomp-soak.XXXXXX")
mkdir -p "$work/ld" "$work/bin" "$work/logs"
ln -s "$lib" "$work/ld/libomp.so.5"

# The values of directive $2 in file $1, one a line (trimmed).
directive() { sed -n "s|^// oxiomp-test: $2=||p" "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }

interrupted=0
trap 'interrupted=1' INT TERM
failed=()
total=0
start_all=$SECONDS
echo "soak: ${#srcs[@]} program(s) x threads ${threads} x $reps run(s) on $lib (work dir $work)"

for src in "${srcs[@]}"; do
  [ $interrupted = 0 ] || break
  p=$(basename "$src" .c)
  exe=$work/bin/$p
  read -r -a cflags <<<"$(directive "$src" cflags | tr '\n' ' ')"
  if ! clang-19 -fopenmp -O2 -Wall -Werror=implicit-function-declaration -g -Itests/c "$src" \
    "${cflags[@]}" -o "$exe" 2>"$work/logs/$p.compile"; then
    echo "FAIL $p: does not compile (see $work/logs/$p.compile)"
    failed+=("$p: compile error")
    continue
  fi
  mapfile -t envs < <(directive "$src" env)
  read -r -a prefix <<<"$(directive "$src" prefix | tail -n 1)"
  mapfile -t wants < <(directive "$src" stderr-contains)
  own_threads=$(directive "$src" threads | tail -n 1)

  # The thread counts: LIST, restricted to the program's own; "-" = OMP_NUM_THREADS unset.
  counts=()
  if [ "$own_threads" = none ]; then
    counts=(-)
  else
    for t in "${thread_list[@]}"; do
      if [ -z "$own_threads" ] || [[ ,$own_threads, == *,$t,* ]]; then counts+=("$t"); fi
    done
  fi
  if [ ${#counts[@]} -eq 0 ]; then
    echo "skip $p: runs only at threads=$own_threads"
    continue
  fi

  # The loader must pick our library (and nothing else called libomp).
  loaded=$(env "${envs[@]}" LD_LIBRARY_PATH="$work/ld" LD_TRACE_LOADED_OBJECTS=1 "$exe" | grep libomp)
  target=$(awk '{print $3}' <<<"$loaded")
  if [ "$(wc -l <<<"$loaded")" != 1 ] || [ "$(realpath "$target" 2>/dev/null)" != "$lib" ]; then
    echo "FAIL $p: the loader does not pick our library only:"$'\n'"$loaded"
    failed+=("$p: wrong libomp")
    continue
  fi

  for t in "${counts[@]}"; do
    [ $interrupted = 0 ] || break
    nthreads=()
    [ "$t" = - ] || nthreads=(OMP_NUM_THREADS="$t")
    bad=0
    t0=$SECONDS
    for ((r = 1; r <= reps; r++)); do
      [ $interrupted = 0 ] || break
      log=$work/logs/$p.t$t.r$r
      env "${nthreads[@]}" "${envs[@]}" LD_BIND_NOW=1 LD_LIBRARY_PATH="$work/ld" \
        timeout -k 5 "$timeout_s" "${prefix[@]}" "$exe" >"$log.out" 2>"$log.err"
      rc=$?
      total=$((total + 1))
      why=
      case $rc in
        0) for w in "${wants[@]}"; do
             grep -qF -- "$w" "$log.err" || why="stderr lacks \"$w\""
           done ;;
        124 | 137) why="timed out after ${timeout_s} s (hang)" ;;
        *) if [ $rc -gt 128 ]; then why="killed by signal $((rc - 128))"; else why="exit code $rc"; fi ;;
      esac
      # A run stopped by ^C is not a failure of the program.
      [ $interrupted = 0 ] || break
      if [ -n "$why" ]; then
        bad=$((bad + 1))
        failed+=("$p threads=$t run=$r: $why ($log.out/.err)")
        echo "FAIL $p threads=$t run=$r: $why"
        sed -n '1,10p' "$log.err" | sed 's/^/    /'
      else
        rm -f "$log.out" "$log.err"
      fi
    done
    echo "$p threads=$t: $((r - 1 - bad))/$((r - 1)) ok ($((SECONDS - t0)) s)"
  done
done

echo "soak: $total run(s) in $((SECONDS - start_all)) s, ${#failed[@]} failure(s)"
[ $interrupted = 0 ] || echo "soak: interrupted"
if [ ${#failed[@]} -gt 0 ]; then
  printf '  %s\n' "${failed[@]}"
  echo "soak: outputs kept in $work"
  exit 1
fi
rm -rf "$work"
[ $interrupted = 0 ] || exit 130
exit 0
