//===- gpu_executable_test.cc - Modules run on a CUDA device ---------------===//
//
// On a GPU: modules compiled through LocalClient for platform "cuda" and
// run there, compared with the interpreter (elementwise ops, reductions,
// loops, conditionals, tuples, donation and copy protection, custom calls
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
#include "absl/strings/str_replace.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_driver.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_thunks.h"
#include "axle/hlo/text/hlo_parser.h"
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

using ::testing::HasSubstr;

// Deterministic values in [-2, 2) (integers in [-50, 50), preds alternating).
Literal MakeInput(const Shape& shape, int seed) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      elements.push_back(MakeInput(shape.tuple_shapes(i), seed * 31 + static_cast<int>(i)));
    }
    return LiteralUtil::MakeTuple(std::move(elements));
  }
  Literal literal(shape);
  const int64_t count = shape.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = (i * 7919 + int64_t{seed} * 104729) % 1000;
    switch (shape.element_type()) {
      case F32:
        literal.data<float>()[i] = static_cast<float>(k) / 250.0f - 2.0f;
        break;
      case F64:
        literal.data<double>()[i] = static_cast<double>(k) / 250.0 - 2.0;
        break;
      case S32:
        literal.data<int32_t>()[i] = static_cast<int32_t>(k % 100) - 50;
        break;
      case PRED:
        literal.data<bool>()[i] = (k % 2) == 0;
        break;
      default:
        break;
    }
  }
  return literal;
}

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

constexpr char kWhileSwap[] = R"(
HloModule loop
cond {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  a = f32[16] get-tuple-element(s), index=1
  b = f32[16] get-tuple-element(s), index=2
  ab = f32[16] add(a, b)
  ROOT t = (s32[], f32[16], f32[16]) tuple(i1, ab, a)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  t = (s32[], f32[16], f32[16]) tuple(zero, x, y)
  ROOT w = (s32[], f32[16], f32[16]) while(t), condition=cond, body=body
})";

constexpr char kWhileDataDependent[] = R"(
HloModule loop
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  s = (f32[64], s32[]) parameter(0)
  x = f32[64] get-tuple-element(s), index=0
  z = f32[] constant(0)
  sum = f32[] reduce(x, z), dimensions={0}, to_apply=add
  bound = f32[] constant(100000)
  ROOT lt = pred[] compare(sum, bound), direction=LT
}
body {
  s = (f32[64], s32[]) parameter(0)
  x = f32[64] get-tuple-element(s), index=0
  two = f32[] constant(2)
  b = f32[64] broadcast(two), dimensions={}
  d = f32[64] multiply(x, b)
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  n1 = s32[] add(n, one)
  ROOT t = (f32[64], s32[]) tuple(d, n1)
}
ENTRY e {
  x = f32[64] parameter(0)
  a = f32[64] abs(x)
  one = f32[] constant(1)
  ob = f32[64] broadcast(one), dimensions={}
  p = f32[64] add(a, ob)
  zero = s32[] constant(0)
  t = (f32[64], s32[]) tuple(p, zero)
  ROOT w = (f32[64], s32[]) while(t), condition=cond, body=body
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

constexpr char kConditional[] = R"(
HloModule branches
b0 {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
b1 {
  p = f32[8] parameter(0)
  ROOT e = f32[8] exponential(p)
}
b2 {
  ROOT p = f32[8] parameter(0)
}
t {
  p = f32[8] parameter(0)
  c = f32[] constant(3)
  b = f32[8] broadcast(c), dimensions={}
  ROOT a = f32[8] add(p, b)
}
f {
  ROOT p = f32[8] parameter(0)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[8] parameter(1)
  q = pred[] parameter(2)
  c = f32[8] conditional(i, x, x, x), branch_computations={b0, b1, b2}
  d = f32[8] conditional(q, c, x), true_computation=t, false_computation=f
  ROOT m = (f32[8], f32[8]) tuple(c, d)
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

// A counted loop whose induction variable is state element 1: i = INIT,
// i += STEP while i DIR BOUND; a and b change each trip.
constexpr char kCountedLoop[] = R"(
HloModule counted
cond {
  s = (f32[16], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  n = s32[] constant(BOUND)
  ROOT c = pred[] compare(i, n), direction=DIR
}
body {
  s = (f32[16], s32[], f32[16]) parameter(0)
  a = f32[16] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  b = f32[16] get-tuple-element(s), index=2
  step = s32[] constant(STEP)
  i1 = s32[] add(i, step)
  ab = f32[16] add(a, b)
  half = f32[] constant(0.5)
  hb = f32[16] broadcast(half), dimensions={}
  bh = f32[16] multiply(b, hb)
  ROOT t = (f32[16], s32[], f32[16]) tuple(ab, i1, bh)
}
ENTRY e {
  init = s32[] constant(INIT)
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  t = (f32[16], s32[], f32[16]) tuple(x, init, y)
  ROOT w = (f32[16], s32[], f32[16]) while(t), condition=cond, body=body
})";

struct CountedLoopCase {
  const char* name;
  int init;
  int bound;
  int step;
  const char* direction;
  int64_t trips;
};
constexpr CountedLoopCase kCountedLoopCases[] = {
    {"0 trips", 0, 0, 1, "LT", 0},
    {"1 trip", 0, 1, 1, "LT", 1},
    {"7 trips", 2, 23, 3, "LT", 7},
    {"7 trips down", 7, 0, -1, "GT", 7},
};

std::string CountedLoop(const CountedLoopCase& c) {
  return absl::StrReplaceAll(kCountedLoop, {{"INIT", absl::StrCat(c.init)},
                                            {"BOUND", absl::StrCat(c.bound)},
                                            {"STEP", absl::StrCat(c.step)},
                                            {"DIR", c.direction}});
}

// A loop of 3 trips inside a loop of 4.
constexpr char kNestedLoops[] = R"(
HloModule nested
inner_cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
inner_body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  k = f32[] constant(0.75)
  kb = f32[16] broadcast(k), dimensions={}
  y = f32[16] multiply(x, kb)
  c = f32[] constant(0.25)
  cb = f32[16] broadcast(c), dimensions={}
  z = f32[16] add(y, cb)
  ROOT t = (s32[], f32[16]) tuple(i1, z)
}
outer_cond {
  s = (s32[], f32[16]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(j, n), direction=LT
}
outer_body {
  s = (s32[], f32[16]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  zero = s32[] constant(0)
  it = (s32[], f32[16]) tuple(zero, x)
  w = (s32[], f32[16]) while(it), condition=inner_cond, body=inner_body
  x1 = f32[16] get-tuple-element(w), index=1
  x2 = f32[16] sine(x1)
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  ROOT t = (s32[], f32[16]) tuple(j1, x2)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[16] parameter(0)
  t = (s32[], f32[16]) tuple(zero, x)
  ROOT w = (s32[], f32[16]) while(t), condition=outer_cond, body=outer_body
})";

// a' = 2b reads only b, and nothing after it reads a: computed into the
// state in place; b' = b + 1 and i' read their own leaves: copied back.
constexpr char kInPlaceLoop[] = R"(
HloModule in_place
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
cond {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[16] get-tuple-element(s), index=1
  b = f32[16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  zero = f32[] constant(0)
  sa = f32[] reduce(a, zero), dimensions={0}, to_apply=add
  sab = f32[16] broadcast(sa), dimensions={}
  two = f32[] constant(2)
  tb = f32[16] broadcast(two), dimensions={}
  b2 = f32[16] multiply(b, tb)
  a1 = f32[16] add(b2, sab)
  c1 = f32[] constant(1)
  ob = f32[16] broadcast(c1), dimensions={}
  b1 = f32[16] add(b, ob)
  ROOT t = (s32[], f32[16], f32[16]) tuple(i1, a1, b1)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  t = (s32[], f32[16], f32[16]) tuple(zero, x, y)
  ROOT w = (s32[], f32[16], f32[16]) while(t), condition=cond, body=body
})";

// The body lowers the bound as it raises i (5 trips from (0, 10)): the trip
// count is not a constant's, so the predicate is read each trip.
constexpr char kBoundModifiedLoop[] = R"(
HloModule moving_bound
cond {
  s = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  n1 = s32[] subtract(n, one)
  y = f32[16] cosine(x)
  ROOT t = (s32[], s32[], f32[16]) tuple(i1, n1, y)
}
ENTRY e {
  zero = s32[] constant(0)
  ten = s32[] constant(10)
  x = f32[16] parameter(0)
  t = (s32[], s32[], f32[16]) tuple(zero, ten, x)
  ROOT w = (s32[], s32[], f32[16]) while(t), condition=cond, body=body
})";

// Conditionals on constant selectors (in range, out of range, a pred).
constexpr char kConstantSelectors[] = R"(
HloModule constant_selectors
b0 {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
b1 {
  p = f32[8] parameter(0)
  ROOT e = f32[8] exponential(p)
}
ENTRY e {
  x = f32[8] parameter(0)
  one = s32[] constant(1)
  nine = s32[] constant(9)
  f = pred[] constant(false)
  c = f32[8] conditional(one, x, x), branch_computations={b0, b1}
  d = f32[8] conditional(nine, c, x), branch_computations={b1, b0}
  g = f32[8] conditional(f, d, c), true_computation=b1, false_computation=b0
  ROOT m = (f32[8], f32[8], f32[8]) tuple(c, d, g)
})";

class GpuExecutableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
    if (!device.ok()) GTEST_SKIP() << "no CUDA device: " << device.status().message();
    auto platform = PlatformUtil::GetPlatform("cuda");
    ASSERT_TRUE(platform.ok()) << platform.status();
    auto client = ClientLibrary::GetOrCreateLocalClient(*platform);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *client;
    auto interpreter = PlatformUtil::GetPlatform("interpreter");
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    auto reference = ClientLibrary::GetOrCreateLocalClient(*interpreter);
    ASSERT_TRUE(reference.ok()) << reference.status();
    reference_ = *reference;
  }

  absl::StatusOr<std::unique_ptr<LocalExecutable>> CompileFor(
      LocalClient* client, const std::string& text,
      const ExecutableBuildOptions& options = ExecutableBuildOptions()) {
    auto module = ParseAndReturnUnverifiedModule(text);
    if (!module.ok()) return module.status();
    return client->Compile(std::move(module).value(), options);
  }

  static absl::StatusOr<Literal> RunWith(LocalClient* client, const LocalExecutable& executable,
                                         const std::vector<Literal>& arguments) {
    std::vector<ScopedShapedBuffer> buffers;
    std::vector<const ShapedBuffer*> pointers;
    for (const Literal& argument : arguments) {
      auto buffer = client->LiteralToShapedBuffer(argument, 0);
      if (!buffer.ok()) return buffer.status();
      buffers.push_back(std::move(buffer).value());
    }
    pointers.reserve(buffers.size());
    for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
    auto result = executable.Run(pointers, {});
    if (!result.ok()) return result.status();
    return client->ShapedBufferToLiteral(*result);
  }

  // Runs `text` on CUDA (twice: the second run reuses the arena) and on the
  // interpreter with arguments made by MakeInput, and compares.
  void ExpectMatchesInterpreter(const std::string& text, ErrorSpec error = ErrorSpec(1e-5, 1e-5),
                                std::vector<Literal> arguments = {},
                                const ExecutableBuildOptions& options = ExecutableBuildOptions()) {
    auto gpu = CompileFor(client_, text, options);
    ASSERT_TRUE(gpu.ok()) << "compiling for CUDA: " << gpu.status();
    auto interpreter = CompileFor(reference_, text);
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    if (arguments.empty()) {
      const auto& parameters = (*gpu)->executable()->parameter_shapes();
      for (size_t i = 0; i < parameters.size(); ++i) {
        arguments.push_back(MakeInput(parameters[i], static_cast<int>(i) + 1));
      }
    }
    auto expected = RunWith(reference_, **interpreter, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (int run = 0; run < 2; ++run) {
      auto actual = RunWith(client_, **gpu, arguments);
      ASSERT_TRUE(actual.ok()) << "run " << run << " on CUDA: " << actual.status();
      absl::Status near = LiteralsNear(*expected, *actual, error);
      EXPECT_TRUE(near.ok())
          << "run " << run << ": " << near << "\nexpected " << expected->ToString() << "\nactual   "
          << actual->ToString() << "\nprogram:\n"
          << GpuProgramToString(static_cast<const GpuExecutable*>((*gpu)->executable())->program());
    }
  }

  LocalClient* client_ = nullptr;
  LocalClient* reference_ = nullptr;
};

// Without a device: every module above compiles for CUDA (passes, thunks,
// PTX), and those without CUDA custom calls or library ops run on the
// interpreter, so the device tests' modules are known to be well formed.
TEST(GpuExecutableModulesTest, ModulesCompileWithoutADevice) {
  struct Case {
    const char* name;
    const char* text;
    bool compiles;        // for CUDA
    bool on_interpreter;  // runs there on lent arguments
  };
  const Case cases[] = {
      {"elementwise", kElementwise, true, true},
      {"integers", kIntegers, true, true},
      {"reductions", kReductions, true, true},
      {"softmax", kSoftmax, true, true},
      {"while swap", kWhileSwap, true, true},
      {"while data dependent", kWhileDataDependent, true, true},
      {"tuples", kTuples, true, true},
      {"call", kCall, true, true},
      {"must alias", kMustAlias, true, false},  // needs a donated argument
      {"dot", kDot, true, true},
      {"logistic", kLogistic, true, true},
      {"conditional", kConditional, true, true},
      {"swap copy", kSwapCopy, true, false},
      {"copy or fail", kCopyOrFail, true, false},
      {"increment", kIncrement, true, true},
      {"nested loops", kNestedLoops, true, true},
      {"bound modified", kBoundModifiedLoop, true, true},
      {"in place", kInPlaceLoop, true, true},
      {"constant selectors", kConstantSelectors, true, true},
  };
  auto interpreter = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  LocalClient* reference = *ClientLibrary::GetOrCreateLocalClient(*interpreter);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto module = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get());
    if (c.compiles) {
      EXPECT_TRUE(program.ok()) << program.status();
    } else {
      EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented) << program.status();
    }
    // As given (run_backend_only: no inlining, no fusion), as Calls runs them.
    auto as_given = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(as_given.ok()) << as_given.status();
    absl::StatusOr<GpuProgram> backend_only =
        CompileGpuProgram(as_given->get(), PtxOptions(), /*run_backend_only=*/true);
    EXPECT_EQ(backend_only.ok(), c.compiles) << backend_only.status();
    if (!c.on_interpreter) continue;
    auto parsed = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto executable = reference->Compile(std::move(parsed).value(), {});
    ASSERT_TRUE(executable.ok()) << executable.status();
    std::vector<Literal> arguments;
    for (const Shape& shape : (*executable)->executable()->parameter_shapes()) {
      arguments.push_back(MakeInput(shape, 1));
    }
    std::vector<ScopedShapedBuffer> buffers;
    std::vector<const ShapedBuffer*> pointers;
    buffers.reserve(arguments.size());
    for (const Literal& argument : arguments) {
      buffers.push_back(*reference->LiteralToShapedBuffer(argument, 0));
    }
    pointers.reserve(buffers.size());
    for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
    auto result = (*executable)->Run(pointers, {});
    EXPECT_TRUE(result.ok()) << result.status();
  }
}

// Every while thunk of `sequence` and the sequences nested in it, outer
// loops first.
void CollectLoops(const GpuThunkSequence& sequence, std::vector<const GpuWhileThunk*>& loops) {
  for (const auto& thunk : sequence) {
    if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(thunk.get())) {
      loops.push_back(loop);
      CollectLoops(loop->condition(), loops);
      CollectLoops(loop->body(), loops);
    } else if (const auto* call = dynamic_cast<const GpuSequenceThunk*>(thunk.get())) {
      CollectLoops(call->sequence(), loops);
    } else if (const auto* conditional = dynamic_cast<const GpuConditionalThunk*>(thunk.get())) {
      for (const GpuThunkSequence& branch : conditional->branches()) CollectLoops(branch, loops);
    }
  }
}

// The trip count of each while thunk of `text` compiled for CUDA (-1: the
// predicate form), outer loops first.
std::vector<int64_t> LoopTripCounts(const std::string& text, bool run_backend_only,
                                    std::string* program_text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  absl::StatusOr<GpuProgram> program =
      CompileGpuProgram(module->get(), PtxOptions(), run_backend_only);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  *program_text = GpuProgramToString(*program);
  std::vector<const GpuWhileThunk*> loops;
  CollectLoops(program->thunks, loops);
  std::vector<int64_t> trips;
  for (const GpuWhileThunk* loop : loops) {
    trips.push_back(loop->trip_count().value_or(-1));
    if (loop->trip_count().has_value()) {
      // No condition: nothing computes or reads a predicate.
      EXPECT_TRUE(loop->condition().empty()) << *program_text;
    } else {
      EXPECT_FALSE(loop->condition().empty()) << *program_text;
    }
  }
  return trips;
}

// Without a device: loops whose trip count is a constant's (an induction
// variable anywhere in the state, counting up or down, nested) run their
// body that many times with no condition; with the optimizing passes, loops
// of 0 and 1 trips are gone (while-loop-simplifier); a loop whose body
// moves its bound, or whose predicate depends on data, keeps its condition.
TEST(GpuExecutableModulesTest, KnownTripCountsRunTheBodyAlone) {
  using ::testing::ElementsAre;
  std::string text;
  for (const CountedLoopCase& c : kCountedLoopCases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(LoopTripCounts(CountedLoop(c), /*run_backend_only=*/true, &text),
                ElementsAre(c.trips))
        << text;
    std::vector<int64_t> optimized = LoopTripCounts(CountedLoop(c), false, &text);
    if (c.trips <= 1) {
      EXPECT_TRUE(optimized.empty()) << text;
    } else {
      EXPECT_THAT(optimized, ElementsAre(c.trips)) << text;
      EXPECT_THAT(text, HasSubstr(absl::StrCat("while trip_count=", c.trips)));
      EXPECT_THAT(text, ::testing::Not(HasSubstr("condition:")));
    }
  }
  for (bool backend_only : {true, false}) {
    SCOPED_TRACE(backend_only ? "run_backend_only" : "optimized");
    EXPECT_THAT(LoopTripCounts(kNestedLoops, backend_only, &text), ElementsAre(4, 3)) << text;
    EXPECT_THAT(LoopTripCounts(kBoundModifiedLoop, backend_only, &text), ElementsAre(-1)) << text;
    EXPECT_THAT(LoopTripCounts(kWhileDataDependent, backend_only, &text), ElementsAre(-1)) << text;
    EXPECT_THAT(LoopTripCounts(kWhileSwap, backend_only, &text), ElementsAre(10)) << text;
  }
}

// A count XLA wrote in the backend_config is taken where the pattern is not
// visible (here: a bound the body moves, so a wrong count would show); a
// condition with side effects is never skipped.
TEST(GpuExecutableModulesTest, KnownTripCountFromBackendConfig) {
  std::string text = kBoundModifiedLoop;
  const std::string loop = "condition=cond, body=body";
  text.replace(text.find(loop), loop.size(),
               absl::StrCat(loop, R"(, backend_config={"known_trip_count":{"n":"5"}})"));
  std::string program;
  EXPECT_THAT(LoopTripCounts(text, true, &program), ::testing::ElementsAre(5)) << program;
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* w = (*module)->entry_computation()->root_instruction();
  EXPECT_EQ(KnownTripCount(*w), 5);
  HloInstruction* mutable_w = (*module)->entry_computation()->root_instruction();
  for (const char* config : {"", "{}", R"({"known_trip_count":{"n":"-1"}})",
                             R"({"known_trip_count":{}})", R"({"known_trip_count":{"n":"x"}})"}) {
    mutable_w->set_raw_backend_config_string(config);
    EXPECT_EQ(KnownTripCount(*w), std::nullopt) << config;
  }
  mutable_w->set_raw_backend_config_string(R"({"known_trip_count":{"n":7}})");
  EXPECT_EQ(KnownTripCount(*w), 7);
}

// A body's root leaf that a kernel computes after the last read of the
// state leaf it replaces shares that leaf's temporary: no copy back.
TEST(GpuExecutableModulesTest, BodyRootLeavesWrittenInPlaceWhereNothingReadsTheOldValue) {
  for (bool backend_only : {true, false}) {
    SCOPED_TRACE(backend_only ? "run_backend_only" : "optimized");
    auto module = ParseAndReturnUnverifiedModule(kInPlaceLoop);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program =
        CompileGpuProgram(module->get(), PtxOptions(), backend_only);
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string text = GpuProgramToString(*program);
    std::vector<const GpuWhileThunk*> loops;
    CollectLoops(program->thunks, loops);
    ASSERT_EQ(loops.size(), 1u) << text;
    const auto* copy = dynamic_cast<const GpuCopyThunk*>(loops[0]->body().back().get());
    ASSERT_NE(copy, nullptr) << text;
    // i and b are copied back; a is not (its value is the state's).
    std::vector<int64_t> copied;
    for (const auto& [from, to] : copy->copies()) copied.push_back(to);
    const GpuValue* state_a = nullptr;
    for (const GpuValue& value : program->values) {
      if (value.instruction != nullptr && value.instruction->opcode() == HloOpcode::kWhile &&
          value.index == ShapeIndex({1})) {
        state_a = &value;
      }
    }
    ASSERT_NE(state_a, nullptr) << text;
    EXPECT_EQ(copied.size(), 2u) << text;
    int sharing = 0;
    for (const GpuValue& value : program->values) {
      sharing += value.kind == GpuValue::Kind::kTemporary &&
                 value.temporary == state_a->temporary && &value != state_a;
    }
    EXPECT_EQ(sharing, 1) << text;
  }
}

// Conditionals on constant selectors are their selected branch: no
// conditional thunk, nothing read on the host.
TEST(GpuExecutableModulesTest, ConstantSelectorsPickTheirBranchAtCompileTime) {
  for (bool backend_only : {true, false}) {
    auto module = ParseAndReturnUnverifiedModule(kConstantSelectors);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program =
        CompileGpuProgram(module->get(), PtxOptions(), backend_only);
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string text = GpuProgramToString(*program);
    EXPECT_THAT(text, ::testing::Not(HasSubstr("conditional"))) << text;
  }
}

TEST_F(GpuExecutableTest, Elementwise) { ExpectMatchesInterpreter(kElementwise); }

TEST_F(GpuExecutableTest, ElementwiseOfIntegersAndBroadcastsOfConstants) {
  ExpectMatchesInterpreter(kIntegers, ErrorSpec(0));
}

TEST_F(GpuExecutableTest, RowAndColumnReductions) {
  ExpectMatchesInterpreter(kReductions, ErrorSpec(1e-3, 1e-4));
}

TEST_F(GpuExecutableTest, Softmax) { ExpectMatchesInterpreter(kSoftmax, ErrorSpec(1e-5, 1e-4)); }

TEST_F(GpuExecutableTest, WhileLoopSwappingStateLeaves) {
  // Fibonacci-like: each iteration (a, b) <- (a + b, a); ten iterations.
  ExpectMatchesInterpreter(kWhileSwap, ErrorSpec(1e-4, 1e-5));
}

TEST_F(GpuExecutableTest, WhileLoopWithDataDependentTripCount) {
  // Doubles x until its sum exceeds the bound: the predicate is computed on
  // the device each iteration.
  ExpectMatchesInterpreter(kWhileDataDependent, ErrorSpec(1e-3, 1e-5));
}

TEST_F(GpuExecutableTest, LoopsWithKnownTripCounts) {
  ExecutableBuildOptions backend_only;
  backend_only.set_run_backend_only(true);
  for (const ExecutableBuildOptions& options : {ExecutableBuildOptions(), backend_only}) {
    SCOPED_TRACE(options.run_backend_only() ? "run_backend_only" : "optimized");
    for (const CountedLoopCase& c : kCountedLoopCases) {
      SCOPED_TRACE(c.name);
      ExpectMatchesInterpreter(CountedLoop(c), ErrorSpec(1e-5, 1e-5), {}, options);
    }
    ExpectMatchesInterpreter(kNestedLoops, ErrorSpec(1e-5, 1e-5), {}, options);
    ExpectMatchesInterpreter(kBoundModifiedLoop, ErrorSpec(1e-5, 1e-5), {}, options);
    ExpectMatchesInterpreter(kInPlaceLoop, ErrorSpec(1e-4, 1e-5), {}, options);
    ExpectMatchesInterpreter(kWhileSwap, ErrorSpec(1e-4, 1e-5), {}, options);
    ExpectMatchesInterpreter(kConstantSelectors, ErrorSpec(1e-5, 1e-5), {}, options);
  }
}

TEST_F(GpuExecutableTest, ConditionalOnIndexAndPred) {
  const std::string text = kConditional;
  const Shape f8 = ShapeUtil::MakeShape(F32, {8});
  for (int32_t index : {0, 1, 2, 7, -1}) {
    for (bool pred : {true, false}) {
      SCOPED_TRACE(absl::StrCat("index ", index, ", pred ", pred));
      std::vector<Literal> arguments;
      arguments.push_back(LiteralUtil::CreateR0<int32_t>(index));
      arguments.push_back(MakeInput(f8, 3));
      arguments.push_back(LiteralUtil::CreateR0<bool>(pred));
      ExpectMatchesInterpreter(text, ErrorSpec(1e-5, 1e-5), std::move(arguments));
    }
  }
}

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
  ExpectMatchesInterpreter(kWhileSwap, ErrorSpec(1e-4, 1e-5), {}, backend_only);
  ExpectMatchesInterpreter(kConditional, ErrorSpec(1e-5, 1e-5), {}, backend_only);
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

TEST_F(GpuExecutableTest, OpsWithoutThunksAreUnimplementedNamingCuda) {
  auto executable = CompileFor(client_, R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  ROOT r = f32[8] rng(lo, hi), distribution=rng_uniform
})");
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(executable.status().message(), HasSubstr("CUDA"));
  EXPECT_THAT(executable.status().message(), HasSubstr("rng"));
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
