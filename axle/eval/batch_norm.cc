//===- batch_norm.cc - batch-norm-{training,inference,grad} on literals ----===//
//
// XLA's batch normalization ops, per feature l of dimension feature_index,
// over the N elements of every other dimension, computed in double and
// rounded once to each result's element type:
//
//   training:  mean_l = sum(x) / N,  var_l = sum((x - mean_l)^2) / N,
//              y = (x - mean_l) / sqrt(var_l + epsilon) * scale_l + offset_l
//              -> (y, mean, var)
//   inference: y as above with the given mean and variance.
//   grad:      with rstd = 1 / sqrt(var_l + epsilon),
//              grad_scale_l  = sum(dy * (x - mean_l)) * rstd
//              grad_offset_l = sum(dy)
//              grad_x = scale_l * rstd * (dy - sum(dy) / N
//                        - (x - mean_l) * sum(dy * (x - mean_l)) / (N (var_l + epsilon)))
//              -> (grad_x, grad_scale, grad_offset)
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/eval/kernel_util.h"
#include "axle/eval/kernels.h"

namespace axle {
namespace {

using kernel_util::CheckArray;
using kernel_util::InvalidArgument;

// The feature of each element of an operand, and the per-feature counts.
struct FeatureLayout {
  int64_t features = 0;
  int64_t per_feature = 0;  // N
  int64_t inner = 1;        // elements between consecutive features
  int64_t FeatureOf(int64_t linear) const { return (linear / inner) % features; }
};

absl::StatusOr<FeatureLayout> CheckBatchNorm(const HloBatchNormInstruction& bn,
                                             const Literal& operand,
                                             absl::Span<const Literal* const> per_feature,
                                             absl::Span<const Literal* const> same_as_operand,
                                             int64_t num_outputs, absl::string_view op) {
  AXLE_RETURN_IF_ERROR(CheckArray(operand, op, "operand"));
  const Shape& s = operand.shape();
  if (!primitive_util::IsFloatingPointType(s.element_type())) {
    return InvalidArgument(op, ": operand must have a floating-point type, got ", s.ToString());
  }
  const int64_t fi = bn.feature_index();
  if (fi < 0 || fi >= s.rank()) {
    return InvalidArgument(op, ": feature_index=", fi, " is out of range for ", s.ToString());
  }
  FeatureLayout layout;
  layout.features = s.dimensions(fi);
  layout.per_feature = layout.features == 0 ? 0 : s.num_elements() / layout.features;
  for (int64_t d = fi + 1; d < s.rank(); ++d) layout.inner *= s.dimensions(d);
  for (const Literal* l : per_feature) {
    AXLE_RETURN_IF_ERROR(CheckArray(*l, op, "per-feature operand"));
    if (l->shape().rank() != 1 || l->shape().dimensions(0) != layout.features ||
        !primitive_util::IsFloatingPointType(l->shape().element_type())) {
      return InvalidArgument(op, ": ", l->shape().ToString(), " must be a float vector of the ",
                             layout.features, " features");
    }
  }
  for (const Literal* l : same_as_operand) {
    AXLE_RETURN_IF_ERROR(CheckArray(*l, op, "grad_output"));
    if (l->shape().dimensions() != s.dimensions()) {
      return InvalidArgument(op, ": ", l->shape().ToString(), " must match the operand ",
                             s.ToString());
    }
  }
  const Shape& out = bn.shape();
  bool ok = num_outputs == 1 ? out.IsArray() && out.dimensions() == s.dimensions()
                             : out.IsTuple() && out.tuple_shapes_size() == num_outputs &&
                                   out.tuple_shapes(0).IsArray() &&
                                   out.tuple_shapes(0).dimensions() == s.dimensions();
  for (int64_t i = 1; ok && i < num_outputs; ++i) {
    const Shape& v = out.tuple_shapes(i);
    ok = v.IsArray() && v.rank() == 1 && v.dimensions(0) == layout.features;
  }
  if (!ok) {
    return InvalidArgument(op, ": result ", out.ToString(), " does not fit the operand ",
                           s.ToString());
  }
  return layout;
}

std::vector<double> ToDoubles(const Literal& l) {
  std::vector<double> v(l.element_count());
  for (int64_t i = 0; i < l.element_count(); ++i) v[i] = l.GetAsDouble(i);
  return v;
}

Literal FromDoubles(const Shape& shape, const std::vector<double>& values) {
  Literal l(shape);
  for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) l.SetFromDouble(i, values[i]);
  return l;
}

// mean and biased variance of each feature.
void Moments(const std::vector<double>& x, const FeatureLayout& f, std::vector<double>* mean,
             std::vector<double>* var) {
  mean->assign(f.features, 0);
  var->assign(f.features, 0);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) (*mean)[f.FeatureOf(i)] += x[i];
  for (double& m : *mean) m /= static_cast<double>(f.per_feature);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    double d = x[i] - (*mean)[f.FeatureOf(i)];
    (*var)[f.FeatureOf(i)] += d * d;
  }
  for (double& v : *var) v /= static_cast<double>(f.per_feature);
}

std::vector<double> Normalize(const std::vector<double>& x, const FeatureLayout& f,
                              const std::vector<double>& mean, const std::vector<double>& var,
                              const std::vector<double>& scale, const std::vector<double>& offset,
                              double epsilon) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t l = f.FeatureOf(i);
    y[i] = (x[i] - mean[l]) / std::sqrt(var[l] + epsilon) * scale[l] + offset[l];
  }
  return y;
}

}  // namespace

absl::StatusOr<Literal> EvaluateBatchNormTraining(const HloBatchNormInstruction& bn,
                                                  const Literal& operand, const Literal& scale,
                                                  const Literal& offset) {
  const Literal* per_feature[] = {&scale, &offset};
  AXLE_ASSIGN_OR_RETURN(FeatureLayout f,
                        CheckBatchNorm(bn, operand, per_feature, {}, 3, "batch-norm-training"));
  std::vector<double> x = ToDoubles(operand);
  std::vector<double> mean, var;
  Moments(x, f, &mean, &var);
  std::vector<double> y =
      Normalize(x, f, mean, var, ToDoubles(scale), ToDoubles(offset), bn.epsilon());
  std::vector<Literal> outputs;
  outputs.push_back(FromDoubles(bn.shape().tuple_shapes(0), y));
  outputs.push_back(FromDoubles(bn.shape().tuple_shapes(1), mean));
  outputs.push_back(FromDoubles(bn.shape().tuple_shapes(2), var));
  return Literal::MakeTuple(std::move(outputs));
}

absl::StatusOr<Literal> EvaluateBatchNormInference(const HloBatchNormInstruction& bn,
                                                   const Literal& operand, const Literal& scale,
                                                   const Literal& offset, const Literal& mean,
                                                   const Literal& variance) {
  const Literal* per_feature[] = {&scale, &offset, &mean, &variance};
  AXLE_ASSIGN_OR_RETURN(FeatureLayout f,
                        CheckBatchNorm(bn, operand, per_feature, {}, 1, "batch-norm-inference"));
  std::vector<double> y = Normalize(ToDoubles(operand), f, ToDoubles(mean), ToDoubles(variance),
                                    ToDoubles(scale), ToDoubles(offset), bn.epsilon());
  return FromDoubles(bn.shape(), y);
}

absl::StatusOr<Literal> EvaluateBatchNormGrad(const HloBatchNormInstruction& bn,
                                              const Literal& operand, const Literal& scale,
                                              const Literal& mean, const Literal& variance,
                                              const Literal& grad_output) {
  const Literal* per_feature[] = {&scale, &mean, &variance};
  const Literal* same_as_operand[] = {&grad_output};
  AXLE_ASSIGN_OR_RETURN(FeatureLayout f, CheckBatchNorm(bn, operand, per_feature, same_as_operand,
                                                        3, "batch-norm-grad"));
  std::vector<double> x = ToDoubles(operand), dy = ToDoubles(grad_output);
  std::vector<double> gamma = ToDoubles(scale), mu = ToDoubles(mean), var = ToDoubles(variance);
  std::vector<double> sum_dy(f.features, 0), sum_dy_xmu(f.features, 0);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t l = f.FeatureOf(i);
    sum_dy[l] += dy[i];
    sum_dy_xmu[l] += dy[i] * (x[i] - mu[l]);
  }
  const double n = static_cast<double>(f.per_feature);
  std::vector<double> grad_x(x.size()), grad_scale(f.features);
  for (int64_t l = 0; l < f.features; ++l) {
    grad_scale[l] = sum_dy_xmu[l] / std::sqrt(var[l] + bn.epsilon());
  }
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t l = f.FeatureOf(i);
    double var_eps = var[l] + bn.epsilon();
    grad_x[i] = gamma[l] / std::sqrt(var_eps) *
                (dy[i] - sum_dy[l] / n - (x[i] - mu[l]) * sum_dy_xmu[l] / (n * var_eps));
  }
  std::vector<Literal> outputs;
  outputs.push_back(FromDoubles(bn.shape().tuple_shapes(0), grad_x));
  outputs.push_back(FromDoubles(bn.shape().tuple_shapes(1), grad_scale));
  outputs.push_back(FromDoubles(bn.shape().tuple_shapes(2), sum_dy));
  return Literal::MakeTuple(std::move(outputs));
}

}  // namespace axle
