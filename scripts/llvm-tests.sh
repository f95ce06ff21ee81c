#!/usr/bin/env bash
# LLVM's own OpenMP runtime test suite (openmp/runtime/test of LLVM 19.1.7, the suite Debian's
# libomp 19 was built with), run on oxiomp and on Debian's libomp with the same clang-19:
# prints both pass counts (all tests, and without the OMPT ones), and every test whose result
# differs. Opt-in, not part of CI (several minutes at 2 jobs).
#
#   scripts/llvm-tests.sh [LIT_ARGS...]     e.g. scripts/llvm-tests.sh --filter 'tasking/'
#   LLVM_TESTS_ONLY=oxiomp scripts/llvm-tests.sh -v --filter ...    one library, its output
#
# The suite comes from Debian's source package llvm-toolchain-19 (the version installed, about
# 165 MB, fetched once with `apt-get source` into ~/.cache/llvm-19-src; a deb-src entry is
# added beside the machine's Debian sources when there is none); lit is the one in it,
# FileCheck and not are llvm-19-tools'. Results: target/llvm-tests/{oxiomp,libomp}.json (lit's
# own format) and target/llvm-tests/differences.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/setup.sh >/dev/null
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
[ -x /usr/lib/llvm-19/bin/FileCheck ] || {
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq llvm-19-tools >/dev/null
}

version=19.1.7
cache=${LLVM_TESTS_CACHE:-$HOME/.cache/llvm-19-src}
src=$cache/llvm-toolchain-19_$version
if [ ! -f "$src/openmp/runtime/test/lit.cfg" ]; then
  mkdir -p "$cache"
  if ! apt-get source --print-uris llvm-toolchain-19 >/dev/null 2>&1; then
    # No deb-src entry: one for the same archives and suites as the machine's binary packages.
    $sudo sh -c "sed 's/^Types: deb\$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      > /etc/apt/sources.list.d/oxiomp-deb-src.sources"
    $sudo apt-get update -qq
  fi
  (cd "$cache" && apt-get source --download-only llvm-toolchain-19 >/dev/null)
  tar -C "$cache" -xJf "$cache"/llvm-toolchain-19_$version.orig.tar.xz \
    --wildcards '*/openmp/*' '*/llvm/utils/lit/*'
  rm -f "$cache"/llvm-toolchain-19_*.tar.xz "$cache"/llvm-toolchain-19_*.dsc
fi

cargo build --release
out=$root/target/llvm-tests
rm -rf "$out"
mkdir -p "$out/oxiomp-lib"
# A copy: a rebuild while the tests run does not change the library under them.
cp "$root/target/release/libomp.so" "$out/oxiomp-lib/libomp.so"
ln -sf libomp.so "$out/oxiomp-lib/libomp.so.5"

# One lit configuration per library: what CMake would write into lit.site.cfg.
site() { # NAME LIBDIR
  mkdir -p "$out/$1"
  cat > "$out/$1/lit.site.cfg" <<EOF
config.test_c_compiler = "clang-19"
config.test_cxx_compiler = "clang++-19"
config.test_compiler_features = ['clang', 'clang-19', 'clang-19.1', 'clang-$version']
config.test_compiler_has_omp_h = 1
config.test_filecheck = "/usr/lib/llvm-19/bin/FileCheck"
config.test_not = "/usr/lib/llvm-19/bin/not"
config.test_openmp_flags = "-fopenmp -pthread"
config.test_extra_flags = ""
config.libomp_obj_root = "$out/$1"
config.library_dir = "$2"
config.omp_header_directory = "/usr/lib/llvm-19/lib/clang/19/include"
config.operating_system = "Linux"
config.hwloc_library_dir = ""
config.using_hwloc = False
config.has_ompt = True
config.has_ompx_taskgraph = False
config.has_libm = True
config.has_libatomic = True
config.is_standalone_build = True
config.has_omit_frame_pointer_flag = 1
config.target_arch = "x86_64"
lit_config.load_config(config, "$src/openmp/runtime/test/lit.cfg")
EOF
}
site oxiomp "$out/oxiomp-lib"
site libomp /usr/lib/llvm-19/lib

jobs=${LLVM_TESTS_JOBS:-2}
libs=${LLVM_TESTS_ONLY:-oxiomp libomp}
for lib in $libs; do
  echo "== $lib"
  # lit exits 1 when a test fails: the counts are the result here.
  python3 "$src/llvm/utils/lit/lit.py" -j "$jobs" -s --no-progress-bar \
    -o "$out/$lib.json" "$@" "$out/$lib" > "$out/$lib.log" 2>&1 || true
  tail -n 12 "$out/$lib.log" | grep -E '^ *(Passed|Failed|Unsupported|Expectedly|Unexpectedly|Timed|Unresolved) *:' || true
done

[ "$libs" = "oxiomp libomp" ] || { cat "$out/$lib.log"; exit 0; }
python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
def results(lib):
    with open(f"{out}/{lib}.json") as f:
        return {t["name"].split(" :: ", 1)[1]: t["code"] for t in json.load(f)["tests"]}
ours, theirs = results("oxiomp"), results("libomp")
passing = {"PASS", "XFAIL"}
def count(r, ompt):
    return sum(1 for n, c in r.items() if c in passing and (ompt or not n.startswith("ompt/")))
lines = []
for lib, r in (("oxiomp", ours), ("libomp", theirs)):
    lines.append(f"{lib}: {count(r, True)} of {len(r)} pass; without OMPT: {count(r, False)} of "
                 f"{sum(1 for n in r if not n.startswith('ompt/'))}")
diff = sorted(n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n))
lines.append(f"{len(diff)} tests differ (oxiomp / libomp):")
lines += [f"  {n}: {ours.get(n, '-')} / {theirs.get(n, '-')}" for n in diff]
text = "\n".join(lines) + "\n"
open(f"{out}/differences.txt", "w").write(text)
print(text, end="")
EOF
