//===- shape_inference_linalg.cc - Dot family, FFT, factorizations ---------===//
//
// dot, ragged-dot, scaled-dot, fft, cholesky, triangular-solve and the three
// batch-norm operations.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle {

using namespace shape_inference_internal;  // NOLINT

namespace {

bool Contains(absl::Span<const int64_t> values, int64_t v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool SizesMatch(const Shape& a, int64_t da, const Shape& b, int64_t db) {
  return a.dimensions(da) == b.dimensions(db) || a.is_unbounded_dynamic_dimension(da) ||
         b.is_unbounded_dynamic_dimension(db);
}

absl::StatusOr<PrimitiveType> MaybeUpcast(absl::string_view op, PrimitiveType from,
                                          std::optional<PrimitiveType> preferred) {
  if (!preferred.has_value() || *preferred == from) return from;
  if (!primitive_util::IsFloatingPointType(from) &&
      primitive_util::BitWidth(*preferred) < primitive_util::BitWidth(from)) {
    return InvalidArgument(op, ": the preferred element type ", Str(*preferred),
                           " must not be narrower than the operands' type ", Str(from), ".");
  }
  return *preferred;
}

absl::Status ValidateDotDimensionNumbers(absl::string_view op, const Shape& lhs, const Shape& rhs,
                                         const DotDimensionNumbers& dnums) {
  auto check_side = [&](absl::string_view side, const Shape& shape,
                        const std::vector<int64_t>& contracting,
                        const std::vector<int64_t>& batch) -> absl::Status {
    for (const auto* dims : {&contracting, &batch}) {
      for (int64_t d : *dims) {
        if (d < 0 || d >= shape.rank()) {
          return InvalidArgument(
              op, ": ", side,
              dims == &contracting ? "_contracting_dims=" : "_batch_dims=", Str(*dims), " but ",
              side, " has rank ", shape.rank(), " (", Str(shape), ").");
        }
      }
    }
    std::vector<int64_t> all = contracting;
    all.insert(all.end(), batch.begin(), batch.end());
    if (!AllUnique(all)) {
      return InvalidArgument(op, ": a dimension number is repeated among ", side,
                             "_contracting_dims=", Str(contracting), " and ", side,
                             "_batch_dims=", Str(batch), ".");
    }
    return absl::OkStatus();
  };
  if (auto s =
          check_side("lhs", lhs, dnums.lhs_contracting_dimensions(), dnums.lhs_batch_dimensions());
      !s.ok()) {
    return s;
  }
  if (auto s =
          check_side("rhs", rhs, dnums.rhs_contracting_dimensions(), dnums.rhs_batch_dimensions());
      !s.ok()) {
    return s;
  }
  const std::string shapes = absl::StrCat(" (", Str(lhs), " <dot> ", Str(rhs), ")");
  // The lhs and rhs dims of one kind pair up, each pair of one size.
  auto check_pairs = [&](absl::string_view kind, const std::vector<int64_t>& lhs_dims,
                         const std::vector<int64_t>& rhs_dims) -> absl::Status {
    if (lhs_dims.size() != rhs_dims.size()) {
      return InvalidArgument(op, ": lhs_", kind, "_dims=", Str(lhs_dims), " and rhs_", kind,
                             "_dims=", Str(rhs_dims), " must have the same length", shapes, ".");
    }
    for (size_t i = 0; i < lhs_dims.size(); ++i) {
      const int64_t l = lhs_dims[i], r = rhs_dims[i];
      if (!SizesMatch(lhs, l, rhs, r)) {
        return InvalidArgument(op, ": ", kind, " dimension sizes do not match: lhs dimension ", l,
                               " is ", lhs.dimensions(l), ", rhs dimension ", r, " is ",
                               rhs.dimensions(r), shapes, ".");
      }
    }
    return absl::OkStatus();
  };
  if (auto s = check_pairs("contracting", dnums.lhs_contracting_dimensions(),
                           dnums.rhs_contracting_dimensions());
      !s.ok()) {
    return s;
  }
  return check_pairs("batch", dnums.lhs_batch_dimensions(), dnums.rhs_batch_dimensions());
}

// Batch dimensions, then lhs free dimensions, then rhs free dimensions
// (skipping `rhs_skip`, the ragged-dot group dimension).
void AppendDotResultDimensions(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& dnums,
                               int64_t rhs_skip, std::vector<int64_t>* dims,
                               std::vector<bool>* dynamic) {
  for (int64_t d : dnums.lhs_batch_dimensions()) {
    dims->push_back(lhs.dimensions(d));
    dynamic->push_back(lhs.is_dynamic_dimension(d));
  }
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (Contains(dnums.lhs_contracting_dimensions(), d) ||
        Contains(dnums.lhs_batch_dimensions(), d)) {
      continue;
    }
    dims->push_back(lhs.dimensions(d));
    dynamic->push_back(lhs.is_dynamic_dimension(d));
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (d == rhs_skip || Contains(dnums.rhs_contracting_dimensions(), d) ||
        Contains(dnums.rhs_batch_dimensions(), d)) {
      continue;
    }
    dims->push_back(rhs.dimensions(d));
    dynamic->push_back(rhs.is_dynamic_dimension(d));
  }
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferDotOpShape(
    const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& dnums,
    std::optional<PrimitiveType> preferred_element_type) {
  if (auto s = ExpectArray(lhs, "lhs of dot"); !s.ok()) return s;
  if (auto s = ExpectArray(rhs, "rhs of dot"); !s.ok()) return s;
  if (auto s = ValidateDotDimensionNumbers("dot", lhs, rhs, dnums); !s.ok()) return s;
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  AppendDotResultDimensions(lhs, rhs, dnums, /*rhs_skip=*/-1, &dims, &dynamic);
  auto type = MaybeUpcast("dot", HigherPrecisionElementType(lhs, rhs), preferred_element_type);
  if (!type.ok()) return type.status();
  return MakeArray(*type, dims, dynamic);
}

absl::StatusOr<Shape> ShapeInference::InferRaggedDotOpShape(
    const Shape& lhs, const Shape& rhs, const Shape& group_sizes,
    const RaggedDotDimensionNumbers& ragged_dnums,
    std::optional<PrimitiveType> preferred_element_type) {
  if (auto s = ExpectArray(lhs, "lhs of ragged-dot"); !s.ok()) return s;
  if (auto s = ExpectArray(rhs, "rhs of ragged-dot"); !s.ok()) return s;
  if (auto s = ExpectArray(group_sizes, "group_sizes of ragged-dot"); !s.ok()) return s;
  const DotDimensionNumbers& dnums = ragged_dnums.dot_dimension_numbers();
  if (!IsIntegral(group_sizes) || group_sizes.rank() < 1) {
    return InvalidArgument("ragged-dot: group_sizes must be an integral array of rank >= 1; got ",
                           Str(group_sizes), ".");
  }
  if (ragged_dnums.lhs_ragged_dimensions_size() != 1) {
    return InvalidArgument("ragged-dot: expected exactly one lhs_ragged_dims; got ",
                           Str(ragged_dnums.lhs_ragged_dimensions()), ".");
  }
  const int64_t ragged = ragged_dnums.lhs_ragged_dimensions(0);
  if (ragged < 0 || ragged >= lhs.rank()) {
    return InvalidArgument("ragged-dot: lhs_ragged_dims={", ragged, "} but lhs has rank ",
                           lhs.rank(), ".");
  }
  if (ragged_dnums.rhs_group_dimensions_size() > 1) {
    return InvalidArgument("ragged-dot: expected at most one rhs_group_dims; got ",
                           Str(ragged_dnums.rhs_group_dimensions()), ".");
  }
  const int64_t group_dim =
      ragged_dnums.rhs_group_dimensions().empty() ? -1 : ragged_dnums.rhs_group_dimensions(0);
  if (group_dim >= rhs.rank()) {
    return InvalidArgument("ragged-dot: rhs_group_dims={", group_dim, "} but rhs has rank ",
                           rhs.rank(), ".");
  }
  // Validate the dot without the group dimension of rhs.
  Shape rhs_without_group = rhs;
  DotDimensionNumbers adjusted = dnums;
  if (group_dim >= 0) {
    std::vector<int64_t> rdims = rhs.dimensions();
    rdims.erase(rdims.begin() + group_dim);
    rhs_without_group = MakeArray(rhs.element_type(), rdims);
    auto shift = [&](std::vector<int64_t>* dims) -> absl::Status {
      for (int64_t& d : *dims) {
        if (d == group_dim) {
          return InvalidArgument("ragged-dot: rhs_group_dims={", group_dim,
                                 "} must not also be a contracting or batch dimension.");
        }
        if (d > group_dim) --d;
      }
      return absl::OkStatus();
    };
    if (auto s = shift(adjusted.mutable_rhs_contracting_dimensions()); !s.ok()) return s;
    if (auto s = shift(adjusted.mutable_rhs_batch_dimensions()); !s.ok()) return s;
  }
  if (auto s = ValidateDotDimensionNumbers("ragged-dot", lhs, rhs_without_group, adjusted);
      !s.ok()) {
    return s;
  }
  const bool ragged_contracting = Contains(dnums.lhs_contracting_dimensions(), ragged);
  const bool ragged_batch = Contains(dnums.lhs_batch_dimensions(), ragged);
  const int64_t groups = group_sizes.dimensions(group_sizes.rank() - 1);
  if (!ragged_contracting && !ragged_batch) {
    if (group_dim < 0) {
      return InvalidArgument(
          "ragged-dot: a non-contracting lhs ragged dimension needs an "
          "rhs_group_dims entry.");
    }
    if (rhs.dimensions(group_dim) != groups) {
      return InvalidArgument("ragged-dot: rhs group dimension ", group_dim, " has size ",
                             rhs.dimensions(group_dim), " but group_sizes ", Str(group_sizes),
                             " has ", groups, " groups.");
    }
  } else if (group_dim >= 0) {
    return InvalidArgument(
        "ragged-dot: rhs_group_dims must be empty when the lhs ragged "
        "dimension is a contracting or batch dimension.");
  }
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  if (ragged_contracting) {
    dims.push_back(groups);
    dynamic.push_back(false);
  }
  AppendDotResultDimensions(lhs, rhs, dnums, group_dim, &dims, &dynamic);
  auto type =
      MaybeUpcast("ragged-dot", HigherPrecisionElementType(lhs, rhs), preferred_element_type);
  if (!type.ok()) return type.status();
  return MakeArray(*type, dims, dynamic);
}

absl::StatusOr<Shape> ShapeInference::InferScaledDotOpShape(
    const Shape& lhs, const Shape& rhs, const Shape& lhs_scale, const Shape& rhs_scale,
    const DotDimensionNumbers& dnums, std::optional<PrimitiveType> preferred_element_type) {
  if (auto s = ExpectArray(lhs_scale, "lhs_scale of scaled-dot"); !s.ok()) return s;
  if (auto s = ExpectArray(rhs_scale, "rhs_scale of scaled-dot"); !s.ok()) return s;
  auto check_scale = [](absl::string_view name, const Shape& operand,
                        const Shape& scale) -> absl::Status {
    if (scale.IsScalar()) return absl::OkStatus();
    if (scale.rank() != operand.rank()) {
      return InvalidArgument("scaled-dot: ", name, " ", Str(scale),
                             " must be a scalar or have the operand's rank (", Str(operand), ").");
    }
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (scale.dimensions(d) == 0 || operand.dimensions(d) % scale.dimensions(d) != 0) {
        return InvalidArgument("scaled-dot: ", name, " ", Str(scale), " dimension ", d,
                               " must divide the operand's (", Str(operand), ").");
      }
    }
    return absl::OkStatus();
  };
  if (auto s = check_scale("lhs_scale", lhs, lhs_scale); !s.ok()) return s;
  if (auto s = check_scale("rhs_scale", rhs, rhs_scale); !s.ok()) return s;
  auto result = InferDotOpShape(lhs, rhs, dnums, preferred_element_type);
  if (!result.ok()) {
    return absl::Status(result.status().code(), absl::StrCat("scaled-", result.status().message()));
  }
  return result;
}

absl::StatusOr<Shape> ShapeInference::InferFftShape(const Shape& in, FftType fft_type,
                                                    absl::Span<const int64_t> fft_length) {
  if (auto s = ExpectArray(in, "operand of fft"); !s.ok()) return s;
  const int64_t fft_rank = static_cast<int64_t>(fft_length.size());
  if (fft_rank < 1 || fft_rank > 3) {
    return InvalidArgument("fft: fft_length must have 1 to 3 entries; got ", Str(fft_length), ".");
  }
  if (in.rank() < fft_rank) {
    return InvalidArgument("fft: an fft of rank ", fft_rank,
                           " needs an operand of at least that rank; got ", Str(in), ".");
  }
  const int64_t rank = in.rank();
  switch (fft_type) {
    case FFT:
    case IFFT:
      if (!IsComplex(in)) {
        return InvalidArgument("fft: ", fft_type == FFT ? "FFT" : "IFFT",
                               " needs a complex operand; got ", Str(in), ".");
      }
      return in;
    case RFFT: {
      if (in.element_type() != F32 && in.element_type() != F64) {
        return InvalidArgument("fft: RFFT needs an f32 or f64 operand; got ", Str(in), ".");
      }
      for (int64_t i = 0; i < fft_rank; ++i) {
        if (in.dimensions(rank - fft_rank + i) != fft_length[i]) {
          return InvalidArgument("fft: RFFT needs the innermost dimensions to match fft_length=",
                                 Str(fft_length), "; got ", Str(in), ".");
        }
      }
      Shape result = ShapeUtil::ChangeElementType(in, in.element_type() == F32 ? C64 : C128);
      if (fft_length[fft_rank - 1] != 0) {
        result.set_dimensions(rank - 1, fft_length[fft_rank - 1] / 2 + 1);
      }
      return result;
    }
    case IRFFT: {
      if (!IsComplex(in)) {
        return InvalidArgument("fft: IRFFT needs a complex operand; got ", Str(in), ".");
      }
      for (int64_t i = 0; i < fft_rank - 1; ++i) {
        if (in.dimensions(rank - fft_rank + i) != fft_length[i]) {
          return InvalidArgument(
              "fft: IRFFT needs all but the innermost dimension to match "
              "fft_length=",
              Str(fft_length), "; got ", Str(in), ".");
        }
      }
      int64_t last = fft_length[fft_rank - 1];
      if ((in.dimensions(rank - 1) != 0 || last != 0) && in.dimensions(rank - 1) != last / 2 + 1) {
        return InvalidArgument("fft: IRFFT needs the innermost dimension to be fft_length/2+1 = ",
                               last / 2 + 1, "; got ", Str(in), ".");
      }
      Shape result =
          ShapeUtil::ChangeElementType(in, primitive_util::ComplexComponentType(in.element_type()));
      result.set_dimensions(rank - 1, last);
      return result;
    }
  }
  return InvalidArgument("fft: unknown fft_type.");
}

absl::StatusOr<Shape> ShapeInference::InferCholeskyShape(const Shape& a) {
  if (auto s = ExpectArray(a, "operand of cholesky"); !s.ok()) return s;
  if (!IsFloat(a) && !IsComplex(a)) {
    return InvalidArgument("cholesky: expected a floating-point or complex operand; got ", Str(a),
                           ".");
  }
  if (a.rank() < 2) {
    return InvalidArgument("cholesky: the operand must have rank >= 2; got ", Str(a), ".");
  }
  if (a.dimensions(a.rank() - 2) != a.dimensions(a.rank() - 1)) {
    return InvalidArgument("cholesky: the two minor dimensions must be equal; got ", Str(a), ".");
  }
  return a;
}

absl::StatusOr<Shape> ShapeInference::InferTriangularSolveShape(
    const Shape& a, const Shape& b, const TriangularSolveOptions& options) {
  if (auto s = ExpectArray(a, "a of triangular-solve"); !s.ok()) return s;
  if (auto s = ExpectArray(b, "b of triangular-solve"); !s.ok()) return s;
  if ((!IsFloat(a) && !IsComplex(a)) || a.element_type() != b.element_type()) {
    return InvalidArgument(
        "triangular-solve: expected identical floating-point or complex "
        "element types; got ",
        Str(a), " and ", Str(b), ".");
  }
  if (a.rank() < 2) {
    return InvalidArgument("triangular-solve: 'a' must have rank >= 2; got ", Str(a), ".");
  }
  if (b.rank() != a.rank()) {
    return InvalidArgument("triangular-solve: 'a' and 'b' must have equal rank; got ", Str(a),
                           " and ", Str(b), ".");
  }
  const int64_t rank = a.rank();
  if (a.dimensions(rank - 2) != a.dimensions(rank - 1)) {
    return InvalidArgument("triangular-solve: the two minor dimensions of 'a' must be equal; got ",
                           Str(a), ".");
  }
  if (a.dimensions(rank - 1) != b.dimensions(rank - (options.left_side() ? 2 : 1))) {
    return InvalidArgument(
        "triangular-solve: the shared dimension of 'a' and 'b' does not "
        "match (left_side=",
        options.left_side() ? "true" : "false", "); got ", Str(a), " and ", Str(b), ".");
  }
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (a.dimensions(d) != b.dimensions(d)) {
      return InvalidArgument(
          "triangular-solve: the batch dimensions of 'a' and 'b' must be "
          "equal; got ",
          Str(a), " and ", Str(b), ".");
    }
  }
  if (options.transpose_a() == TriangularSolveOptions::TRANSPOSE_INVALID) {
    return InvalidArgument("triangular-solve: invalid transpose_a option.");
  }
  return b;
}

namespace {

absl::Status CheckBatchNormInputs(
    absl::string_view op, const Shape& operand, int64_t feature_index,
    std::initializer_list<std::pair<const char*, const Shape*>> features) {
  if (auto s = ExpectArray(operand, absl::StrCat("operand of ", op)); !s.ok()) return s;
  if (operand.rank() < 1) {
    return InvalidArgument(op, ": the operand must have rank >= 1; got ", Str(operand), ".");
  }
  if (feature_index < 0 || feature_index >= operand.rank()) {
    return InvalidArgument(op, ": feature_index=", feature_index, " is out of range for ",
                           Str(operand), ".");
  }
  if (!IsFloat(operand)) {
    return InvalidArgument(op, ": the operand must be floating point; got ", Str(operand), ".");
  }
  const int64_t feature_count = operand.dimensions(feature_index);
  for (const auto& [name, shape] : features) {
    if (auto s = ExpectArray(*shape, absl::StrCat(name, " of ", op)); !s.ok()) return s;
    if (shape->rank() != 1) {
      return InvalidArgument(op, ": ", name, " must have rank 1; got ", Str(*shape), ".");
    }
    if (!SameElementTypeIgnoringFpPrecision(*shape, operand)) {
      return InvalidArgument(op, ": ", name, " (", Str(*shape),
                             ") must have the operand's element type (", Str(operand), ").");
    }
    if (shape->dimensions(0) != feature_count) {
      return InvalidArgument(op, ": ", name, " has size ", shape->dimensions(0),
                             " but the feature count is ", feature_count, ".");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferBatchNormTrainingShape(const Shape& operand,
                                                                  const Shape& scale,
                                                                  const Shape& offset,
                                                                  int64_t feature_index) {
  if (auto s = CheckBatchNormInputs("batch-norm-training", operand, feature_index,
                                    {{"scale", &scale}, {"offset", &offset}});
      !s.ok()) {
    return s;
  }
  Shape feature = MakeArray(operand.element_type(), {operand.dimensions(feature_index)});
  return ShapeUtil::MakeTupleShape({operand, feature, feature});
}

absl::StatusOr<Shape> ShapeInference::InferBatchNormInferenceShape(
    const Shape& operand, const Shape& scale, const Shape& offset, const Shape& mean,
    const Shape& variance, int64_t feature_index) {
  if (auto s = CheckBatchNormInputs(
          "batch-norm-inference", operand, feature_index,
          {{"scale", &scale}, {"offset", &offset}, {"mean", &mean}, {"variance", &variance}});
      !s.ok()) {
    return s;
  }
  return operand;
}

absl::StatusOr<Shape> ShapeInference::InferBatchNormGradShape(const Shape& operand,
                                                              const Shape& scale, const Shape& mean,
                                                              const Shape& variance,
                                                              const Shape& output_grad,
                                                              int64_t feature_index) {
  if (auto s = CheckBatchNormInputs("batch-norm-grad", operand, feature_index,
                                    {{"scale", &scale}, {"mean", &mean}, {"variance", &variance}});
      !s.ok()) {
    return s;
  }
  if (auto s = ExpectArray(output_grad, "output_grad of batch-norm-grad"); !s.ok()) return s;
  if (!IsFloat(output_grad) || !SameElementTypeIgnoringFpPrecision(output_grad, operand) ||
      !SameDimensions(output_grad, operand)) {
    return InvalidArgument("batch-norm-grad: output_grad ", Str(output_grad),
                           " must have the operand's shape ", Str(operand), ".");
  }
  Shape feature = MakeArray(operand.element_type(), {operand.dimensions(feature_index)});
  return ShapeUtil::MakeTupleShape({operand, feature, feature});
}

}  // namespace axle
