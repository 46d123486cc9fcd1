//===- gpu_executable_test.cc - Modules run on a CUDA device ---------------===//
//
// On a GPU: modules compiled through LocalClient for platform "cuda" and
// run there, compared with the interpreter (elementwise ops, reductions,
// tuples, calls, donation and copy protection, custom calls
// in XLA's GPU convention and their failures, concurrent runs). Skipped,
// with a message, where there is no GPU.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_executable.h"

#include <cuda.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_driver.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/compilation_cache.h"
#include "axle/runtime/local_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xla/service/custom_call_status.h"
#include "xla/service/custom_call_target_registry.h"

// XLA's GPU convention: operands then results, flattened. Copies operand 0
// (f32[4]) into result 1 and operand 1 into result 0 with the driver's
// cuMemcpyDtoDAsync on the run's stream.
void axle_test_swap_copy(CUstream stream, void** buffers, const char* opaque, size_t opaque_len) {
  (void)opaque;
  (void)opaque_len;
  const axle::gpu::CudaDriver* driver = *axle::gpu::CudaDriver::Get();
  const auto address = [&](int i) { return reinterpret_cast<CUdeviceptr>(buffers[i]); };
  driver->cuMemcpyDtoDAsync(address(3), address(0), 4 * sizeof(float), stream);
  driver->cuMemcpyDtoDAsync(address(2), address(1), 4 * sizeof(float), stream);
}
XLA_REGISTER_CUSTOM_CALL_TARGET(axle_test_swap_copy, "CUDA");

// Copies operand 0 into the result (f32[4]), or fails when opaque is "fail".
void axle_test_copy_or_fail(CUstream stream, void** buffers, const char* opaque, size_t opaque_len,
                            XlaCustomCallStatus* status) {
  if (std::string(opaque, opaque_len) == "fail") {
    XlaCustomCallStatusSetFailure(status, "refused on purpose", 18);
    return;
  }
  const axle::gpu::CudaDriver* driver = *axle::gpu::CudaDriver::Get();
  CUresult result = driver->cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(buffers[1]),
                                              reinterpret_cast<CUdeviceptr>(buffers[0]),
                                              4 * sizeof(float), stream);
  if (result != CUDA_SUCCESS) XlaCustomCallStatusSetFailure(status, "copy failed", 11);
}
XLA_REGISTER_CUSTOM_CALL_TARGET(axle_test_copy_or_fail, "CUDA");

namespace axle::gpu {
namespace {

using test::GpuExecutableTest;
using test::MakeInput;
using ::testing::HasSubstr;

// The modules the device tests run (ModulesCompileWithoutADevice compiles
// each for CUDA and runs those without CUDA custom calls on the interpreter
// on any machine, so a broken test module shows without a GPU).
constexpr char kElementwise[] = R"(
HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  a = f32[1000] add(x, y)
  e = f32[1000] exponential(a)
  t = f32[1000] tanh(y)
  ROOT m = f32[1000] multiply(e, t)
})";

constexpr char kIntegers[] = R"(
HloModule m
ENTRY e {
  x = s32[7,33] parameter(0)
  c = s32[33] constant({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33})
  b = s32[7,33] broadcast(c), dimensions={1}
  m = s32[7,33] multiply(x, b)
  ROOT t = s32[33,7] transpose(m), dimensions={1,0}
})";

constexpr char kReductions[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[64,300] parameter(0)
  z = f32[] constant(0)
  l = f32[] constant(-inf)
  rows = f32[64] reduce(x, z), dimensions={1}, to_apply=add
  cols = f32[300] reduce(x, l), dimensions={0}, to_apply=max
  all = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
  ROOT t = (f32[64], f32[300], f32[]) tuple(rows, cols, all)
})";

constexpr char kSoftmax[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[16,1024] parameter(0)
  l = f32[] constant(-inf)
  z = f32[] constant(0)
  m = f32[16] reduce(x, l), dimensions={1}, to_apply=max
  mb = f32[16,1024] broadcast(m), dimensions={0}
  d = f32[16,1024] subtract(x, mb)
  ex = f32[16,1024] exponential(d)
  s = f32[16] reduce(ex, z), dimensions={1}, to_apply=add
  sb = f32[16,1024] broadcast(s), dimensions={0}
  ROOT r = f32[16,1024] divide(ex, sb)
})";

constexpr char kTuples[] = R"(
HloModule m
ENTRY e {
  x = f32[4,2] parameter(0)
  p = (f32[3], s32[5]) parameter(1)
  g = s32[5] get-tuple-element(p), index=1
  b = f32[8] bitcast(x)
  n = f32[8] negate(b)
  c = f32[2] constant({7, 8})
  r = u32[] replica-id()
  inner = (f32[2], u32[]) tuple(c, r)
  ROOT t = (f32[8], s32[5], f32[4,2], f32[8], (f32[2], u32[]), (f32[3], s32[5])) tuple(n, g, x, n, inner, p)
})";

constexpr char kCall[] = R"(
HloModule m
callee {
  a = f32[32] parameter(0)
  b = f32[32] parameter(1)
  s = f32[32] subtract(a, b)
  ROOT t = (f32[32], f32[32]) tuple(s, a)
}
ENTRY e {
  x = f32[32] parameter(0)
  y = f32[32] parameter(1)
  c = (f32[32], f32[32]) call(x, y), to_apply=callee
  g = f32[32] get-tuple-element(c), index=0
  ROOT m = f32[32] multiply(g, y)
})";

constexpr char kMustAlias[] = R"(
HloModule increment, input_output_alias={ {1}: (0, {}, must-alias) }
ENTRY entry {
  p = f32[8] parameter(0)
  n = f32[8] negate(p)
  c = f32[] constant(1)
  b = f32[8] broadcast(c), dimensions={}
  a = f32[8] add(p, b)
  ROOT t = (f32[8], f32[8]) tuple(n, a)
})";

constexpr char kDot[] = R"(
HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,2] parameter(1)
  ROOT d = f32[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

constexpr char kLogistic[] = R"(
HloModule m
ENTRY e {
  p = f32[4096] parameter(0)
  l = f32[4096] logistic(p)
  ROOT r = f32[4096] multiply(l, p)
})";

constexpr char kSwapCopy[] = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  c = (f32[4], f32[4]) custom-call(s, y), custom_call_target="axle_test_swap_copy"
  a = f32[4] get-tuple-element(c), index=0
  b = f32[4] get-tuple-element(c), index=1
  ROOT m = f32[4] subtract(b, a)
})";

constexpr char kCopyOrFail[] = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  c = f32[4] custom-call(x), custom_call_target="axle_test_copy_or_fail", opaque="OPAQUE", api_version=API_VERSION_STATUS_RETURNING
  ROOT n = f32[4] negate(c)
})";

constexpr char kIncrement[] = R"(
HloModule increment, input_output_alias={ {}: 0 }
ENTRY entry {
  %p = f32[8] parameter(0)
  %c = f32[] constant(1)
  %b = f32[8] broadcast(%c), dimensions={}
  ROOT %out = f32[8] add(%p, %b)
})";

// 8- and 4-bit floats: converts (overflowing e4m3fn to NaN, e5m2 in range,
// rounding to f4e2m1fn and powers of two), arithmetic in f8, and back.
constexpr char kNarrowFloats[] = R"(
HloModule narrow
ENTRY e {
  x = f32[256] parameter(0)
  y = f32[256] parameter(1)
  k = f32[] constant(300)
  kb = f32[256] broadcast(k), dimensions={}
  big = f32[256] multiply(x, kb)
  a = f8e4m3fn[256] convert(big)
  b = f8e5m2[256] convert(big)
  c = f8e4m3fn[256] convert(y)
  s = f8e4m3fn[256] multiply(a, c)
  d = f4e2m1fn[256] convert(y)
  ab = f32[256] abs(big)
  p = f8e8m0fnu[256] convert(ab)
  ra = f32[256] convert(a)
  rb = f32[256] convert(b)
  rs = f32[256] convert(s)
  rd = f32[256] convert(d)
  rp = f32[256] convert(p)
  ROOT t = (f32[256], f32[256], f32[256], f32[256], f32[256]) tuple(ra, rb, rs, rd, rp)
})";

TEST(GpuExecutableModulesTest, ModulesCompileWithoutADevice) {
  const test::TestModule modules[] = {
      {"elementwise", kElementwise, true},
      {"integers", kIntegers, true},
      {"reductions", kReductions, true},
      {"softmax", kSoftmax, true},
      {"tuples", kTuples, true},
      {"call", kCall, true},
      {"must alias", kMustAlias, false},  // needs a donated argument
      {"dot", kDot, true},
      {"logistic", kLogistic, true},
      {"swap copy", kSwapCopy, false},
      {"copy or fail", kCopyOrFail, false},
      {"increment", kIncrement, true},
      {"narrow floats", kNarrowFloats, true},
  };
  test::ExpectModulesCompileWithoutADevice(modules);
}

TEST_F(GpuExecutableTest, Elementwise) { ExpectMatchesInterpreter(kElementwise); }

// A module compiled again comes from the compilation cache (gpu_compiler.h):
// the second executable shares the first's prepared module, initializes
// (loads) thunks of its own, and both compute the interpreter's results.
TEST_F(GpuExecutableTest, ModuleCompiledAgainSharesThePreparedModule) {
  const CompilationCacheStats before = CompilationCache::Global().stats();
  auto first = CompileFor(client_, kSoftmax);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = CompileFor(client_, kSoftmax);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_GE(CompilationCache::Global().stats().memory_hits - before.memory_hits, 1);
  EXPECT_EQ(&(*second)->executable()->module(), &(*first)->executable()->module());
  const auto* first_gpu = static_cast<const GpuExecutable*>((*first)->executable());
  const auto* second_gpu = static_cast<const GpuExecutable*>((*second)->executable());
  ASSERT_FALSE(first_gpu->program().thunks.empty());
  EXPECT_NE(second_gpu->program().thunks[0].get(), first_gpu->program().thunks[0].get());
  auto interpreter = CompileFor(reference_, kSoftmax);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  std::vector<Literal> arguments;
  for (const Shape& shape : (*first)->executable()->parameter_shapes()) {
    arguments.push_back(MakeInput(shape, static_cast<int>(arguments.size()) + 1));
  }
  auto expected = RunWith(reference_, **interpreter, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  // The second first, then the first: neither depends on the other's
  // device state.
  for (const LocalExecutable* executable : {second->get(), first->get()}) {
    auto actual = RunWith(client_, *executable, arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-5, 1e-5));
    EXPECT_TRUE(near.ok()) << near;
  }
}

TEST_F(GpuExecutableTest, EightAndFourBitFloatsRoundAsTheInterpreter) {
  ExpectMatchesInterpreter(kNarrowFloats, ErrorSpec(0));
}

TEST_F(GpuExecutableTest, ElementwiseOfIntegersAndBroadcastsOfConstants) {
  ExpectMatchesInterpreter(kIntegers, ErrorSpec(0));
}

TEST_F(GpuExecutableTest, RowAndColumnReductions) {
  ExpectMatchesInterpreter(kReductions, ErrorSpec(1e-3, 1e-4));
}

TEST_F(GpuExecutableTest, LargeColumnAndFullReductionsSplitInTwoAgree) {
  // Past column_reduction_splitter.h's 4 MiB, with the splitter on
  // (AXLE_GPU_SPLIT_COLUMNS=1; off by default): a column sum of 128 tiles
  // (split in 2 parts), a column max and a full sum (2048 parts), each in
  // two kernels; exact for integers and max, summation order for f32.
  setenv("AXLE_GPU_SPLIT_COLUMNS", "1", 1);
  ExpectMatchesInterpreter(R"(
HloModule m
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4096,1024] parameter(0)
  y = s32[4096,1024] parameter(1)
  z = f32[] constant(0)
  lowest = f32[] constant(-inf)
  zi = s32[] constant(0)
  sum = f32[1024] reduce(x, z), dimensions={0}, to_apply=add_f32
  max = f32[1024] reduce(x, lowest), dimensions={0}, to_apply=max_f32
  isum = s32[1024] reduce(y, zi), dimensions={0}, to_apply=add_s32
  total = s32[] reduce(y, zi), dimensions={0,1}, to_apply=add_s32
  ROOT t = (f32[1024], f32[1024], s32[1024], s32[]) tuple(sum, max, isum, total)
})",
                           ErrorSpec(1e-2, 1e-3));
  unsetenv("AXLE_GPU_SPLIT_COLUMNS");
}

TEST_F(GpuExecutableTest, Softmax) { ExpectMatchesInterpreter(kSoftmax, ErrorSpec(1e-5, 1e-4)); }

TEST_F(GpuExecutableTest, TupleResultsWithParametersConstantsAndRepeatedLeaves) {
  ExpectMatchesInterpreter(kTuples, ErrorSpec(0));
}

TEST_F(GpuExecutableTest, Calls) {
  // Inlined by the passes.
  ExpectMatchesInterpreter(kCall);
  // Kept (run_backend_only): the callee's thunks run in place.
  ExecutableBuildOptions backend_only;
  backend_only.set_run_backend_only(true);
  ExpectMatchesInterpreter(kCall, ErrorSpec(1e-5, 1e-5), {}, backend_only);
}

// XLA's TopK custom call on cuda (a sort by its own comparator and
// slices) against topk on the interpreter, bit for bit (ties: lower index
// first in both).
TEST_F(GpuExecutableTest, TopKCustomCallAgreesWithTopK) {
  constexpr char kCall[] = R"(
HloModule m
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
ENTRY e {
  x = f32[6,300] parameter(0)
  ROOT t = (f32[6,8], s32[6,8]) custom-call(x), custom_call_target="TopK", to_apply=gt
})";
  constexpr char kTopK[] = R"(
HloModule m
ENTRY e {
  x = f32[6,300] parameter(0)
  ROOT t = (f32[6,8], s32[6,8]) topk(x), k=8, largest=true
})";
  auto call = CompileFor(client_, kCall);
  ASSERT_TRUE(call.ok()) << call.status();
  auto topk = CompileFor(reference_, kTopK);
  ASSERT_TRUE(topk.ok()) << topk.status();
  std::vector<Literal> inputs;
  inputs.push_back(MakeInput(ShapeUtil::MakeShape(F32, {6, 300}), 4));
  auto got = RunWith(client_, **call, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = RunWith(reference_, **topk, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(*want, *got) << "want " << want->ToString() << "\ngot  " << got->ToString();
}

TEST_F(GpuExecutableTest, DonatedInputIsUpdatedInPlace) {
  auto executable = CompileFor(client_, kIncrement);
  ASSERT_TRUE(executable.ok()) << executable.status();
  Literal value = MakeInput(ShapeUtil::MakeShape(F32, {8}), 1);
  ScopedShapedBuffer argument = *client_->LiteralToShapedBuffer(value, 0);
  const void* address = argument.root_buffer().opaque();
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&argument));
  auto output = (*executable)->Run(std::move(inputs), {});
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->Result().root_buffer().opaque(), address);
  auto result = client_->ShapedBufferToLiteral(output->Result());
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(result->data<float>()[i], value.data<float>()[i] + 1);
}

TEST_F(GpuExecutableTest, LentInputOfAnAliasedOutputIsCopyProtected) {
  auto executable = CompileFor(client_, kIncrement);
  ASSERT_TRUE(executable.ok()) << executable.status();
  Literal value = MakeInput(ShapeUtil::MakeShape(F32, {8}), 2);
  ScopedShapedBuffer argument = *client_->LiteralToShapedBuffer(value, 0);
  auto result = (*executable)->Run({&argument}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->root_buffer().opaque(), argument.root_buffer().opaque());
  auto out = client_->ShapedBufferToLiteral(*result);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out->data<float>()[i], value.data<float>()[i] + 1);
  auto unchanged = client_->ShapedBufferToLiteral(argument);
  ASSERT_TRUE(unchanged.ok()) << unchanged.status();
  EXPECT_EQ(*unchanged, value);
}

TEST_F(GpuExecutableTest, MustAliasWithoutDonationIsAnError) {
  auto executable = CompileFor(client_, kMustAlias);
  ASSERT_TRUE(executable.ok()) << executable.status();
  Literal value = MakeInput(ShapeUtil::MakeShape(F32, {8}), 3);
  ScopedShapedBuffer lent = *client_->LiteralToShapedBuffer(value, 0);
  auto refused = (*executable)->Run({&lent}, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("must-alias"));
  // Donated: the tuple result's index table is written on the device and
  // read back through it.
  ScopedShapedBuffer donated = *client_->LiteralToShapedBuffer(value, 0);
  const void* address = donated.root_buffer().opaque();
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&donated));
  auto output = (*executable)->Run(std::move(inputs), {});
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->Result().buffer({1}).opaque(), address);
  auto result = client_->ShapedBufferToLiteral(output->Result());
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(result->tuple_element(0).data<float>()[i], -value.data<float>()[i]);
    EXPECT_EQ(result->tuple_element(1).data<float>()[i], value.data<float>()[i] + 1);
  }
  // The index table holds the elements' device addresses.
  void* table[2] = {nullptr, nullptr};
  ASSERT_TRUE(client_->platform()
                  ->SynchronousMemcpy(table, output->Result().buffer({}), sizeof(table))
                  .ok());
  EXPECT_EQ(table[0], output->Result().buffer({0}).opaque());
  EXPECT_EQ(table[1], output->Result().buffer({1}).opaque());
}

TEST_F(GpuExecutableTest, CustomCallInXlasConventionOnTheRunsStream) {
  const std::string text = kSwapCopy;
  auto executable = CompileFor(client_, text);
  ASSERT_TRUE(executable.ok()) << executable.status();
  Literal x = LiteralUtil::CreateR1<float>({1, 2, 3, 4});
  Literal y = LiteralUtil::CreateR1<float>({10, 20, 30, 40});
  std::vector<Literal> arguments;
  arguments.push_back(x.Clone());
  arguments.push_back(y.Clone());
  auto result = RunWith(client_, **executable, arguments);
  ASSERT_TRUE(result.ok()) << result.status();
  // b = s = x + y, a = y: the result is x.
  EXPECT_EQ(*result, x) << result->ToString();
}

TEST_F(GpuExecutableTest, StatusReturningCustomCallFailureIsTheRunsError) {
  const std::string text = kCopyOrFail;
  Literal x = LiteralUtil::CreateR1<float>({1, 2, 3, 4});
  std::vector<Literal> arguments;
  arguments.push_back(x.Clone());
  {
    std::string ok_text = text;
    ok_text.replace(ok_text.find("OPAQUE"), 6, "fine");
    auto executable = CompileFor(client_, ok_text);
    ASSERT_TRUE(executable.ok()) << executable.status();
    auto result = RunWith(client_, **executable, arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(*result, LiteralUtil::CreateR1<float>({-1, -2, -3, -4}));
  }
  std::string failing = text;
  failing.replace(failing.find("OPAQUE"), 6, "fail");
  auto executable = CompileFor(client_, failing);
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto result = RunWith(client_, **executable, arguments);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("refused on purpose"));
  EXPECT_THAT(result.status().message(), HasSubstr("axle_test_copy_or_fail"));
  EXPECT_THAT(result.status().message(), HasSubstr("%c"));
  // The executable and the device stay usable.
  std::string ok_text = text;
  ok_text.replace(ok_text.find("OPAQUE"), 6, "again");
  auto again = CompileFor(client_, ok_text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(RunWith(client_, **again, arguments).ok());
}

TEST_F(GpuExecutableTest, RngDrawsWhatTheInterpreterDrawsForTheSameSeed) {
  // One engine per run, seeded by the run's seed (0 here on both): each
  // draw and the state word agree bit for bit with the interpreter, in
  // both runs. One op per module, so no schedule decides their order.
  for (const char* root : {"f32[257] rng(lo, hi), distribution=rng_uniform",
                           "f32[64] rng(lo, hi), distribution=rng_normal",
                           "s32[33] rng(a, b), distribution=rng_uniform",
                           "u64[2] rng-get-and-update-state(), delta=7"}) {
    SCOPED_TRACE(root);
    ExpectMatchesInterpreter(absl::StrCat(R"(
HloModule m
ENTRY e {
  lo = f32[] constant(-1)
  hi = f32[] constant(3)
  a = s32[] constant(-5)
  b = s32[] constant(100)
  ROOT r = )",
                                          root, "\n}\n"),
                             ErrorSpec(0));
  }
}

TEST_F(GpuExecutableTest, RngInsideALoopDrawsFreshValuesEachIteration) {
  // The loop's body runs with copies of the run's context: they share the
  // run's engine, so each iteration draws new values, as on the interpreter.
  ExpectMatchesInterpreter(R"(
HloModule m
cond {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[16] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[16] rng(lo, hi), distribution=rng_uniform
  ten = f32[] constant(10)
  tens = f32[16] broadcast(ten), dimensions={}
  scaled = f32[16] multiply(acc, tens)
  sum = f32[16] add(scaled, r)
  ROOT t = (s32[], f32[16]) tuple(next, sum)
}
ENTRY e {
  zero = s32[] constant(0)
  z = f32[] constant(0)
  zs = f32[16] broadcast(z), dimensions={}
  init = (s32[], f32[16]) tuple(zero, zs)
  w = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT out = f32[16] get-tuple-element(w), index=1
})",
                           ErrorSpec(1e-6, 1e-6));
}

TEST_F(GpuExecutableTest, OpsWithoutThunksAreUnimplementedNamingCuda) {
  auto executable = CompileFor(client_, R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  ROOT i = (f32[8], token[]) infeed(t)
})");
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(executable.status().message(), HasSubstr("CUDA"));
  EXPECT_THAT(executable.status().message(), HasSubstr("infeed"));
  // The platform stays usable: the dot (cuBLAS) compiles and runs.
  auto dot = CompileFor(client_, kDot);
  EXPECT_TRUE(dot.ok()) << dot.status();
}

TEST_F(GpuExecutableTest, ConcurrentRunsOfOneExecutable) {
  auto executable = CompileFor(client_, kLogistic);
  ASSERT_TRUE(executable.ok()) << executable.status();
  ScopedShapedBuffer argument =
      *client_->LiteralToShapedBuffer(MakeInput(ShapeUtil::MakeShape(F32, {4096}), 5), 0);
  auto first = (*executable)->Run({&argument}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  Literal expected = *client_->ShapedBufferToLiteral(*first);
  std::vector<Literal> results(8);
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 4; ++k) {
        auto result = (*executable)->Run({&argument}, {});
        if (!result.ok()) {
          errors[t] = result.status().ToString();
          return;
        }
        auto literal = client_->ShapedBufferToLiteral(*result);
        if (!literal.ok()) {
          errors[t] = literal.status().ToString();
          return;
        }
        results[t] = *std::move(literal);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_EQ(results[t], expected) << "thread " << t;
  }
}

TEST_F(GpuExecutableTest, AsynchronousRunsOnTheDefaultStream) {
  auto executable = CompileFor(client_, kIncrement);
  ASSERT_TRUE(executable.ok()) << executable.status();
  Literal value = MakeInput(ShapeUtil::MakeShape(F32, {8}), 4);
  ScopedShapedBuffer argument = *client_->LiteralToShapedBuffer(value, 0);
  auto first = (*executable)->RunAsync({&argument}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  // The second run reads the first's result.
  auto second = (*executable)->RunAsync({&*first}, {});
  ASSERT_TRUE(second.ok()) << second.status();
  auto stream = client_->platform()->DefaultStream(0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_TRUE((*stream)->BlockHostUntilDone().ok());
  auto out = client_->ShapedBufferToLiteral(*second);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out->data<float>()[i], value.data<float>()[i] + 2);
}

TEST_F(GpuExecutableTest, LentBuffersFreedWhileAsynchronousRunsAreQueuedStayIntact) {
  auto executable = CompileFor(client_, kLogistic);
  ASSERT_TRUE(executable.ok()) << executable.status();
  const Shape shape = ShapeUtil::MakeShape(F32, {4096});
  std::vector<Literal> inputs;
  std::vector<ScopedShapedBuffer> results;
  for (int k = 0; k < 16; ++k) {
    inputs.push_back(MakeInput(shape, 10 + k));
    ScopedShapedBuffer argument = *client_->LiteralToShapedBuffer(inputs.back(), 0);
    auto result = (*executable)->RunAsync({&argument}, {});
    ASSERT_TRUE(result.ok()) << result.status();
    results.push_back(*std::move(result));
    // `argument` is freed here, maybe before its run: its memory must not
    // be handed out (below) until the run is done.
    ScopedShapedBuffer other = *client_->LiteralToShapedBuffer(MakeInput(shape, 100 + k), 0);
  }
  auto stream = client_->platform()->DefaultStream(0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_TRUE((*stream)->BlockHostUntilDone().ok());
  auto interpreter = CompileFor(reference_, kLogistic);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  for (int k = 0; k < 16; ++k) {
    std::vector<Literal> arguments;
    arguments.push_back(inputs[k].Clone());
    auto expected = RunWith(reference_, **interpreter, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    auto actual = client_->ShapedBufferToLiteral(results[k]);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_TRUE(LiteralsNear(*expected, *actual, ErrorSpec(1e-5, 1e-5)).ok()) << "run " << k;
  }
}

}  // namespace
}  // namespace axle::gpu
