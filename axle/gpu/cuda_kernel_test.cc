//===- cuda_kernel_test.cc - Loop fusions compiled, launched and checked ----===//
//
// On a GPU: each fusion is compiled to PTX (ptx_compiler.h), loaded through
// the driver, launched on device buffers and compared with the
// interpreter. Skipped, with a message, where there is no GPU.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/cuda_kernel.h"

#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/cuda_device_test_util.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

// Deterministic inputs in [-2, 2) (integers in [-50, 50)), varied by `seed`.
Literal MakeInput(const Shape& shape, int seed) {
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
      case C64:
        literal.data<std::complex<float>>()[i] = {static_cast<float>(k) / 500.0f - 1.0f,
                                                  static_cast<float>(999 - k) / 500.0f - 1.0f};
        break;
      default:
        break;
    }
  }
  return literal;
}

class CudaKernelTest : public CudaDeviceTest<> {
 protected:
  // Runs the entry computation of `text` as a loop fusion on the GPU and
  // compares every output with the interpreter's.
  void ExpectMatchesInterpreter(const std::string& text, ErrorSpec error) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    const HloComputation& fusion = *(*module)->entry_computation();
    // sm_90 PTX, which the driver compiles for this device and newer ones;
    // an older device gets its own.
    PtxOptions options;
    if (device_->compute_capability_major() < 9) options.arch = device_->ArchName();
    auto kernel = CompileLoopFusionToPtx(fusion, "fusion", options);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    auto loaded = CudaModule::LoadPtx(*device_, kernel->ptx);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    auto function = (*loaded)->GetFunction(kernel->name);
    ASSERT_TRUE(function.ok()) << function.status();

    std::vector<Literal> inputs;
    std::vector<const Literal*> pointers;
    inputs.reserve(fusion.num_parameters());
    for (int64_t i = 0; i < fusion.num_parameters(); ++i) {
      inputs.push_back(MakeInput(fusion.parameter_instruction(i)->shape(), static_cast<int>(i)));
    }
    pointers.reserve(inputs.size());
    for (const Literal& input : inputs) pointers.push_back(&input);
    HloEvaluator evaluator;
    auto expected = evaluator.Evaluate(**module, pointers);
    ASSERT_TRUE(expected.ok()) << expected.status();

    std::vector<ScopedShapedBuffer> buffers;
    std::vector<se::DeviceMemoryBase> arguments;
    buffers.reserve(inputs.size());
    arguments.reserve(inputs.size() + 8);
    for (const Literal& input : inputs) {
      auto buffer = AllocateCudaShapedBuffer(input.shape(), allocator_.get(), stream_.get());
      ASSERT_TRUE(buffer.ok()) << buffer.status();
      ASSERT_TRUE(TransferLiteralToCuda(stream_.get(), input, *buffer).ok());
      arguments.push_back(buffer->root_buffer());
      buffers.push_back(*std::move(buffer));
    }
    const Shape& result_shape = fusion.root_instruction()->shape();
    auto result = AllocateCudaShapedBuffer(result_shape, allocator_.get(), stream_.get());
    ASSERT_TRUE(result.ok()) << result.status();
    if (result_shape.IsTuple()) {
      for (int64_t i = 0; i < result_shape.tuple_shapes_size(); ++i) {
        arguments.push_back(result->buffer({i}));
      }
    } else {
      arguments.push_back(result->root_buffer());
    }
    ASSERT_TRUE(
        LaunchKernel(stream_.get(), *function, kernel->grid, kernel->block, arguments).ok());
    auto actual = TransferLiteralFromCuda(stream_.get(), *result);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_TRUE(LiteralsNear(*expected, *actual, error).ok())
        << LiteralsNear(*expected, *actual, error) << "\n"
        << text;
  }
};

TEST_F(CudaKernelTest, ElementwiseAddOverManyBlocks) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[100003] parameter(0)
  y = f32[100003] parameter(1)
  ROOT r = f32[100003] add(x, y)
})",
                           ErrorSpec(0));
}

TEST_F(CudaKernelTest, Transcendentals) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f64[1000] parameter(0)
  y = f32[1000] parameter(1)
  e = f64[1000] exponential(x)
  s = f32[1000] sine(y)
  t = f32[1000] tanh(y)
  c = f32[1000] convert(e)
  a = f32[1000] add(s, t)
  ROOT r = f32[1000] add(a, c)
})",
                           ErrorSpec(1e-5, 1e-5));
}

TEST_F(CudaKernelTest, BroadcastMultiOutputAndReduction) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[64,48] parameter(0)
  b = f32[48] parameter(1)
  bb = f32[64,48] broadcast(b), dimensions={1}
  sum = f32[64,48] add(x, bb)
  zero = f32[] constant(0)
  z = f32[64,48] broadcast(zero), dimensions={}
  relu = f32[64,48] maximum(sum, z)
  ROOT t = (f32[64,48], f32[64,48]) tuple(sum, relu)
})",
                           ErrorSpec(0));
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,256] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[16] reduce(x, zero), dimensions={1}, to_apply=add
})",
                           ErrorSpec(1e-5, 1e-5));
}

TEST_F(CudaKernelTest, RowReductionsAcrossABlock) {
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,1000] parameter(0)
  e = f32[16,1000] exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[16] reduce(e, zero), dimensions={1}, to_apply=add
})",
                           ErrorSpec(1e-4, 1e-5));
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
ENTRY e {
  x = f64[8,100] parameter(0)
  zero = f64[] constant(0)
  ROOT r = f64[8] reduce(x, zero), dimensions={1}, to_apply=add
})",
                           ErrorSpec(1e-12, 1e-12));
  ExpectMatchesInterpreter(R"(
HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[3,20,30] parameter(0)
  low = s32[] constant(-2147483648)
  ROOT r = s32[3] reduce(x, low), dimensions={2,1}, to_apply=max
})",
                           ErrorSpec(0));
}

TEST_F(CudaKernelTest, ColumnReductionsAcrossABlock) {
  // 1000 columns (32 blocks, the last partly out of range), 4099 rows
  // (row threads with different counts of rows).
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4099,1000] parameter(0)
  e = f32[4099,1000] exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[1000] reduce(e, zero), dimensions={0}, to_apply=add
})",
                           ErrorSpec(1e-3, 1e-4));
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
ENTRY e {
  x = f64[100,3,50] parameter(0)
  zero = f64[] constant(0)
  ROOT r = f64[50] reduce(x, zero), dimensions={1,0}, to_apply=add
})",
                           ErrorSpec(1e-12, 1e-12));
  ExpectMatchesInterpreter(R"(
HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[10,7,40] parameter(0)
  low = s32[] constant(-2147483648)
  ROOT r = s32[7,40] reduce(x, low), dimensions={0}, to_apply=max
})",
                           ErrorSpec(0));
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[50,4,8]{0,2,1} parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4,8]{0,1} reduce(x, zero), dimensions={0}, to_apply=add
})",
                           ErrorSpec(1e-4, 1e-5));
}

TEST_F(CudaKernelTest, SoftmaxDenominatorWithItsMaxHoisted) {
  ExpectMatchesInterpreter(R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,1000] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[16] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[16,1000] broadcast(m), dimensions={0}
  s = f32[16,1000] subtract(x, mb)
  e = f32[16,1000] exponential(s)
  zero = f32[] constant(0)
  ROOT r = f32[16] reduce(e, zero), dimensions={1}, to_apply=add
})",
                           ErrorSpec(1e-4, 1e-5));
}

TEST_F(CudaKernelTest, ComplexWithoutHelpers) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = c64[500] parameter(0)
  y = c64[500] parameter(1)
  m = c64[500] multiply(x, y)
  e = c64[500] exponential(m)
  l = c64[500] log(y)
  ROOT r = c64[500] add(e, l)
})",
                           ErrorSpec(1e-5, 1e-5));
}

TEST_F(CudaKernelTest, Layouts) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[64,32]{0,1} parameter(0)
  y = f32[64,32]{1,0} parameter(1)
  t = f32[32,64]{1,0} transpose(x), dimensions={1,0}
  u = f32[32,64]{1,0} transpose(y), dimensions={1,0}
  s = f32[32,64]{0,1} add(t, u)
  ROOT r = (f32[32,64]{0,1}, f32[32,64]{1,0}) tuple(s, t)
})",
                           ErrorSpec(0));
  // A bitcast between layouts: the same bytes, another shape.
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[4,128]{1,0} parameter(0)
  b = f32[4,128,1]{1,0,2} bitcast(x)
  ROOT n = f32[4,128,1]{2,1,0} negate(b)
})",
                           ErrorSpec(0));
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,8,300]{0,2,1} parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4,8]{0,1} reduce(x, zero), dimensions={2}, to_apply=add
})",
                           ErrorSpec(1e-5, 1e-5));
}

TEST_F(CudaKernelTest, Integers) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = s32[7,9] parameter(0)
  y = s32[7,9] parameter(1)
  lt = pred[7,9] compare(x, y), direction=LT
  d = s32[7,9] divide(x, y)
  ROOT s = s32[7,9] select(lt, d, y)
})",
                           ErrorSpec(0));
}

TEST_F(CudaKernelTest, BadPtxAndLaunchesAreErrors) {
  auto bad = CudaModule::LoadPtx(*device_, "not ptx");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("PTX"));
}

}  // namespace
}  // namespace axle::gpu
