//===- kernels_numeric_test.cc - fft, cholesky, triangular-solve, batch norm ===//
#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "axle/eval/kernel_test_util.h"
#include "axle/eval/kernels.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing_util::ExpectNear;
using testing_util::R1;
using testing_util::Values;

// --- fft --------------------------------------------------------------------------

Literal Fft(FftType type, std::vector<int64_t> lengths, const Shape& shape,
            const Literal& operand) {
  HloFftInstruction fft(HloOpcode::kFft, shape, {});
  fft.mutable_attrs()->fft_type = type;
  fft.mutable_attrs()->fft_length = lengths;
  absl::StatusOr<Literal> result = EvaluateFft(fft, operand);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : Literal();
}

TEST(FftTest, KnownDftOfFourPoints) {
  // DFT of {1,2,3,4}: X0 = 10, X1 = 1 - 2i - 3 + 4i = -2+2i, X2 = 1-2+3-4 = -2,
  // X3 = -2-2i.
  Literal x = R1<complex64>({1, 2, 3, 4});
  Literal expected = R1<complex64>({{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}});
  ExpectNear(Fft(FFT, {4}, ShapeUtil::MakeShape(C64, {4}), x), expected, 1e-5);
  ExpectNear(Fft(IFFT, {4}, ShapeUtil::MakeShape(C64, {4}), expected), x, 1e-5);
}

TEST(FftTest, OddLengthAndImpulse) {
  // The DFT of a unit impulse at n = 1 is exp(-2 pi i k / 3).
  Literal x = R1<complex128>({0, 1, 0});
  std::vector<complex128> e;
  for (int k = 0; k < 3; ++k) e.push_back(std::polar(1.0, -2 * M_PI * k / 3));
  ExpectNear(Fft(FFT, {3}, ShapeUtil::MakeShape(C128, {3}), x), Values<complex128>({3}, e), 1e-12);
}

TEST(FftTest, TwoDimensional) {
  // [[1,2],[3,4]]: X00 = 10, X01 = (1-2)+(3-4) = -2, X10 = (1+2)-(3+4) = -4, X11 = 0.
  Literal x = Values<complex64>({2, 2}, {1, 2, 3, 4});
  ExpectNear(Fft(FFT, {2, 2}, ShapeUtil::MakeShape(C64, {2, 2}), x),
             Values<complex64>({2, 2}, {10, -2, -4, 0}), 1e-5);
}

TEST(FftTest, BatchedRowsAreIndependent) {
  // fft_length {2} over [2,2]: each row {a, b} -> {a+b, a-b}.
  Literal x = Values<complex64>({2, 2}, {1, 2, 3, 5});
  ExpectNear(Fft(FFT, {2}, ShapeUtil::MakeShape(C64, {2, 2}), x),
             Values<complex64>({2, 2}, {3, -1, 8, -2}), 1e-5);
}

TEST(FftTest, RfftKeepsNonNegativeFrequencies) {
  Literal x = R1<float>({1, 2, 3, 4});
  ExpectNear(Fft(RFFT, {4}, ShapeUtil::MakeShape(C64, {3}), x),
             R1<complex64>({{10, 0}, {-2, 2}, {-2, 0}}), 1e-5);
}

TEST(FftTest, RfftIrfftRoundTripEvenAndOdd) {
  for (int64_t n : {4, 5}) {
    std::vector<double> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(std::sin(1.0 + 2.0 * i) * 3);
    Literal x = Values<double>({n}, values);
    Literal spectrum = Fft(RFFT, {n}, ShapeUtil::MakeShape(C128, {n / 2 + 1}), x);
    ExpectNear(Fft(IRFFT, {n}, ShapeUtil::MakeShape(F64, {n}), spectrum), x, 1e-12);
  }
}

TEST(FftTest, RfftIrfftRoundTripMultidimensionalBatched) {
  // Batch 2, transform over [3, 4].
  std::vector<float> values;
  for (int i = 0; i < 24; ++i) values.push_back(static_cast<float>((i * 7) % 5) - 1.5f);
  Literal x = Values<float>({2, 3, 4}, values);
  Literal spectrum = Fft(RFFT, {3, 4}, ShapeUtil::MakeShape(C64, {2, 3, 3}), x);
  // The DC term of batch 0 is the sum of its 12 values.
  float sum = 0;
  for (int i = 0; i < 12; ++i) sum += values[i];
  EXPECT_NEAR(spectrum.data<complex64>()[0].real(), sum, 1e-4);
  ExpectNear(Fft(IRFFT, {3, 4}, ShapeUtil::MakeShape(F32, {2, 3, 4}), spectrum), x, 1e-4);
}

TEST(FftTest, RfftMatchesComplexFft) {
  // RFFT over [2, 3] equals the first 2 columns of the full complex FFT.
  Literal x = Values<double>({2, 3}, {1, -2, 4, 0.5, 3, -1});
  Literal xc = Values<complex128>({2, 3}, {1, -2, 4, 0.5, 3, -1});
  Literal full = Fft(FFT, {2, 3}, ShapeUtil::MakeShape(C128, {2, 3}), xc);
  Literal half = Fft(RFFT, {2, 3}, ShapeUtil::MakeShape(C128, {2, 2}), x);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_LT(std::abs(half.Get<complex128>({r, c}) - full.Get<complex128>({r, c})), 1e-12);
}

TEST(FftTest, IrfftIgnoresImaginaryPartOfDc) {
  // Spectrum {1+5i, 0, 0} of length 4: the real part of (1+5i)/4 everywhere.
  Literal spectrum = R1<complex64>({{1, 5}, {0, 0}, {0, 0}});
  ExpectNear(Fft(IRFFT, {4}, ShapeUtil::MakeShape(F32, {4}), spectrum),
             R1<float>({0.25f, 0.25f, 0.25f, 0.25f}), 1e-6);
}

TEST(FftTest, WrongTypesAreErrors) {
  HloFftInstruction fft(HloOpcode::kFft, ShapeUtil::MakeShape(C64, {4}), {});
  fft.mutable_attrs()->fft_type = RFFT;
  fft.mutable_attrs()->fft_length = {4};
  EXPECT_EQ(EvaluateFft(fft, R1<complex64>({1, 2, 3, 4})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- cholesky ------------------------------------------------------------------------

absl::StatusOr<Literal> Cholesky(bool lower, const Literal& a) {
  HloCholeskyInstruction c(HloOpcode::kCholesky, a.shape(), {});
  c.mutable_attrs()->options.set_lower(lower);
  return EvaluateCholesky(c, a);
}

TEST(CholeskyTest, LowerAndUpperOfSpdMatrix) {
  // [[4,12,-16],[12,37,-43],[-16,-43,98]] = L L^T with
  // L = [[2,0,0],[6,1,0],[-8,5,3]]. The ignored triangle holds garbage.
  Literal lower_input = LiteralUtil::CreateR2<double>({{4, 99, 99}, {12, 37, 99}, {-16, -43, 98}});
  absl::StatusOr<Literal> l = Cholesky(true, lower_input);
  ASSERT_TRUE(l.ok()) << l.status();
  ExpectNear(*l, LiteralUtil::CreateR2<double>({{2, 0, 0}, {6, 1, 0}, {-8, 5, 3}}), 1e-12);

  Literal upper_input = LiteralUtil::CreateR2<double>({{4, 12, -16}, {-7, 37, -43}, {-7, -7, 98}});
  absl::StatusOr<Literal> u = Cholesky(false, upper_input);
  ASSERT_TRUE(u.ok()) << u.status();
  ExpectNear(*u, LiteralUtil::CreateR2<double>({{2, 6, -8}, {0, 1, 5}, {0, 0, 3}}), 1e-12);
}

TEST(CholeskyTest, BatchWithANonPositiveDefiniteMatrix) {
  // Batch of 2x2: 9I -> 3I; [[1,2],[2,1]] is indefinite -> all NaN.
  Literal a = Values<float>({2, 2, 2}, {9, 0, 0, 9, 1, 2, 2, 1});
  absl::StatusOr<Literal> l = Cholesky(true, a);
  ASSERT_TRUE(l.ok()) << l.status();
  absl::Span<const float> v = l->data<float>();
  EXPECT_EQ(v[0], 3);
  EXPECT_EQ(v[1], 0);
  EXPECT_EQ(v[2], 0);
  EXPECT_EQ(v[3], 3);
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(v[i])) << i;
}

TEST(CholeskyTest, Hermitian) {
  // [[4, 2i], [-2i, 5]] = L L^H with L = [[2, 0], [-i, 2]].
  Literal a = Values<complex64>({2, 2}, {{4, 0}, {0, 2}, {0, -2}, {5, 0}});
  absl::StatusOr<Literal> l = Cholesky(true, a);
  ASSERT_TRUE(l.ok()) << l.status();
  ExpectNear(*l, Values<complex64>({2, 2}, {{2, 0}, {0, 0}, {0, -1}, {2, 0}}), 1e-6);
  absl::StatusOr<Literal> u = Cholesky(false, a);
  ASSERT_TRUE(u.ok()) << u.status();
  ExpectNear(*u, Values<complex64>({2, 2}, {{2, 0}, {0, 1}, {0, 0}, {2, 0}}), 1e-6);
}

// --- triangular-solve ------------------------------------------------------------

absl::StatusOr<Literal> Solve(const Literal& a, const Literal& b, bool left, bool lower, bool unit,
                              TriangularSolveOptions::Transpose transpose) {
  HloTriangularSolveInstruction s(HloOpcode::kTriangularSolve, b.shape(), {});
  TriangularSolveOptions& o = s.mutable_attrs()->options;
  o.set_left_side(left);
  o.set_lower(lower);
  o.set_unit_diagonal(unit);
  o.set_transpose_a(transpose);
  return EvaluateTriangularSolve(s, a, b);
}

TEST(TriangularSolveTest, LowerLeftByHand) {
  // [[2,0,0],[4,5,0],[7,8,10]] x = {2, 14, 53}: x = {1, 2, 3}. The upper
  // triangle of a holds garbage that must not be read.
  Literal a = LiteralUtil::CreateR2<float>({{2, 50, 60}, {4, 5, 70}, {7, 8, 10}});
  absl::StatusOr<Literal> x = Solve(a, Values<float>({3, 1}, {2, 14, 53}), true, true, false,
                                    TriangularSolveOptions::NO_TRANSPOSE);
  ASSERT_TRUE(x.ok()) << x.status();
  ExpectNear(*x, Values<float>({3, 1}, {1, 2, 3}), 1e-5);
}

// op(a) as the solver sees it: the `lower` triangle of a (unit diagonal
// if asked), transposed or adjoint.
std::vector<std::vector<complex128>> OpA(const Literal& a, int64_t m, bool lower, bool unit,
                                         TriangularSolveOptions::Transpose transpose) {
  std::vector<std::vector<complex128>> t(m, std::vector<complex128>(m));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) {
      complex128 v = (lower ? i >= j : i <= j) ? a.GetAsComplex128(i * m + j) : 0;
      if (i == j && unit) v = 1;
      if (transpose == TriangularSolveOptions::NO_TRANSPOSE) {
        t[i][j] = v;
      } else {
        t[j][i] = transpose == TriangularSolveOptions::ADJOINT ? std::conj(v) : v;
      }
    }
  return t;
}

TEST(TriangularSolveTest, AllVariantsMultiplyBack) {
  // For every side, triangle, transpose and unit-diagonal choice, op(a) x = b
  // (or x op(a) = b) holds for the computed x.
  const int64_t m = 3, k = 2;
  Literal a = Values<complex128>(
      {m, m}, {{2, 1}, {1, -1}, {3, 0}, {4, 0}, {5, -2}, {6, 1}, {7, 2}, {8, 0}, {10, 1}});
  Literal b_left = Values<complex128>({m, k}, {{1, 0}, {2, 1}, {-3, 0}, {4, 0}, {0, 5}, {6, -1}});
  Literal b_right = Values<complex128>({k, m}, {{1, 0}, {2, 1}, {-3, 0}, {4, 0}, {0, 5}, {6, -1}});
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool unit : {false, true})
        for (auto transpose :
             {TriangularSolveOptions::NO_TRANSPOSE, TriangularSolveOptions::TRANSPOSE,
              TriangularSolveOptions::ADJOINT}) {
          SCOPED_TRACE(testing::Message() << "left=" << left << " lower=" << lower
                                          << " unit=" << unit << " transpose=" << transpose);
          const Literal& b = left ? b_left : b_right;
          absl::StatusOr<Literal> x = Solve(a, b, left, lower, unit, transpose);
          ASSERT_TRUE(x.ok()) << x.status();
          auto t = OpA(a, m, lower, unit, transpose);
          const int64_t rows = left ? m : k, cols = left ? k : m;
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
              complex128 sum = 0;
              for (int64_t j = 0; j < m; ++j) {
                sum += left ? t[r][j] * x->Get<complex128>({j, c})
                            : x->Get<complex128>({r, j}) * t[j][c];
              }
              EXPECT_LT(std::abs(sum - b.Get<complex128>({r, c})), 1e-10) << r << "," << c;
            }
        }
}

TEST(TriangularSolveTest, BatchedRightUpper) {
  // Batch of two 2x2 upper systems x [[2,1],[0,4]] = b:
  // b = {2, 9} -> x0 = 1, x1 = (9 - 1) / 4 = 2; second matrix the identity.
  Literal a = Values<double>({2, 2, 2}, {2, 1, -5, 4, 1, 0, 0, 1});
  Literal b = Values<double>({2, 1, 2}, {2, 9, 7, 8});
  absl::StatusOr<Literal> x =
      Solve(a, b, false, false, false, TriangularSolveOptions::NO_TRANSPOSE);
  ASSERT_TRUE(x.ok()) << x.status();
  ExpectNear(*x, Values<double>({2, 1, 2}, {1, 2, 7, 8}), 1e-12);
}

// --- batch norm -------------------------------------------------------------------

std::unique_ptr<HloBatchNormInstruction> BatchNorm(HloOpcode opcode, const Shape& shape,
                                                   float epsilon, int64_t feature_index) {
  auto bn =
      std::make_unique<HloBatchNormInstruction>(opcode, shape, absl::Span<HloInstruction* const>());
  bn->mutable_attrs()->epsilon = epsilon;
  bn->mutable_attrs()->feature_index = feature_index;
  return bn;
}

TEST(BatchNormTest, TrainingByHand) {
  // Features in dimension 1: f0 = {1,3}: mean 2, var 1; f1 = {10,30}: mean
  // 20, var 100. scale {1,2}, offset {0,1}, epsilon 0:
  // f0 -> {-1, 1}; f1 -> {-10/10*2+1, 10/10*2+1} = {-1, 3}.
  Shape vec = ShapeUtil::MakeShape(F32, {2});
  auto bn =
      BatchNorm(HloOpcode::kBatchNormTraining,
                ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F32, {2, 2}), vec, vec}), 0, 1);
  absl::StatusOr<Literal> r = EvaluateBatchNormTraining(
      *bn, LiteralUtil::CreateR2<float>({{1, 10}, {3, 30}}), R1<float>({1, 2}), R1<float>({0, 1}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tuple_element(0), LiteralUtil::CreateR2<float>({{-1, -1}, {1, 3}}));
  EXPECT_EQ(r->tuple_element(1), R1<float>({2, 20}));
  EXPECT_EQ(r->tuple_element(2), R1<float>({1, 100}));
}

TEST(BatchNormTest, TrainingWithMiddleFeatureIndexMatchesFormula) {
  // [2, 3, 2] with feature_index 1: each feature has 4 elements.
  std::vector<double> x;
  for (int i = 0; i < 12; ++i) x.push_back(std::cos(i * 1.3) * 5);
  Shape vec = ShapeUtil::MakeShape(F64, {3});
  auto bn = BatchNorm(HloOpcode::kBatchNormTraining,
                      ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F64, {2, 3, 2}), vec, vec}),
                      0.5f, 1);
  Literal scale = R1<double>({1, -2, 0.5});
  Literal offset = R1<double>({0, 1, 2});
  absl::StatusOr<Literal> r =
      EvaluateBatchNormTraining(*bn, Values<double>({2, 3, 2}, x), scale, offset);
  ASSERT_TRUE(r.ok()) << r.status();
  for (int64_t f = 0; f < 3; ++f) {
    std::vector<double> v;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t s = 0; s < 2; ++s) v.push_back(x[b * 6 + f * 2 + s]);
    double mean = (v[0] + v[1] + v[2] + v[3]) / 4;
    double var = 0;
    for (double e : v) var += (e - mean) * (e - mean) / 4;
    EXPECT_NEAR(r->tuple_element(1).Get<double>({f}), mean, 1e-12);
    EXPECT_NEAR(r->tuple_element(2).Get<double>({f}), var, 1e-12);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t s = 0; s < 2; ++s) {
        double y = (x[b * 6 + f * 2 + s] - mean) / std::sqrt(var + 0.5) * scale.Get<double>({f}) +
                   offset.Get<double>({f});
        EXPECT_NEAR(r->tuple_element(0).Get<double>({b, f, s}), y, 1e-12);
      }
  }
}

TEST(BatchNormTest, InferenceByHand) {
  // f0: (1 - 0) / sqrt(3 + 1) * 2 + 0.5 = 1.5; f1: (10 - 10) / 1 * 1 + 0 = 0.
  auto bn = BatchNorm(HloOpcode::kBatchNormInference, ShapeUtil::MakeShape(F32, {1, 2}), 1, 1);
  absl::StatusOr<Literal> r =
      EvaluateBatchNormInference(*bn, LiteralUtil::CreateR2<float>({{1, 10}}), R1<float>({2, 1}),
                                 R1<float>({0.5f, 0}), R1<float>({0, 10}), R1<float>({3, 0}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, LiteralUtil::CreateR2<float>({{1.5f, 0}}));
}

TEST(BatchNormTest, GradByHand) {
  // One feature, x = {1, 3}, mean 1, var 3, epsilon 1 (rstd 0.5), scale 2,
  // dy = {1, 2}: sum(dy) = 3, sum(dy (x - mean)) = 4; grad_scale = 2,
  // grad_offset = 3, grad_x = 2 * 0.5 * (dy - 1.5 - (x - mean) * 4 / 8)
  // = {-0.5, -0.5}.
  Shape vec = ShapeUtil::MakeShape(F32, {1});
  auto bn =
      BatchNorm(HloOpcode::kBatchNormGrad,
                ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F32, {2, 1}), vec, vec}), 1, 1);
  absl::StatusOr<Literal> r =
      EvaluateBatchNormGrad(*bn, Values<float>({2, 1}, {1, 3}), R1<float>({2}), R1<float>({1}),
                            R1<float>({3}), Values<float>({2, 1}, {1, 2}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tuple_element(0), Values<float>({2, 1}, {-0.5f, -0.5f}));
  EXPECT_EQ(r->tuple_element(1), R1<float>({2}));
  EXPECT_EQ(r->tuple_element(2), R1<float>({3}));
}

TEST(BatchNormTest, GradIsTheDerivativeOfTraining) {
  // With the batch's own mean and variance, grad_x is the gradient of
  // sum(dy * training_output(x)) with respect to x: check by central
  // differences in f64.
  const std::vector<double> x = {0.3, -1.2, 2.5, 0.7, 1.1, -0.4};  // [3, 2], feature dim 1
  const std::vector<double> dy = {0.5, -1, 2, 0.25, -0.75, 1.5};
  const float epsilon = 0.1f;
  Literal scale = R1<double>({1.5, -0.5});
  Literal offset = R1<double>({0.2, 0.3});
  Shape vec = ShapeUtil::MakeShape(F64, {2});
  Shape tuple = ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F64, {3, 2}), vec, vec});
  auto training = BatchNorm(HloOpcode::kBatchNormTraining, tuple, epsilon, 1);
  auto loss = [&](const std::vector<double>& input) {
    Literal out =
        *EvaluateBatchNormTraining(*training, Values<double>({3, 2}, input), scale, offset);
    double sum = 0;
    for (int i = 0; i < 6; ++i) sum += dy[i] * out.tuple_element(0).data<double>()[i];
    return sum;
  };
  Literal moments = *EvaluateBatchNormTraining(*training, Values<double>({3, 2}, x), scale, offset);
  auto grad = BatchNorm(HloOpcode::kBatchNormGrad, tuple, epsilon, 1);
  absl::StatusOr<Literal> g =
      EvaluateBatchNormGrad(*grad, Values<double>({3, 2}, x), scale, moments.tuple_element(1),
                            moments.tuple_element(2), Values<double>({3, 2}, dy));
  ASSERT_TRUE(g.ok()) << g.status();
  for (int i = 0; i < 6; ++i) {
    std::vector<double> plus = x, minus = x;
    plus[i] += 1e-6;
    minus[i] -= 1e-6;
    double numeric = (loss(plus) - loss(minus)) / 2e-6;
    EXPECT_NEAR(g->tuple_element(0).data<double>()[i], numeric, 1e-6) << i;
  }
}

}  // namespace
}  // namespace axle
