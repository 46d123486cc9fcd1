//===- layout_test.cc - Non-default layouts and batch norms on cpu ---------===//
//
// Modules whose parameters, results and instructions have non-descending
// layouts run on the `cpu` platform (layout-normalization in cpu-prepare):
// values agree with the interpreter, and the result buffer holds the
// elements in the result's own layout. batch-norm ops run through
// batchnorm-expander.
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <vector>

#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/runtime/custom_call_registry.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// Copies six floats: a custom call whose buffers' layouts are its interface.
void CpuLayoutCopy6(void* out, const void** in) { std::memcpy(out, in[0], 6 * sizeof(float)); }
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuLayoutCopy6, "Host");

using testing::ClientFor;
using testing::CompileOn;
using testing::ExpectCpuAgrees;

// Distinct small values, logically row-major, in `layout` (empty: default).
Literal Values(PrimitiveType type, std::vector<int64_t> dims, int seed,
               std::vector<int64_t> minor_to_major = {}) {
  Literal f64(ShapeUtil::MakeShape(F64, dims));
  auto data = f64.data<double>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = 0.25 * static_cast<double>(static_cast<int64_t>((i * 7 + seed * 13) % 23) - 11);
  }
  absl::StatusOr<Literal> converted = f64.Convert(type);
  CHECK(converted.ok()) << converted.status();
  if (!minor_to_major.empty()) converted->set_layout(Layout(minor_to_major));
  return *std::move(converted);
}

// The raw bytes of the cpu result buffer of `text` run on `arguments`, as
// f32 values.
std::vector<float> RawResult(absl::string_view text, const std::vector<Literal>& arguments) {
  auto executable = CompileOn("cpu", text);
  CHECK(executable.ok()) << executable.status();
  LocalClient* client = ClientFor("cpu");
  std::vector<ScopedShapedBuffer> buffers;
  std::vector<const ShapedBuffer*> pointers;
  for (const Literal& argument : arguments) {
    buffers.push_back(*client->LiteralToShapedBuffer(argument, 0));
  }
  for (const auto& buffer : buffers) pointers.push_back(&buffer);
  absl::StatusOr<ScopedShapedBuffer> result = (*executable)->Run(pointers, {});
  CHECK(result.ok()) << result.status();
  const se::DeviceMemoryBase& memory = result->buffer({});
  std::vector<float> values(memory.size() / sizeof(float));
  std::memcpy(values.data(), memory.opaque(), memory.size());
  return values;
}

TEST(CpuLayouts, ColumnMajorParametersAndResult) {
  const char* text = R"(
HloModule m
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[2,3]{0,1} parameter(1)
  s = f32[2,3]{0,1} add(a, b)
  ROOT r = f32[2,3]{0,1} multiply(s, a)
}
)";
  std::vector<Literal> arguments;
  arguments.push_back(Values(F32, {2, 3}, 1, {0, 1}));
  arguments.push_back(Values(F32, {2, 3}, 2, {0, 1}));
  ExpectCpuAgrees(text, arguments);
  // The buffer is column-major: element (i, j) at j * 2 + i.
  std::vector<float> raw = RawResult(text, arguments);
  ASSERT_EQ(raw.size(), 6u);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      float a = arguments[0].Get<float>({i, j}), b = arguments[1].Get<float>({i, j});
      EXPECT_EQ(raw[j * 2 + i], (a + b) * a) << i << "," << j;
    }
  }
}

TEST(CpuLayouts, TransposeToColumnMajorIsACopyOfTheBytes) {
  const char* text = R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT t = f32[3,2]{0,1} transpose(a), dimensions={1,0}
}
)";
  std::vector<Literal> arguments;
  arguments.push_back(Values(F32, {2, 3}, 3));
  ExpectCpuAgrees(text, arguments);
  std::vector<float> raw = RawResult(text, arguments);
  auto input = arguments[0].data<float>();
  ASSERT_EQ(raw.size(), input.size());
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(raw[i], input[i]) << i;
}

TEST(CpuLayouts, DotWithColumnMajorOperands) {
  std::vector<Literal> arguments;
  arguments.push_back(Values(F32, {4, 5}, 1));
  arguments.push_back(Values(F32, {5, 3}, 2, {0, 1}));
  ExpectCpuAgrees(R"(
HloModule m
ENTRY e {
  a = f32[4,5] parameter(0)
  b = f32[5,3]{0,1} parameter(1)
  ROOT d = f32[4,3]{0,1} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                  arguments);
  // The corpus' mixed-type case: s8 x s16{0,1} -> s32.
  std::vector<Literal> ints;
  ints.push_back(Values(S8, {5, 5}, 3));
  ints.push_back(Values(S16, {5, 1}, 4, {0, 1}));
  ExpectCpuAgrees(R"(
HloModule m
ENTRY e {
  p0 = s8[5,5]{1,0} parameter(0)
  p1 = s16[5,1]{0,1} parameter(1)
  ROOT dot = s32[5,1]{1,0} dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                  ints);
}

TEST(CpuLayouts, ReductionsConstantsAndLoops) {
  std::vector<Literal> arguments;
  arguments.push_back(Values(F32, {3, 4, 5}, 5, {0, 2, 1}));
  ExpectCpuAgrees(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
cond {
  st = (s32[], f32[4,3]{0,1}) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  st = (s32[], f32[4,3]{0,1}) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  v = f32[4,3]{0,1} get-tuple-element(st), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  k = f32[4,3]{1,0} constant({{1,2,3},{4,5,6},{7,8,9},{10,11,12}})
  w = f32[4,3]{0,1} add(v, k)
  ROOT r = (s32[], f32[4,3]{0,1}) tuple(j, w)
}
ENTRY e {
  x = f32[3,4,5]{0,2,1} parameter(0)
  z = f32[] constant(0)
  r = f32[3,4]{0,1} reduce(x, z), dimensions={2}, to_apply=add
  t = f32[4,3]{0,1} transpose(r), dimensions={1,0}
  c = f32[4,3]{0,1} constant({{1,0,0},{0,1,0},{0,0,1},{1,1,1}})
  m = f32[4,3]{0,1} multiply(t, c)
  i0 = s32[] constant(0)
  init = (s32[], f32[4,3]{0,1}) tuple(i0, m)
  loop = (s32[], f32[4,3]{0,1}) while(init), condition=cond, body=body
  ROOT out = f32[4,3]{0,1} get-tuple-element(loop), index=1
}
)",
                  arguments);
}

TEST(CpuLayouts, VariadicReduceWindowWithColumnMajorResults) {
  std::vector<Literal> arguments;
  arguments.push_back(Values(F32, {4, 6}, 1, {0, 1}));
  arguments.push_back(Values(F32, {4, 6}, 2, {0, 1}));
  ExpectCpuAgrees(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  s = f32[] add(a, c)
  t = f32[] maximum(b, d)
  ROOT r = (f32[], f32[]) tuple(s, t)
}
ENTRY e {
  x = f32[4,6]{0,1} parameter(0)
  y = f32[4,6]{0,1} parameter(1)
  z = f32[] constant(0)
  ROOT rw = (f32[3,3]{0,1}, f32[3,3]{0,1}) reduce-window(x, y, z, z), window={size=2x2 stride=1x2}, to_apply=add
}
)",
                  arguments);
}

TEST(CpuLayouts, SortGatherAndConditionalOnColumnMajorArrays) {
  std::vector<Literal> arguments;
  arguments.push_back(Values(F32, {4, 3}, 1, {0, 1}));
  arguments.push_back(Values(S32, {4, 3}, 2, {0, 1}));
  arguments.push_back(Values(PRED, {}, 1));
  ExpectCpuAgrees(R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT
}
neg {
  x = f32[4,3]{0,1} parameter(0)
  ROOT n = f32[4,3]{0,1} negate(x)
}
id {
  x = f32[4,3]{0,1} parameter(0)
  ROOT c = f32[4,3]{0,1} copy(x)
}
ENTRY e {
  x = f32[4,3]{0,1} parameter(0)
  k = s32[4,3]{0,1} parameter(1)
  p = pred[] parameter(2)
  s = (f32[4,3]{0,1}, s32[4,3]{0,1}) sort(x, k), dimensions={0}, to_apply=lt
  v = f32[4,3]{0,1} get-tuple-element(s), index=0
  i = s32[2,1] constant({{3},{1}})
  g = f32[2,3]{0,1} gather(v, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  c = f32[4,3]{0,1} conditional(p, x, x), true_computation=neg, false_computation=id
  sk = s32[4,3]{0,1} get-tuple-element(s), index=1
  ROOT t = (f32[2,3]{0,1}, f32[4,3]{0,1}, s32[4,3]{0,1}) tuple(g, c, sk)
}
)",
                  arguments);
}

TEST(CpuLayouts, CustomCallOnColumnMajorArraysIsUnimplemented) {
  auto compiled = CompileOn("cpu", R"(
HloModule m
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  ROOT c = f32[2,3]{0,1} custom-call(a), custom_call_target="CpuLayoutCopy6"
}
)");
  ASSERT_FALSE(compiled.ok());
  EXPECT_TRUE(absl::IsUnimplemented(compiled.status())) << compiled.status();
  EXPECT_NE(compiled.status().message().find("f32[2,3]{0,1}"), absl::string_view::npos)
      << compiled.status();
}

TEST(CpuBatchNorm, TrainingInferenceAndGradAgreeWithTheInterpreter) {
  std::vector<Literal> training;
  training.push_back(Values(F32, {2, 3, 4, 5}, 1));
  training.push_back(Values(F32, {3}, 2));
  training.push_back(Values(F32, {3}, 3));
  ExpectCpuAgrees(R"(
HloModule m
ENTRY e {
  x = f32[2,3,4,5] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT bn = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
}
)",
                  training, ErrorSpec(1e-4, 1e-4));
  std::vector<Literal> inference;
  inference.push_back(Values(F32, {6, 4}, 1));
  inference.push_back(Values(F32, {4}, 2));
  inference.push_back(Values(F32, {4}, 3));
  inference.push_back(Values(F32, {4}, 4));
  ExpectCpuAgrees(R"(
HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  scale = f32[4] parameter(1)
  offset = f32[4] parameter(2)
  mean = f32[4] parameter(3)
  var = f32[4] constant({0.5, 1, 2, 4})
  ROOT bn = f32[6,4] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=1
}
)",
                  inference, ErrorSpec(1e-4, 1e-4));
  std::vector<Literal> grad;
  grad.push_back(Values(F32, {4, 2, 3}, 1));
  grad.push_back(Values(F32, {4}, 2));
  grad.push_back(Values(F32, {4}, 3));
  grad.push_back(Values(F32, {4, 2, 3}, 4));
  ExpectCpuAgrees(R"(
HloModule m
ENTRY e {
  x = f32[4,2,3] parameter(0)
  scale = f32[4] parameter(1)
  mean = f32[4] parameter(2)
  var = f32[4] constant({0.5, 1, 2, 4})
  dy = f32[4,2,3] parameter(3)
  ROOT g = (f32[4,2,3], f32[4], f32[4]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=0
}
)",
                  grad, ErrorSpec(1e-4, 1e-4));
}

}  // namespace
}  // namespace axle
