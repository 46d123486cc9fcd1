#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then what a user does with it:
# checks the installed layout, runs the installed axle-run, compiles every
# installed header (one file including them all), and configures, builds and
# runs tests/install/ (a project doing find_package(Axle), linking Axle::axle).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER
set -u
build=$1
src=$2
cxx=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

fail() {  # fail MESSAGE [LOG]: print the message and the log's tail, exit 1
  echo "FAILED: $1"
  if [ $# -gt 1 ]; then tail -n 40 "$2"; fi
  exit 1
}

# A compile cache keeps reruns cheap; paths under $tmp hash the same each run.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$tmp" CCACHE_NOHASHDIR=1
fi

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  fail "cmake --install $build (every target must be built first)" "$tmp/install.log"

for f in bin/axle-opt bin/axle-run lib/libaxle_core.a lib/cmake/Axle/AxleConfig.cmake \
  lib/cmake/Axle/AxleConfigVersion.cmake include/axle/builder/xla_builder.h \
  include/axle/runtime/host_custom_call.h include/xla/client/xla_builder.h \
  include/xla/hlo/builder/xla_builder.h include/xla/service/custom_call_target_registry.h \
  include/tensorflow/compiler/xla/client/xla_builder.h; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
"$prefix/bin/axle-run" "$src/examples/mlp.hlo" --seed=1 --print_literals >"$tmp/tool.log" 2>&1 ||
  fail "the installed axle-run on examples/mlp.hlo" "$tmp/tool.log"
grep -q '^result: f32\[4,3\]' "$tmp/tool.log" ||
  fail "the installed axle-run printed no result" "$tmp/tool.log"
unwanted=$(cd "$prefix" && find . \( -name '*_test*' -o -name '*test_util*' -o -name '*.cc' \) -print)
[ -z "$unwanted" ] || fail "installed test or source files: $unwanted"

# Every installed header compiles with only the installed include tree (and
# the packages AxleConfig.cmake finds).
mkdir -p "$tmp/headers"
(cd "$prefix/include" && find . -name '*.h' | sort | sed 's|^\./\(.*\)$|#include "\1"|') \
  >"$tmp/headers/all_headers.cc"
cat >"$tmp/headers/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(axle_all_headers LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(Axle REQUIRED)
add_library(all_headers OBJECT all_headers.cc)
target_link_libraries(all_headers PRIVATE Axle::axle)
CMAKE

configure() {  # configure SOURCE BINARY
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
    "${launcher[@]}" >"$2.log" 2>&1
}
configure "$tmp/headers" "$tmp/headers-build" ||
  fail "find_package(Axle) in a fresh project" "$tmp/headers-build.log"
cmake --build "$tmp/headers-build" >>"$tmp/headers-build.log" 2>&1 ||
  fail "compiling every installed header with -I<prefix>/include" "$tmp/headers-build.log"

configure "$src/tests/install" "$tmp/user-build" ||
  fail "configuring tests/install against the installed Axle" "$tmp/user-build.log"
cmake --build "$tmp/user-build" >>"$tmp/user-build.log" 2>&1 ||
  fail "building tests/install against the installed Axle" "$tmp/user-build.log"
# Linking Axle leaves the user's OpenMP start-up alone: no .preinit_array
# entry (Axle's own programs have one; Axle::omp_throttle opts in).
if readelf -S "$tmp/user-build/axle_install_example" | grep -q '\.preinit_array'; then
  fail "the user's program has Axle's .preinit_array entry without Axle::omp_throttle" /dev/null
fi
"$tmp/user-build/axle_install_example" >"$tmp/run.log" 2>&1 ||
  fail "tests/install's program exited $?" "$tmp/run.log"
grep -q 'custom-call(.*custom_call_target="AddThenDouble"' "$tmp/run.log" ||
  fail "the printed HLO has no custom call to AddThenDouble" "$tmp/run.log"
grep -q '^OK$' "$tmp/run.log" || fail "tests/install's program did not print OK" "$tmp/run.log"
echo "install: passed"
