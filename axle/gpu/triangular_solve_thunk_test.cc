//===- triangular_solve_thunk_test.cc - triangular-solve on cuBLAS trsm ---===//
//
// TriangularSolvePlanTest (any machine): every side, triangle, op and
// diagonal kind, batched, as plans executed by a host trsm (cuBLAS's
// column-major semantics) on the row-major buffers, compared with the
// interpreter. TriangularSolveThunkTest (a GPU): the same through the
// thunk on device buffers; skipped, with a message, without a GPU.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/triangular_solve_thunk.h"

#include <complex>
#include <cstdint>
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

struct SolveCase {
  std::string text;
};

std::string SolveModule(const std::string& type, const std::string& batch, int64_t m, int64_t n,
                        bool left, bool lower, bool unit, const std::string& transpose) {
  const int64_t s = left ? m : n;
  const std::string a = absl::StrCat(type, "[", batch, s, ",", s, "]");
  const std::string b = absl::StrCat(type, "[", batch, m, ",", n, "]");
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", a, " parameter(0)\n  b = ", b,
                      " parameter(1)\n  ROOT x = ", b,
                      " triangular-solve(a, b), left_side=", left ? "true" : "false",
                      ", lower=", lower ? "true" : "false",
                      ", unit_diagonal=", unit ? "true" : "false", ", transpose_a=", transpose,
                      "\n}\n");
}

std::vector<std::string> Cases(const std::string& type) {
  std::vector<std::string> cases;
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        for (bool unit : {false, true}) {
          cases.push_back(SolveModule(type, "", 5, 3, left, lower, unit, transpose));
        }
        cases.push_back(SolveModule(type, "2,3,", 4, 6, left, lower, false, transpose));
      }
    }
  }
  return cases;
}

// a: a dominant diagonal (4 + ...), small values elsewhere (both
// triangles, so reading the wrong one shows); b: values in [-2, 2).
Literal MakeInput(const Shape& shape, bool is_a) {
  Literal literal(shape);
  const int64_t rank = shape.rank();
  const int64_t cols = shape.dimensions(rank - 1);
  const int64_t rows = shape.dimensions(rank - 2);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const int64_t k = (i * 7919 + (is_a ? 0 : 104729)) % 64;
    double re = static_cast<double>(k) / 16.0 - 2.0;
    double im = static_cast<double>((k * 5 + 3) % 64) / 16.0 - 2.0;
    if (is_a) {
      const int64_t row = (i / cols) % rows;
      const int64_t col = i % cols;
      re = row == col ? 4.0 + re / 4 : re / 8;
      im = row == col ? 0.5 : im / 8;
    }
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

// Solves t y = r for a dense square t (Gaussian elimination, partial
// pivoting); `r` is overwritten with y.
void DenseSolve(std::vector<std::vector<Complex>> t, std::vector<Complex>& r) {
  const size_t n = r.size();
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t i = c + 1; i < n; ++i) {
      if (std::abs(t[i][c]) > std::abs(t[pivot][c])) pivot = i;
    }
    std::swap(t[c], t[pivot]);
    std::swap(r[c], r[pivot]);
    for (size_t i = c + 1; i < n; ++i) {
      const Complex f = t[i][c] / t[c][c];
      for (size_t j = c; j < n; ++j) t[i][j] -= f * t[c][j];
      r[i] -= f * r[c];
    }
  }
  for (size_t c = n; c-- > 0;) {
    for (size_t j = c + 1; j < n; ++j) r[c] -= t[c][j] * r[j];
    r[c] /= t[c][c];
  }
}

// cublas<t>trsm on host buffers (column major, B overwritten).
void HostTrsm(const TriangularSolvePlan& plan, const std::vector<Complex>& a,
              std::vector<Complex>& b) {
  const int64_t s = plan.left ? plan.m : plan.n;
  for (int64_t batch = 0; batch < plan.batch; ++batch) {
    const Complex* a0 = a.data() + batch * plan.stride_a;
    Complex* b0 = b.data() + batch * plan.stride_b;
    // op(T), T the plan's triangle of A.
    std::vector<std::vector<Complex>> t(s, std::vector<Complex>(s));
    for (int64_t i = 0; i < s; ++i) {
      for (int64_t j = 0; j < s; ++j) {
        const bool inside = plan.lower ? i >= j : i <= j;
        Complex value = inside ? a0[i + j * plan.lda] : 0;
        if (i == j && plan.unit_diagonal) value = 1;
        if (plan.op == 'N') t[i][j] = value;
        if (plan.op == 'T') t[j][i] = value;
        if (plan.op == 'C') t[j][i] = std::conj(value);
      }
    }
    if (plan.left) {  // op(T) X = B, column by column
      for (int64_t j = 0; j < plan.n; ++j) {
        std::vector<Complex> r(s);
        for (int64_t i = 0; i < s; ++i) r[i] = b0[i + j * plan.ldb];
        DenseSolve(t, r);
        for (int64_t i = 0; i < s; ++i) b0[i + j * plan.ldb] = r[i];
      }
    } else {  // X op(T) = B: op(T)^T X^T = B^T, row by row
      std::vector<std::vector<Complex>> tt(s, std::vector<Complex>(s));
      for (int64_t i = 0; i < s; ++i) {
        for (int64_t j = 0; j < s; ++j) tt[i][j] = t[j][i];
      }
      for (int64_t i = 0; i < plan.m; ++i) {
        std::vector<Complex> r(s);
        for (int64_t j = 0; j < s; ++j) r[j] = b0[i + j * plan.ldb];
        DenseSolve(tt, r);
        for (int64_t j = 0; j < s; ++j) b0[i + j * plan.ldb] = r[j];
      }
    }
  }
}

TEST(TriangularSolvePlanTest, EveryKindMatchesTheInterpreter) {
  for (const char* type : {"f32", "f64", "c64"}) {
    for (const std::string& text : Cases(type)) {
      SCOPED_TRACE(text);
      auto module = ParseAndReturnUnverifiedModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      const HloInstruction& solve = *(*module)->entry_computation()->root_instruction();
      auto plan = MakeTriangularSolvePlan(solve);
      ASSERT_TRUE(plan.ok()) << plan.status();
      SCOPED_TRACE(plan->ToString());
      const Literal a = MakeInput(solve.operand(0)->shape(), true);
      const Literal b = MakeInput(solve.operand(1)->shape(), false);
      HloEvaluator evaluator;
      auto expected = evaluator.Evaluate(**module, {&a, &b});
      ASSERT_TRUE(expected.ok()) << expected.status();
      std::vector<Complex> x = Elements(b);
      HostTrsm(*plan, Elements(a), x);
      const std::vector<Complex> want = Elements(*expected);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_LE(std::abs(want[i] - x[i]), 1e-4 * (1 + std::abs(want[i])))
            << "element " << i << ": interpreter " << want[i] << ", plan " << x[i];
      }
    }
  }
}

TEST(TriangularSolvePlanTest, RefusesOtherTypesAndLayoutsNamingTheSolve) {
  for (const std::string& text :
       {SolveModule("f16", "", 4, 4, true, true, false, "NO_TRANSPOSE"),
        std::string("HloModule m\nENTRY e {\n  a = f32[4,4]{0,1} parameter(0)\n"
                    "  b = f32[4,3]{1,0} parameter(1)\n  ROOT x = f32[4,3]{1,0} "
                    "triangular-solve(a, b), left_side=true, lower=true, "
                    "transpose_a=NO_TRANSPOSE\n}\n")}) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    auto plan = MakeTriangularSolvePlan(*(*module)->entry_computation()->root_instruction());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented) << text;
    EXPECT_THAT(plan.status().message(), ::testing::HasSubstr("triangular-solve %x")) << text;
  }
}

TEST(TriangularSolvePlanTest, PtxasAcceptsTheBatchPointersKernel) {
  if (absl::StatusOr<std::string> ptxas = PtxasPath(); !ptxas.ok()) {
    GTEST_SKIP() << "ptxas not available: " << ptxas.status().message();
  }
  absl::StatusOr<std::string> cubin = AssemblePtx(TriangularSolveBatchPointersPtx(), "sm_90");
  ASSERT_TRUE(cubin.ok()) << cubin.status() << "\n" << TriangularSolveBatchPointersPtx();
}

TEST(TriangularSolveThunkTest, EveryKindMatchesTheInterpreterOnTheDevice) {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  if (!device.ok()) GTEST_SKIP() << "no CUDA device: " << device.status().message();
  auto stream = CudaStream::Create(**device);
  ASSERT_TRUE(stream.ok()) << stream.status();
  CudaMemoryAllocator allocator(nullptr, **device);
  allocator.OrderFreesOn(stream->get());
  for (const std::string type : {"f32", "f64", "c64", "c128"}) {
    for (const std::string& text : Cases(type)) {
      SCOPED_TRACE(text);
      auto module = ParseAndReturnUnverifiedModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      const HloInstruction& solve = *(*module)->entry_computation()->root_instruction();
      auto thunk = MakeTriangularSolveThunk(solve, GpuThunkValues{{0, 1}, {2}});
      ASSERT_TRUE(thunk.ok()) << thunk.status();
      absl::Status initialized = (*thunk)->Initialize(**device);
      if (absl::IsUnavailable(initialized)) GTEST_SKIP() << initialized.message();
      ASSERT_TRUE(initialized.ok()) << initialized;
      const Literal a = MakeInput(solve.operand(0)->shape(), true);
      const Literal b = MakeInput(solve.operand(1)->shape(), false);
      HloEvaluator evaluator;
      auto expected = evaluator.Evaluate(**module, {&a, &b});
      ASSERT_TRUE(expected.ok()) << expected.status();
      std::vector<ScopedShapedBuffer> buffers;
      std::vector<se::DeviceMemoryBase> values;
      for (const Literal* input : {&a, &b, static_cast<const Literal*>(&*expected)}) {
        auto buffer = AllocateCudaShapedBuffer(input->shape(), &allocator, stream->get());
        ASSERT_TRUE(buffer.ok()) << buffer.status();
        if (input != &*expected) {
          absl::Status copied = TransferLiteralToCuda(stream->get(), *input, *buffer);
          ASSERT_TRUE(copied.ok()) << copied;
        }
        values.push_back(buffer->root_buffer());
        buffers.push_back(*std::move(buffer));
      }
      auto scratch = allocator.Allocate(0, (*thunk)->scratch_bytes());
      ASSERT_TRUE(scratch.ok()) << scratch.status();
      GpuThunkContext context;
      context.device = device->get();
      context.stream = stream->get();
      context.buffers = values;
      context.scratch = scratch->cref();
      absl::Status executed = (*thunk)->Execute(context);
      ASSERT_TRUE(executed.ok()) << executed;
      auto actual = TransferLiteralFromCuda(stream->get(), buffers[2]);
      ASSERT_TRUE(actual.ok()) << actual.status();
      const bool single = type == "f32" || type == "c64";
      const ErrorSpec error = single ? ErrorSpec(1e-4, 1e-4) : ErrorSpec(1e-10, 1e-10);
      absl::Status near = LiteralsNear(*expected, *actual, error);
      EXPECT_TRUE(near.ok()) << near << "\nexpected " << expected->ToString() << "\nactual "
                             << actual->ToString();
    }
  }
  allocator.OrderFreesOn(nullptr);
}

}  // namespace
}  // namespace axle::gpu
