//===- cholesky_thunk_test.cc - cholesky on cuSOLVER potrf ------------------===//
//
// CholeskyPlanTest (any machine): plans executed by a host potrf (column
// major, cuSOLVER's semantics) and the finishing kernel's rules on the
// row-major buffers, compared with the interpreter, positive definite or
// not; ptxas accepts the finishing kernels. CholeskyThunkTest (a GPU): the
// same through the thunk; skipped, with a message, without a GPU.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/cholesky_thunk.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using Complex = std::complex<double>;

std::string CholeskyModule(const std::string& type, const std::string& dims, bool lower) {
  const std::string shape = absl::StrCat(type, "[", dims, "]");
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", shape, " parameter(0)\n  ROOT l = ", shape,
                      " cholesky(a), lower=", lower ? "true" : "false", "\n}\n");
}

// Hermitian positive definite matrices (a dominant real diagonal), except
// matrix `bad` of the batch (a negative diagonal entry), when >= 0. The
// triangle cholesky must not read (upper when `lower`) is off by 1.5.
Literal MakeInput(const Shape& shape, int64_t bad, bool lower) {
  Literal literal(shape);
  const int64_t n = shape.dimensions(shape.rank() - 1);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const int64_t matrix = i / (n * n);
    const int64_t row = (i / n) % n;
    const int64_t col = i % n;
    const int64_t lo = std::min(row, col), hi = std::max(row, col);
    const int64_t k = (lo * 31 + hi * 17 + matrix * 7) % 16;
    double re = static_cast<double>(k) / 16.0 - 0.5;
    double im = row == col ? 0 : (static_cast<double>((k * 5) % 16) / 16.0 - 0.5);
    if (row > col) im = -im;  // Hermitian
    if (row == col) re = matrix == bad && row == n / 2 ? -3.0 : static_cast<double>(n) + re;
    if (lower ? col > row : row > col) re += 1.5;
    switch (shape.element_type()) {
      case F32:
        literal.data<float>()[i] = static_cast<float>(re);
        break;
      case F64:
        literal.data<double>()[i] = re;
        break;
      case C64:
        literal.data<std::complex<float>>()[i] = {static_cast<float>(re), static_cast<float>(im)};
        break;
      case C128:
        literal.data<Complex>()[i] = {re, im};
        break;
      default:
        break;
    }
  }
  return literal;
}

std::vector<Complex> Elements(const Literal& literal) {
  std::vector<Complex> out(literal.shape().num_elements());
  for (size_t i = 0; i < out.size(); ++i) {
    switch (literal.shape().element_type()) {
      case F32:
        out[i] = literal.data<float>()[i];
        break;
      case F64:
        out[i] = literal.data<double>()[i];
        break;
      case C64:
        out[i] = Complex(literal.data<std::complex<float>>()[i]);
        break;
      case C128:
        out[i] = literal.data<Complex>()[i];
        break;
      default:
        break;
    }
  }
  return out;
}

// cuSOLVER's potrf (column major, in place, only the plan's triangle read
// and written) per matrix, then the finishing kernel's rules on the row-major
// buffer.
void HostCholesky(const CholeskyPlan& plan, std::vector<Complex>& buffer) {
  const int64_t n = plan.n;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t b = 0; b < plan.batch; ++b) {
    Complex* a = buffer.data() + b * plan.stride;
    // H: the Hermitian matrix from the triangle; L lower with H = L L^H.
    auto h = [&](int64_t i, int64_t j) {
      const bool stored = plan.potrf_lower ? i >= j : i <= j;
      return stored ? a[i + j * plan.lda] : std::conj(a[j + i * plan.lda]);
    };
    std::vector<Complex> l(n * n);
    bool ok = true;
    for (int64_t j = 0; j < n && ok; ++j) {
      Complex d = h(j, j);
      for (int64_t p = 0; p < j; ++p) d -= l[j + p * n] * std::conj(l[j + p * n]);
      if (!(d.real() > 0)) {
        ok = false;
        break;
      }
      l[j + j * n] = std::sqrt(d.real());
      for (int64_t i = j + 1; i < n; ++i) {
        Complex s = h(i, j);
        for (int64_t p = 0; p < j; ++p) s -= l[i + p * n] * std::conj(l[j + p * n]);
        l[i + j * n] = s / l[j + j * n];
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        // potrf's output in its triangle: L, or U = L^H.
        if (ok && plan.potrf_lower && i >= j) a[i + j * plan.lda] = l[i + j * n];
        if (ok && !plan.potrf_lower && i <= j) a[i + j * plan.lda] = std::conj(l[j + i * n]);
      }
    }
    // The finishing kernel, row major: element (row, col) at row * n + col.
    for (int64_t row = 0; row < n; ++row) {
      for (int64_t col = 0; col < n; ++col) {
        Complex& x = a[row * n + col];
        if (!ok) {
          x = {nan, nan};
        } else if (plan.lower ? col > row : row > col) {
          x = 0;
        }
      }
    }
  }
}

bool Near(Complex want, Complex got, double tolerance) {
  if (std::isnan(want.real()) || std::isnan(got.real())) {
    return std::isnan(want.real()) && std::isnan(got.real());
  }
  return std::abs(want - got) <= tolerance * (1 + std::abs(want));
}

struct Case {
  std::string type, dims;
  bool lower;
  int64_t bad;
};
std::vector<Case> Cases(const std::string& type) {
  return {{type, "5,5", true, -1},   {type, "5,5", false, -1},    {type, "3,6,6", true, 1},
          {type, "3,6,6", false, 2}, {type, "2,2,4,4", true, -1}, {type, "1,1", false, -1}};
}

TEST(CholeskyPlanTest, MatchesTheInterpreter) {
  for (const char* type : {"f32", "f64", "c64", "c128"}) {
    for (const Case& test : Cases(type)) {
      const std::string text = CholeskyModule(test.type, test.dims, test.lower);
      SCOPED_TRACE(text);
      auto module = ParseAndReturnUnverifiedModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      const HloInstruction& cholesky = *(*module)->entry_computation()->root_instruction();
      auto plan = MakeCholeskyPlan(cholesky);
      ASSERT_TRUE(plan.ok()) << plan.status();
      SCOPED_TRACE(plan->ToString());
      const Literal a = MakeInput(cholesky.operand(0)->shape(), test.bad, test.lower);
      HloEvaluator evaluator;
      auto expected = evaluator.Evaluate(**module, {&a});
      ASSERT_TRUE(expected.ok()) << expected.status();
      std::vector<Complex> x = Elements(a);
      HostCholesky(*plan, x);
      const std::vector<Complex> want = Elements(*expected);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_TRUE(Near(want[i], x[i], 1e-4))
            << "element " << i << ": interpreter " << want[i] << ", plan " << x[i];
      }
    }
  }
}

TEST(CholeskyPlanTest, RefusesOtherTypesAndLayoutsNamingTheCholesky) {
  for (const std::string& text :
       {CholeskyModule("f16", "4,4", true),
        std::string("HloModule m\nENTRY e {\n  a = f32[4,4]{0,1} parameter(0)\n"
                    "  ROOT l = f32[4,4]{1,0} cholesky(a), lower=true\n}\n")}) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    auto plan = MakeCholeskyPlan(*(*module)->entry_computation()->root_instruction());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented) << text;
    EXPECT_THAT(plan.status().message(), ::testing::HasSubstr("cholesky %l")) << text;
  }
}

TEST(CholeskyPlanTest, PtxasAcceptsTheFinishingKernels) {
  if (absl::StatusOr<std::string> ptxas = PtxasPath(); !ptxas.ok()) {
    GTEST_SKIP() << "ptxas not available: " << ptxas.status().message();
  }
  absl::StatusOr<std::string> cubin = AssemblePtx(CholeskyFinishPtx(), "sm_90");
  ASSERT_TRUE(cubin.ok()) << cubin.status() << "\n" << CholeskyFinishPtx();
  EXPECT_THAT(CholeskyFinishPtx(), ::testing::HasSubstr("axle_cholesky_finish_b32"));
  EXPECT_THAT(CholeskyFinishPtx(), ::testing::HasSubstr("axle_cholesky_finish_b64"));
}

TEST(CholeskyThunkTest, MatchesTheInterpreterOnTheDevice) {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  if (!device.ok()) GTEST_SKIP() << "no CUDA device: " << device.status().message();
  auto stream = CudaStream::Create(**device);
  ASSERT_TRUE(stream.ok()) << stream.status();
  CudaMemoryAllocator allocator(nullptr, **device);
  allocator.OrderFreesOn(stream->get());
  for (const char* type : {"f32", "f64", "c64", "c128"}) {
    for (const Case& test : Cases(type)) {
      const std::string text = CholeskyModule(test.type, test.dims, test.lower);
      SCOPED_TRACE(text);
      auto module = ParseAndReturnUnverifiedModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      const HloInstruction& cholesky = *(*module)->entry_computation()->root_instruction();
      auto thunk = MakeCholeskyThunk(cholesky, GpuThunkValues{{0}, {1}});
      ASSERT_TRUE(thunk.ok()) << thunk.status();
      absl::Status initialized = (*thunk)->Initialize(**device);
      if (absl::IsUnavailable(initialized)) GTEST_SKIP() << initialized.message();
      ASSERT_TRUE(initialized.ok()) << initialized;
      const Literal a = MakeInput(cholesky.operand(0)->shape(), test.bad, test.lower);
      HloEvaluator evaluator;
      auto expected = evaluator.Evaluate(**module, {&a});
      ASSERT_TRUE(expected.ok()) << expected.status();
      auto input = AllocateCudaShapedBuffer(a.shape(), &allocator, stream->get());
      ASSERT_TRUE(input.ok()) << input.status();
      absl::Status copied = TransferLiteralToCuda(stream->get(), a, *input);
      ASSERT_TRUE(copied.ok()) << copied;
      auto result = AllocateCudaShapedBuffer(cholesky.shape(), &allocator, stream->get());
      ASSERT_TRUE(result.ok()) << result.status();
      auto scratch = allocator.Allocate(0, (*thunk)->scratch_bytes());
      ASSERT_TRUE(scratch.ok()) << scratch.status();
      std::vector<se::DeviceMemoryBase> values = {input->root_buffer(), result->root_buffer()};
      GpuThunkContext context;
      context.device = device->get();
      context.stream = stream->get();
      context.buffers = values;
      context.scratch = scratch->cref();
      absl::Status executed = (*thunk)->Execute(context);
      ASSERT_TRUE(executed.ok()) << executed;
      absl::Status synchronized = (*stream)->Synchronize();
      ASSERT_TRUE(synchronized.ok()) << synchronized;
      auto actual = TransferLiteralFromCuda(stream->get(), *result);
      ASSERT_TRUE(actual.ok()) << actual.status();
      const std::vector<Complex> want = Elements(*expected);
      const std::vector<Complex> got = Elements(*actual);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_TRUE(Near(want[i], got[i], 1e-4))
            << "element " << i << ": interpreter " << want[i] << ", device " << got[i]
            << "\nexpected " << expected->ToString() << "\nactual " << actual->ToString();
      }
    }
  }
  allocator.OrderFreesOn(nullptr);
}

}  // namespace
}  // namespace axle::gpu
