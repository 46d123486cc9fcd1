#!/usr/bin/env bash
# What a program linked only with axle-aot's objects and axle_aot_runtime
# holds (tools/axle_aot_standalone.cc): it runs the models and agrees with
# their reference outputs, and it holds no compiler: libLLVM is not among
# its libraries, and no symbol of LLVM, the HLO IR, the HLO parser, the
# passes or the Jit is linked in (docs/graph_frontend.md, "AOT").
# Usage: aot_runtime_link_test.sh BINARY TESTDATA_DIR
set -u
bin=$1
testdata=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

check "the program runs both models" "$bin" "$testdata"
ldd "$bin" >"$tmp/libraries"
check "ldd lists the program's libraries" grep -q "libc.so" "$tmp/libraries"
check "ldd lists oneDNN" grep -q "libdnnl" "$tmp/libraries"
check "no libLLVM" bash -c "! grep -qi llvm '$tmp/libraries'"
nm -C "$bin" >"$tmp/symbols"
check "nm lists the program's symbols" grep -q "AxleAotLoad" "$tmp/symbols"
check "the serialized program's loader is linked" grep -q "axle::cpu::LoadProgram" "$tmp/symbols"
for loader in LoadScatterThunk LoadSelectAndScatterThunk LoadComparatorSortThunk \
  LoadRngBitGeneratorThunk LoadCustomCallThunk; do
  check "the $loader loader is linked" grep -q "axle::cpu::$loader" "$tmp/symbols"
done
for pattern in 'llvm::' 'axle::HloInstruction::' 'axle::HloModule::' 'axle::HloParser' \
  'ParseAndReturnUnverifiedModule' 'axle::HloPassPipeline' 'axle::cpu::Jit::' \
  'axle::cpu::LoopKernelModule' 'axle::cpu::ProgramBuilder' 'axle::HloEvaluator' \
  'axle::HloCustomCallInstruction::'; do
  check "no $pattern symbols" bash -c "! grep -qF -- '$pattern' '$tmp/symbols'"
done

report
