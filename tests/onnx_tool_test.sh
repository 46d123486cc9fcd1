#!/usr/bin/env bash
# End-to-end checks of axle-onnx: inputs as .pb and .npy, output files, the
# timing line, the HLO, clusters with host fallbacks, the disk cache across
# processes, and bad input (exit 1 with a message naming what is wrong,
# never a signal). Usage: onnx_tool_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
tool="$build/tools/axle-onnx"
data="$src/axle/frontends/onnx/testdata"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

mlp="$data/mlp/model.onnx"
"$tool" "$mlp" --input="$data/mlp/test_data_set_0/input_0.pb" --output_dir="$tmp/a/b" >"$tmp/run.out"
check "axle-onnx exits 0" test $? -eq 0
check "axle-onnx prints the output's shape" grep -q "^output 0 'y': f32\[3,10\]$" "$tmp/run.out"
check "axle-onnx writes out_0.npy in a new folder" test -s "$tmp/a/b/out_0.npy"
check "axle-onnx counts its compile" grep -q "^compiles: 1 in " "$tmp/run.out"
check "one cluster prints no cluster report" bash -c "! grep -q '^cluster' '$tmp/run.out'"
"$tool" "$mlp" --input="$data/tool/mlp_x.npy" --output_dir="$tmp/npy" >/dev/null
check ".npy and .pb inputs give the same output" cmp -s "$tmp/a/b/out_0.npy" "$tmp/npy/out_0.npy"
"$tool" "$mlp" --input="$data/tool/mlp_x.npy" --platform=interpreter --output_dir="$tmp/i" >/dev/null
check "--platform=interpreter runs" test -s "$tmp/i/out_0.npy"
# --platform=cuda: with a GPU (and an axle-onnx built with AXLE_CUDA) the
# same output as the cpu's, within rounding; otherwise exit 1 saying why.
"$tool" "$mlp" --input="$data/tool/mlp_x.npy" --platform=cuda --output_dir="$tmp/g" \
  >/dev/null 2>"$tmp/cuda.err"
if [ $? -eq 0 ]; then
  "$tool" "$mlp" --input="$data/tool/mlp_x.npy" --output_dir="$tmp/c" >/dev/null
  check "--platform=cuda agrees with cpu" /usr/bin/python3 -c "import numpy as n, sys
a, b = n.load('$tmp/c/out_0.npy'), n.load('$tmp/g/out_0.npy')
sys.exit(0 if a.shape == b.shape and n.allclose(a, b, rtol=1e-3, atol=1e-4) else 1)"
else
  check "--platform=cuda without a GPU says why" \
    grep -qE "error: .*(CUDA|platform 'cuda')" "$tmp/cuda.err"
fi
"$tool" "$mlp" --input="$data/tool/mlp_x.npy" --iterations=3 >"$tmp/time.out"
check "--iterations prints the timing line" \
  grep -qE "^time per run: min [0-9.]+ ms, median [0-9.]+ ms$" "$tmp/time.out"
"$tool" "$mlp" --input="$data/tool/mlp_x.npy" --print_hlo >"$tmp/hlo.out"
check "--print_hlo prints the module" grep -q "^HloModule mlp" "$tmp/hlo.out"

# Clusters and host fallbacks; two outputs in graph order.
uc="$data/unique_compress"
"$tool" "$uc/model.onnx" --input="$uc/test_data_set_0/input_0.pb" --output_dir="$tmp/uc" \
  >"$tmp/uc.out"
check "a clustered model exits 0" test $? -eq 0
check "the clusters are reported" grep -q "^cluster 1: 1 nodes" "$tmp/uc.out"
check "the fallbacks are reported" grep -q "^host: node 'unique' (Unique): its output shape" \
  "$tmp/uc.out"
check "both outputs are written" test -s "$tmp/uc/out_1.npy"
check "outputs are in graph order" grep -q "^output 1 'counts': s64\[" "$tmp/uc.out"

# External data: weights in a separate file give the inline model's output;
# a truncated or missing file is an error naming the tensor.
ed="$data/external_data"
"$tool" "$ed/model.onnx" --input="$ed/test_data_set_0/input_0.pb" --output_dir="$tmp/ed" >/dev/null
check "an external-data model runs" test $? -eq 0
"$tool" "$ed/inline.onnx" --input="$ed/test_data_set_0/input_0.pb" --output_dir="$tmp/edi" \
  >/dev/null
check "external data gives the inline model's output" cmp -s "$tmp/ed/out_0.npy" "$tmp/edi/out_0.npy"
mkdir -p "$tmp/edcut"
cp "$ed/model.onnx" "$tmp/edcut/"
expect_error "missing external data" "tensor 'w' keeps its data in '.*weights.bin', which does not" \
  "$tmp/edcut/model.onnx" --input="$ed/test_data_set_0/input_0.pb"
head -c 40 "$ed/weights.bin" >"$tmp/edcut/weights.bin"
expect_error "truncated external data" \
  "tensor 'w' has external data at offset 0 of length 48 in '.*', which is past the end" \
  "$tmp/edcut/model.onnx" --input="$ed/test_data_set_0/input_0.pb"

# AXLE_CACHE_DIR: the second process loads the compiled code.
AXLE_CACHE_DIR="$tmp/cache" "$tool" "$mlp" --input="$data/tool/mlp_x.npy" >"$tmp/c1.out"
check "the first process compiles" grep -q "^compiles: 1 in .*(0 from the disk cache)" "$tmp/c1.out"
check "the cache folder has an executable" bash -c "ls '$tmp/cache'/*.axle-exe >/dev/null"
AXLE_CACHE_DIR="$tmp/cache" "$tool" "$mlp" --input="$data/tool/mlp_x.npy" >"$tmp/c2.out"
check "the second process loads it" grep -q "^compiles: 1 in .*(1 from the disk cache)" "$tmp/c2.out"

# Bad input.
printf 'not a model' >"$tmp/garbage.onnx"
expect_error "malformed protobuf" "not a valid ONNX model" "$tmp/garbage.onnx"
expect_error "missing model" "cannot open" "$tmp/none.onnx"
expect_error "missing input" "the model has 1 inputs ('x') but 0 --input files" "$mlp"
expect_error "wrong shape" "input 'x' must have rank 3, got f32\[2\]" "$mlp" \
  --input="$data/tool/x2.npy"
expect_error "wrong type" "input 'x' must have element type f32, got s32\[2\]" \
  "$data/tool/unsupported_op.onnx" --input="$data/tool/x2_int.npy"
printf '\xff\xff\xff' >"$tmp/garbage.pb"
expect_error "malformed input file" "garbage.pb for input 'x'" "$mlp" --input="$tmp/garbage.pb"
expect_error "unsupported op" "node 'frob' (Frobnicate): no kernel for op 'Frobnicate' at opset 13" \
  "$data/tool/unsupported_op.onnx" --input="$data/tool/x2.npy"
expect_error "unsupported opset" "imports opset 99 of the default ONNX domain" \
  "$data/tool/future_opset.onnx" --input="$data/tool/x2.npy"
expect_error "cycle" "cycle through node 'first' (Add)" "$data/tool/cycle.onnx" \
  --input="$data/tool/x2.npy"
expect_error "dangling edge" "node 'add' (Add): input 'missing'" "$data/tool/dangling.onnx" \
  --input="$data/tool/x2.npy"
expect_error "too few inputs" "node 'add' (Add) at opset 13 has 1 input; ONNX's schema takes 2" \
  "$data/tool/too_few_inputs.onnx" --input="$data/tool/x2.npy"
expect_error "empty required input" "input 0 ('A') is required but its name is empty" \
  "$data/tool/empty_input.onnx" --input="$data/tool/x2.npy"
expect_error "missing attribute" "node 'cast' (Cast) at opset 13: the required attribute 'to' is missing" \
  "$data/tool/missing_attribute.onnx" --input="$data/tool/x2.npy"
expect_error "attribute type" "attribute 'axis' must be of type INT" \
  "$data/tool/attribute_type.onnx" --input="$data/tool/x2.npy"
expect_error "unknown platform" "platform 'tpu'" "$mlp" --input="$data/tool/x2.npy" --platform=tpu

report onnx_tool_test
