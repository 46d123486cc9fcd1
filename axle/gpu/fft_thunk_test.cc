//===- fft_thunk_test.cc - kFft through cuFFT --------------------------------===//
//
// Without a GPU: the thunk's checks (types, lengths, layouts name the
// instruction), its scratch for IRFFT, and the 1/N scale kernel's PTX
// through ptxas. On a GPU: FFT, IFFT, RFFT and IRFFT of ranks 1-3, c64 and
// c128, batched, against the interpreter (skipped, with a message, without
// one; also when cuFFT cannot be opened).
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/fft_thunk.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/core/shape_util.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/cuda_device_test_util.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

std::string FftModule(const std::string& in, const std::string& out, const std::string& type,
                      const std::string& lengths) {
  return absl::StrCat("HloModule fft\nENTRY e {\n  x = ", in,
                      " parameter(0)\n  ROOT my_fft = ", out, " fft(x), fft_type=", type,
                      ", fft_length={", lengths, "}\n}\n");
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeFrom(const std::string& text,
                                                   std::unique_ptr<HloModule>* module) {
  auto parsed = ParseAndReturnUnverifiedModule(text);
  if (!parsed.ok()) return parsed.status();
  *module = *std::move(parsed);
  return MakeFftThunk(*(*module)->entry_computation()->root_instruction(), {{0}, {1}});
}

TEST(FftThunkTest, RefusesWhatItDoesNotTakeNamingTheInstruction) {
  std::unique_ptr<HloModule> module;
  auto thunk = MakeFrom(FftModule("c64[4,8]{0,1}", "c64[4,8]", "FFT", "8"), &module);
  ASSERT_FALSE(thunk.ok());
  EXPECT_EQ(thunk.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(thunk.status().message(), HasSubstr("my_fft"));

  thunk = MakeFrom(FftModule("c64[4,8]", "c64[4,8]", "IRFFT", "8"), &module);
  ASSERT_FALSE(thunk.ok());
  EXPECT_THAT(thunk.status().message(), HasSubstr("my_fft"));

  thunk = MakeFrom(FftModule("f32[4,8]", "c64[4,4]", "RFFT", "8"), &module);
  ASSERT_FALSE(thunk.ok());
  EXPECT_EQ(thunk.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(thunk.status().message(), HasSubstr("fft_length {8}"));
}

TEST(FftThunkTest, IrfftCopiesItsInputToScratch) {
  std::unique_ptr<HloModule> module;
  auto thunk = MakeFrom(FftModule("c64[3,4,5]", "f32[3,4,8]", "IRFFT", "4,8"), &module);
  ASSERT_TRUE(thunk.ok()) << thunk.status();
  EXPECT_EQ((*thunk)->scratch_bytes(), 3 * 4 * 5 * 8);
  thunk = MakeFrom(FftModule("f32[3,4,8]", "c64[3,4,5]", "RFFT", "4,8"), &module);
  ASSERT_TRUE(thunk.ok()) << thunk.status();
  EXPECT_EQ((*thunk)->scratch_bytes(), 0);
}

TEST(FftThunkTest, ScaleKernelAssembles) {
  if (!PtxasPath().ok()) GTEST_SKIP() << "no ptxas: " << PtxasPath().status().message();
  for (PrimitiveType type : {F32, F64}) {
    auto kernel = CompileScaleKernelToPtx(type, 1000, 0.125, "scale");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ(kernel->grid, 4);
    auto cubin = AssemblePtx(kernel->ptx, "sm_90");
    EXPECT_TRUE(cubin.ok()) << cubin.status() << "\n" << kernel->ptx;
  }
  EXPECT_FALSE(CompileScaleKernelToPtx(S32, 10, 2, "scale").ok());
}

// Deterministic values in [-1, 1), varied by `seed`.
Literal MakeInput(const Shape& shape, int seed) {
  Literal literal(ShapeUtil::MakeShape(shape.element_type(), shape.dimensions()));
  const int64_t count = shape.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    const double a = static_cast<double>((i * 7919 + int64_t{seed} * 104729) % 1000) / 500.0 - 1;
    const double b = static_cast<double>((i * 104729 + 17) % 1000) / 500.0 - 1;
    switch (shape.element_type()) {
      case F32:
        literal.data<float>()[i] = static_cast<float>(a);
        break;
      case F64:
        literal.data<double>()[i] = a;
        break;
      case C64:
        literal.data<std::complex<float>>()[i] = {static_cast<float>(a), static_cast<float>(b)};
        break;
      case C128:
        literal.data<std::complex<double>>()[i] = {a, b};
        break;
      default:
        break;
    }
  }
  return literal;
}

struct FftCase {
  const char* name;
  const char* in;
  const char* out;
  const char* type;
  const char* lengths;
  // IRFFT: the real array whose RFFT is the input (a Hermitian input,
  // which cuFFT's complex-to-real transforms assume).
  const char* real_source;
};

const FftCase kFftCases[] = {
    {"fft_c64_1d", "c64[3,8]", "c64[3,8]", "FFT", "8", nullptr},
    {"ifft_c64_2d", "c64[2,4,6]", "c64[2,4,6]", "IFFT", "4,6", nullptr},
    {"fft_c128_3d", "c128[2,4,3,5]", "c128[2,4,3,5]", "FFT", "4,3,5", nullptr},
    {"ifft_c128_1d_unbatched", "c128[16]", "c128[16]", "IFFT", "16", nullptr},
    {"rfft_f32_1d", "f32[4,16]", "c64[4,9]", "RFFT", "16", nullptr},
    {"rfft_f64_2d", "f64[3,6,10]", "c128[3,6,6]", "RFFT", "6,10", nullptr},
    {"irfft_c64_1d", "c64[4,9]", "f32[4,16]", "IRFFT", "16", "f32[4,16]"},
    {"irfft_c128_2d_odd", "c128[3,6,5]", "f64[3,6,9]", "IRFFT", "6,9", "f64[3,6,9]"},
    {"irfft_c64_3d", "c64[2,4,4,4]", "f32[2,4,4,6]", "IRFFT", "4,4,6", "f32[2,4,4,6]"},
};

class FftDeviceTest : public CudaDeviceTest<::testing::TestWithParam<FftCase>> {};

TEST_P(FftDeviceTest, ThunkMatchesInterpreter) {
  const FftCase& c = GetParam();
  const std::string text = FftModule(c.in, c.out, c.type, c.lengths);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& fft = *(*module)->entry_computation()->root_instruction();
  HloEvaluator evaluator;
  Literal input;
  if (c.real_source != nullptr) {
    auto rfft = ParseAndReturnUnverifiedModule(FftModule(c.real_source, c.in, "RFFT", c.lengths));
    ASSERT_TRUE(rfft.ok()) << rfft.status();
    const Literal real =
        MakeInput((*rfft)->entry_computation()->parameter_instruction(0)->shape(), 1);
    auto hermitian = evaluator.Evaluate(**rfft, {&real});
    ASSERT_TRUE(hermitian.ok()) << hermitian.status();
    input = *std::move(hermitian);
  } else {
    input = MakeInput(fft.operand(0)->shape(), 1);
  }
  auto expected = evaluator.Evaluate(**module, {&input});
  ASSERT_TRUE(expected.ok()) << expected.status();

  PtxOptions options;
  if (device_->compute_capability_major() < 9) options.arch = device_->ArchName();
  auto thunk = MakeFftThunkWithOptions(fft, {{0}, {1}}, options);
  ASSERT_TRUE(thunk.ok()) << thunk.status();
  absl::Status initialized = (*thunk)->Initialize(*device_);
  if (absl::IsUnavailable(initialized)) GTEST_SKIP() << initialized;
  ASSERT_TRUE(initialized.ok()) << initialized;

  auto in_buffer =
      AllocateCudaShapedBuffer(fft.operand(0)->shape(), allocator_.get(), stream_.get());
  ASSERT_TRUE(in_buffer.ok()) << in_buffer.status();
  ASSERT_TRUE(TransferLiteralToCuda(stream_.get(), input, *in_buffer).ok());
  auto out_buffer = AllocateCudaShapedBuffer(fft.shape(), allocator_.get(), stream_.get());
  ASSERT_TRUE(out_buffer.ok()) << out_buffer.status();
  std::optional<ScopedShapedBuffer> scratch;
  GpuThunkContext context;
  if ((*thunk)->scratch_bytes() > 0) {
    auto buffer = AllocateCudaShapedBuffer(ShapeUtil::MakeShape(U8, {(*thunk)->scratch_bytes()}),
                                           allocator_.get(), stream_.get());
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    scratch = *std::move(buffer);
    context.scratch = scratch->root_buffer();
  }
  const std::vector<se::DeviceMemoryBase> memory = {in_buffer->root_buffer(),
                                                    out_buffer->root_buffer()};
  context.device = device_.get();
  context.stream = stream_.get();
  context.buffers = memory;
  absl::Status status = (*thunk)->Execute(context);
  ASSERT_TRUE(status.ok()) << status;
  // A second run on the same stream reuses its plan.
  status = (*thunk)->Execute(context);
  ASSERT_TRUE(status.ok()) << status;
  auto actual = TransferLiteralFromCuda(stream_.get(), *out_buffer);
  ASSERT_TRUE(actual.ok()) << actual.status();
  const bool f32 = fft.shape().element_type() == F32 || fft.shape().element_type() == C64;
  const ErrorSpec error = f32 ? ErrorSpec(1e-4, 1e-4) : ErrorSpec(1e-10, 1e-10);
  absl::Status near = LiteralsNear(*expected, *actual, error);
  EXPECT_TRUE(near.ok()) << c.name << ": " << near << "\n" << text;
  // The input is intact (IRFFT works on a copy).
  auto input_after = TransferLiteralFromCuda(stream_.get(), *in_buffer);
  ASSERT_TRUE(input_after.ok()) << input_after.status();
  EXPECT_TRUE(LiteralsEqual(input, *input_after).ok()) << c.name << ": the input changed";
}

INSTANTIATE_TEST_SUITE_P(Cases, FftDeviceTest, ::testing::ValuesIn(kFftCases),
                         [](const ::testing::TestParamInfo<FftCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace axle::gpu
