#!/usr/bin/env bash
# End-to-end checks of axle-aot's command line: the files it writes, the
# header's constexpr shapes, what the object defines and needs (its
# kernels' symbols local, only the runtime's entry points and the C
# library's undefined), and bad input (exit 1 with a message naming what is wrong, never a signal). The
# generated classes themselves are tested by tools/axle_aot_test.cc.
# Usage: onnx_aot_tool_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
tool="$build/tools/axle-aot"
data="$src/axle/frontends/onnx/testdata"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

mlp="$data/mlp/model.onnx"
expect_error "a missing output folder" "cannot write $tmp/out/mlp" \
  "$mlp" --class=a::b::Mlp -o "$tmp/out/mlp" --dim=N=3
mkdir -p "$tmp/out"
"$tool" "$mlp" --class=a::b::Mlp -o "$tmp/out/mlp" --dim=N=3 \
  >"$tmp/run.out" 2>&1
check "axle-aot exits 0" test $? -eq 0
for ext in h o cc program; do check "axle-aot writes mlp.$ext" test -s "$tmp/out/mlp.$ext"; done
check "the header has the argument's shape" \
  grep -q "kArg0Shape = {3, 4, 4};" "$tmp/out/mlp.h"
check "the header has the result's shape" grep -q "kResult0Shape = {3, 10};" "$tmp/out/mlp.h"
check "the header names the argument" grep -q "Arg0Type\* arg_x_data()" "$tmp/out/mlp.h"
check "the header names the result" grep -q "Result0Type\* result_y_data() const" "$tmp/out/mlp.h"
check "the header has the class in its namespaces" grep -q "^namespace b {" "$tmp/out/mlp.h"
check "the object defines Run" bash -c "nm -C '$tmp/out/mlp.o' | grep -q 'T a::b::Mlp::Run()'"
check "the object loads the program" bash -c "nm -u '$tmp/out/mlp.o' | grep -q AxleAotLoad"
check "the object needs no HLO parser" bash -c "! nm -u '$tmp/out/mlp.o' | grep -qi 'hlo\|parse'"
kernel=' \(kernel\|dot_loop\|convolution_loop\)_[0-9]'
check "the object has kernel code" bash -c "nm '$tmp/out/mlp.o' | grep -q ' t$kernel'"
check "the object's kernels are local" bash -c "! nm '$tmp/out/mlp.o' | grep -q ' T$kernel'"

# Kernels for another CPU: x86-64 (the baseline), without AVX-512 or AVX2.
"$tool" "$mlp" --class=M -o "$tmp/out/baseline" --dim=N=3 --target_cpu=x86-64 \
  --target_features=+sse4.2 >"$tmp/run.out" 2>&1
check "axle-aot --target_cpu=x86-64 exits 0" test $? -eq 0
check "axle-aot --target_cpu=x86-64 writes the object" test -s "$tmp/out/baseline.o"
check "baseline kernels use no AVX registers" \
  bash -c "! objdump -d '$tmp/out/baseline.o' | grep -q '%[yz]mm'"
expect_error "an unknown target cpu" "target cpu 'no-such-cpu'" \
  "$mlp" --class=M -o "$tmp/out/x" --dim=N=1 --target_cpu=no-such-cpu
expect_error "an unknown target feature" "target feature '+no-such-feature'" \
  "$mlp" --class=M -o "$tmp/out/x" --dim=N=1 --target_features=+no-such-feature

# External data: a missing weights file is an error naming the tensor.
mkdir -p "$tmp/ed"
cp "$data/external_data/model.onnx" "$tmp/ed/"
expect_error "missing external data" "tensor 'w' keeps its data in '.*weights.bin', which does not exist" \
  "$tmp/ed/model.onnx" --class=M -o "$tmp/out/ed"

expect_error "a dynamic dimension" "input 'x' has a dynamic dimension 'N'" \
  "$mlp" --class=M -o "$tmp/out/x"
expect_error "a bad --dim" "expected SYMBOL=N" "$mlp" --class=M -o "$tmp/out/x" --dim=N
expect_error "a bad class name" "'9x' is not an identifier" \
  "$mlp" --class=ns::9x -o "$tmp/out/x" --dim=N=1
expect_error "a missing model" "nope.onnx" "$tmp/nope.onnx" --class=M -o "$tmp/out/x"
expect_error "a failing compiler" "the C++ compiler failed" \
  "$mlp" --class=M -o "$tmp/out/x" --dim=N=1 --cxx=false
expect_error "a model with host nodes" "no kernel for op 'NonZero'" \
  "$data/nonzero_gather/model.onnx" --class=M -o "$tmp/out/x" --dim=N=2

report
