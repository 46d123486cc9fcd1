#!/usr/bin/env bash
# End-to-end checks of axle-opt and axle-run: exit codes, error locations,
# output files and the timing line. Usage: tools_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
opt="$build/tools/axle-opt"
run="$build/tools/axle-run"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

# axle-opt prints canonical text that is a fixed point.
"$opt" "$src/examples/mlp.hlo" >"$tmp/a.hlo" 2>"$tmp/err"
check "axle-opt exits 0 on a valid module" test $? -eq 0
"$opt" "$tmp/a.hlo" >"$tmp/b.hlo"
check "axle-opt output is a fixed point" cmp -s "$tmp/a.hlo" "$tmp/b.hlo"
"$opt" - <"$src/examples/mlp.hlo" >"$tmp/c.hlo"
check "axle-opt reads standard input" cmp -s "$tmp/a.hlo" "$tmp/c.hlo"
"$opt" "$src/examples/mlp.hlo" -o "$tmp/d.hlo"
check "axle-opt -o writes the file" cmp -s "$tmp/a.hlo" "$tmp/d.hlo"

# A binary HloModuleProto (.pb, by extension): written by -o, read back.
if "$opt" "$src/examples/mlp.hlo" -o "$tmp/mlp.pb" 2>"$tmp/err"; then
  "$opt" "$tmp/mlp.pb" >"$tmp/pb.hlo"
  check "axle-opt reads the .pb it wrote" cmp -s "$tmp/a.hlo" "$tmp/pb.hlo"
  "$run" "$tmp/mlp.pb" --seed=1 >/dev/null
  check "axle-run runs a .pb" test $? -eq 0
else
  check "axle-opt -o .pb fails only without protobuf" grep -q "needs Axle built with protobuf" "$tmp/err"
fi

# Errors are located and the exit code is 1, never a signal.
printf 'HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] frobnicate(p)\n}\n' >"$tmp/bad.hlo"
"$opt" "$tmp/bad.hlo" >/dev/null 2>"$tmp/err"
check "axle-opt exits 1 on a bad module" test $? -eq 1
check "the error names file:line:col" grep -q "bad.hlo:5:[0-9]*: error:" "$tmp/err"
"$opt" "$tmp/missing.hlo" >/dev/null 2>"$tmp/err"
check "a missing file is exit 1" test $? -eq 1
"$opt" --passes=nosuchpass "$src/examples/mlp.hlo" >/dev/null 2>"$tmp/err"
check "an unknown pass is exit 1" test $? -eq 1
check "an unknown pass lists the known ones" grep -q "known passes" "$tmp/err"

# DCE through --passes removes an unused instruction.
printf 'HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  dead = f32[2] negate(p)\n  ROOT r = f32[2] add(p, p)\n}\n' >"$tmp/dce.hlo"
"$opt" --passes=dce "$tmp/dce.hlo" >"$tmp/dce.out"
check "dce removes the dead negate" bash -c "! grep -q negate '$tmp/dce.out'"
check "dce keeps the root" grep -q "add(" "$tmp/dce.out"

# The cpu backend's own passes, registered by its library axle_cpu_passes
# (axle/cpu/runtime/register_cpu_passes.cc), which axle-opt links.
cat >"$tmp/dot_bias_relu.hlo" <<'HLO'
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  bias = f32[16] parameter(2)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(bias), dimensions={1}
  y = f32[4,16] add(d, bb)
  z = f32[] constant(0)
  zb = f32[4,16] broadcast(z), dimensions={}
  ROOT r = f32[4,16] maximum(y, zb)
}
HLO
"$opt" "$tmp/dot_bias_relu.hlo" --passes=dot-epilogue-fusion -o "$tmp/epilogue.hlo"
check "dot-epilogue-fusion runs" test $? -eq 0
check "dot-epilogue-fusion makes a kOutput fusion" grep -q "kind=kOutput" "$tmp/epilogue.hlo"

# Two column reductions that read y (as batch norm backward's sums do): one
# kInput fusion with a tuple of both reduces after cpu-multi-output-fusion,
# two after the shared multi-output-fusion.
cat >"$tmp/sibling_reductions.hlo" <<'HLO'
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,32] parameter(0)
  y = f32[64,32] parameter(1)
  m = f32[64,32] multiply(x, y)
  z = f32[] constant(0)
  r1 = f32[32] reduce(m, z), dimensions={0}, to_apply=add
  e = f32[64,32] exponential(y)
  r2 = f32[32] reduce(e, z), dimensions={0}, to_apply=add
  ROOT t = (f32[32], f32[32]) tuple(r1, r2)
}
HLO
"$opt" "$tmp/sibling_reductions.hlo" --passes=fusion,cpu-multi-output-fusion -o "$tmp/cpu.hlo"
check "cpu-multi-output-fusion runs" test $? -eq 0
check "cpu-multi-output-fusion merges the reductions" \
  test "$(grep -c 'kind=kInput' "$tmp/cpu.hlo")" -eq 1
"$opt" "$tmp/sibling_reductions.hlo" --passes=fusion,multi-output-fusion -o "$tmp/shared.hlo"
check "multi-output-fusion runs" test $? -eq 0
check "multi-output-fusion keeps them apart" \
  test "$(grep -c 'kind=kInput' "$tmp/shared.hlo")" -eq 2

# axle-run: results, .npy outputs, timing line.
"$run" "$src/examples/mlp.hlo" --seed=1 --print_literals --output_dir="$tmp" >"$tmp/run.out"
check "axle-run exits 0" test $? -eq 0
check "axle-run prints the result literal" grep -q "^result: f32\[4,3\]" "$tmp/run.out"
check "axle-run writes out_0.npy" test -s "$tmp/out_0.npy"
"$run" "$src/examples/mlp.hlo" --seed=1 --iterations=3 >"$tmp/time.out"
check "axle-run --iterations prints the timing line" \
  grep -qE "^time per run: min [0-9.]+ ms, median [0-9.]+ ms$" "$tmp/time.out"
"$run" "$src/examples/mlp.hlo" --input="$tmp/out_0.npy" >/dev/null 2>"$tmp/err"
check "a wrong number of inputs is exit 1" test $? -eq 1
check "the input error says how many parameters" grep -q "takes 5 parameters" "$tmp/err"
"$run" "$src/examples/mlp.hlo" --platform=nosuch >/dev/null 2>"$tmp/err"
check "an unknown platform is exit 1" test $? -eq 1
check "the platform error lists the known ones" grep -q "known platforms: .*interpreter" "$tmp/err"
# --platform=cuda where the CUDA backend is built (AXLE_CUDA) but cannot run
# (no driver or GPU here; with one, modules do not run on it yet): exit 1
# with a message naming CUDA, never a crash.
"$run" "$src/examples/mlp.hlo" --platform=cuda >/dev/null 2>"$tmp/err" && cuda_status=0 || cuda_status=$?
if ! grep -q "no platform named" "$tmp/err"; then
  check "--platform=cuda without a usable GPU is exit 1" test "$cuda_status" -eq 1
  check "the cuda platform error names CUDA" grep -q "CUDA" "$tmp/err"
fi
"$run" "$src/examples/mlp.hlo" --reference_platform=interpreter >"$tmp/ref.out"
check "--reference_platform agreeing is exit 0" test $? -eq 0
check "--reference_platform says they agree" grep -q "^OK: interpreter agrees" "$tmp/ref.out"
"$run" "$src/examples/aliasing/increment.hlo" --print_literals >"$tmp/inc.out"
check "axle-run runs an aliased module" grep -q "^result: f32\[\] " "$tmp/inc.out"

# Dumps: the module after each changing pass, timings, the buffer
# assignment; the same through AXLE_DUMP_TO for any program.
"$opt" "$src/examples/mlp.hlo" --passes=fusion --dump-to="$tmp/dump" >/dev/null
check "--dump-to writes the module after a pass" test -s "$tmp/dump/0000.mlp.fusion.hlo"
check "--dump-to writes the timings" test -s "$tmp/dump/mlp.timings.txt"
check "--dump-to writes the buffer assignment" grep -q "^allocation 0: parameter" "$tmp/dump/mlp.buffer-assignment.txt"
AXLE_DUMP_TO="$tmp/envdump" "$opt" "$src/examples/mlp.hlo" --passes=fusion >/dev/null
check "AXLE_DUMP_TO dumps too" test -s "$tmp/envdump/mlp.timings.txt"

# Feeding results back in as inputs: the same outputs again.
printf 'HloModule m\n\nENTRY e {\n  p = f32[4,3] parameter(0)\n  ROOT r = f32[4,3] negate(p)\n}\n' >"$tmp/neg.hlo"
mkdir -p "$tmp/o1"
"$run" "$tmp/neg.hlo" --input="$tmp/out_0.npy" --output_dir="$tmp/o1" >/dev/null
# --output_dir is created when it does not exist (parents too).
"$run" "$tmp/neg.hlo" --input="$tmp/o1/out_0.npy" --output_dir="$tmp/o2/nested" >/dev/null
check "negate twice through .npy files is the identity" cmp -s "$tmp/out_0.npy" "$tmp/o2/nested/out_0.npy"

# Infeed and outfeed: --infeed files are the values the infeed ops take, in
# order; outfeed values are printed and written as outfeed_N.npy.
printf 'HloModule m\n\nENTRY e {\n  ROOT c = f32[3] constant({1, 2, 3})\n}\n' >"$tmp/c1.hlo"
printf 'HloModule m\n\nENTRY e {\n  ROOT c = f32[3] constant({10, 20, 30})\n}\n' >"$tmp/c2.hlo"
"$run" "$tmp/c1.hlo" --output_dir="$tmp/f1" >/dev/null
"$run" "$tmp/c2.hlo" --output_dir="$tmp/f2" >/dev/null
cat >"$tmp/feed.hlo" <<'HLO'
HloModule feed

ENTRY e {
  t0 = token[] after-all()
  in0 = (f32[3], token[]) infeed(t0)
  x = f32[3] get-tuple-element(in0), index=0
  t1 = token[] get-tuple-element(in0), index=1
  in1 = (f32[3], token[]) infeed(t1)
  y = f32[3] get-tuple-element(in1), index=0
  t2 = token[] get-tuple-element(in1), index=1
  s = f32[3] add(x, y)
  o = token[] outfeed(s, t2), outfeed_shape=f32[3]
  ROOT m = f32[3] multiply(x, y)
}
HLO
for platform in interpreter cpu; do
  "$run" "$tmp/feed.hlo" --platform=$platform --infeed="$tmp/f1/out_0.npy" \
    --infeed="$tmp/f2/out_0.npy" --print_literals --output_dir="$tmp/feed_$platform" \
    >"$tmp/feed_$platform.out" 2>&1
  check "axle-run --infeed on $platform exits 0" test $? -eq 0
  check "the infeeds reach the module on $platform" grep -q "^result: f32\[3\] {10, 40, 90}" "$tmp/feed_$platform.out"
  check "the outfeed is printed on $platform" grep -q "^outfeed 0: f32\[3\] {11, 22, 33}" "$tmp/feed_$platform.out"
  check "the outfeed is written on $platform" test -s "$tmp/feed_$platform/outfeed_0.npy"
done
"$run" "$tmp/feed.hlo" --platform=cpu --reference_platform=interpreter \
  --infeed="$tmp/f1/out_0.npy" --infeed="$tmp/f2/out_0.npy" >"$tmp/feedref.out" 2>&1
check "results and outfeeds agree with the interpreter" grep -q "^OK: cpu agrees" "$tmp/feedref.out"
AXLE_FEED_TIMEOUT=200 "$run" "$tmp/feed.hlo" --infeed="$tmp/f1/out_0.npy" >/dev/null 2>"$tmp/err"
check "too few infeed values is exit 1" test $? -eq 1
check "the missing infeed value is named" grep -q "infeed" "$tmp/err"
"$run" "$tmp/feed.hlo" --infeed="$tmp/out_0.npy" >/dev/null 2>"$tmp/err"
check "an infeed file of the wrong shape is exit 1" test $? -eq 1
check "the infeed shape error names both shapes" grep -q "the module's infeeds take f32\[3\]" "$tmp/err"
"$run" "$tmp/neg.hlo" --input="$tmp/out_0.npy" --infeed="$tmp/f1/out_0.npy" >/dev/null 2>"$tmp/err"
check "--infeed for a module without infeed is exit 1" grep -q "has no infeed" "$tmp/err"

# A parameter larger than the machine's memory is an error naming it, not
# an abort.
printf 'HloModule m\n\nENTRY e {\n  p = f32[100000000000] parameter(0)\n  ROOT r = f32[100000000000] negate(p)\n}\n' >"$tmp/big.hlo"
"$run" "$tmp/big.hlo" >"$tmp/big.out" 2>&1 && big_status=0 || big_status=$?
check "a 400 GB parameter is a clear error" test "$big_status" -eq 1
check "the error names the parameter and its size" grep -q "parameter 0 (p) of shape f32\[100000000000\]" "$tmp/big.out"

report tools
