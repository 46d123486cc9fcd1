//===- batchnorm_expander.cc - batch-norm ops as reduces and arithmetic ----===//
//
// With x the operand (shape S, feature dimension f, N elements per feature),
// B(v) the broadcast of a per-feature vector v to S along f, and every
// per-feature value a vector of the features:
//
//   training:  mean = sum(x) / N, xc = x - B(mean), var = sum(xc * xc) / N,
//              y = xc * B(rsqrt(var + eps) * scale) + B(offset)
//   inference: y = (x - B(mean)) * B(rsqrt(var + eps) * scale) + B(offset)
//   grad:      xc = x - B(mean), sum_dy = sum(dy), sum_dyxc = sum(dy * xc),
//              grad_scale = sum_dyxc * rsqrt(var + eps), grad_offset = sum_dy,
//              grad_x = B(scale * rsqrt(var + eps)) * (dy - B(sum_dy / N)
//                       - xc * B(sum_dyxc / (N * (var + eps))))
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/batchnorm_expander.h"

#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

class Expander {
 public:
  Expander(HloInstruction* bn, HloComputation* add) : bn_(bn), add_(add) {
    const auto* attrs = cast<HloBatchNormInstruction>(bn);
    feature_ = attrs->feature_index();
    epsilon_ = attrs->epsilon();
    const Shape& shape = bn->operand(0)->shape();
    type_ = shape.element_type();
    compute_type_ = type_ == F64 ? F64 : F32;
    dims_ = shape.dimensions();
    features_ = dims_[feature_];
    count_ = features_ == 0 ? 0 : shape.num_elements() / features_;
    for (int64_t d = 0; d < static_cast<int64_t>(dims_.size()); ++d) {
      if (d != feature_) reduced_.push_back(d);
    }
  }

  HloInstruction* Expand();

 private:
  Shape Full() const { return ShapeUtil::MakeShapeWithDescendingLayout(compute_type_, dims_); }
  Shape PerFeature() const {
    return ShapeUtil::MakeShapeWithDescendingLayout(compute_type_, {features_});
  }
  HloComputation* computation() const { return bn_->parent(); }

  // Operand `i` in the compute type.
  HloInstruction* In(int64_t i) { return MakeConvert(bn_->mutable_operand(i), compute_type_); }
  HloInstruction* Scalar(double value) {
    Literal literal(ShapeUtil::MakeScalarShape(compute_type_));
    literal.SetFromDouble(0, value);
    return MakeConstant(computation(), std::move(literal));
  }
  // `value` (a scalar) as an array of `shape`.
  HloInstruction* Splat(HloInstruction* value, const Shape& shape) {
    return MakeBroadcast(value, shape, {});
  }
  HloInstruction* Binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b) {
    return MakeBinary(opcode, a, b, a->shape());
  }
  HloInstruction* B(HloInstruction* per_feature) {
    return MakeBroadcast(per_feature, Full(), {feature_});
  }
  HloInstruction* Sum(HloInstruction* value) {
    auto reduce = std::make_unique<HloDimensionsInstruction>(
        HloOpcode::kReduce, PerFeature(), std::vector<HloInstruction*>{value, Scalar(0)});
    reduce->mutable_attrs()->dimensions = reduced_;
    reduce->AppendCalledComputation(add_);
    return computation()->AddInstruction(std::move(reduce));
  }
  // rsqrt(var + eps), per feature.
  HloInstruction* Rstd(HloInstruction* var) {
    HloInstruction* shifted = Binary(HloOpcode::kAdd, var, Splat(Scalar(epsilon_), PerFeature()));
    return computation()->AddInstruction(
        HloInstruction::Create(HloOpcode::kRsqrt, PerFeature(), {shifted}));
  }
  // The result of `shape` (the bn's result or one of its elements) from
  // `value` in the compute type.
  HloInstruction* Out(HloInstruction* value, const Shape& shape) {
    HloInstruction* converted = MakeConvert(value, shape.element_type());
    if (SameShapeAndLayout(converted->shape(), shape)) return converted;
    // Another layout than the descending one: a copy into it.
    return computation()->AddInstruction(
        HloInstruction::Create(HloOpcode::kCopy, shape, {converted}));
  }
  HloInstruction* Tuple(std::vector<HloInstruction*> elements) {
    std::vector<HloInstruction*> outs;
    for (size_t i = 0; i < elements.size(); ++i) {
      outs.push_back(Out(elements[i], bn_->shape().tuple_shapes(i)));
    }
    return computation()->AddInstruction(
        HloInstruction::Create(HloOpcode::kTuple, bn_->shape(), outs));
  }

  HloInstruction* bn_;
  HloComputation* add_;
  int64_t feature_ = 0;
  float epsilon_ = 0;
  PrimitiveType type_ = F32, compute_type_ = F32;
  std::vector<int64_t> dims_, reduced_;
  int64_t features_ = 0, count_ = 0;
};

HloInstruction* Expander::Expand() {
  HloInstruction* x = In(0);
  HloInstruction* n = Splat(Scalar(static_cast<double>(count_)), PerFeature());
  switch (bn_->opcode()) {
    case HloOpcode::kBatchNormTraining: {
      HloInstruction* mean = Binary(HloOpcode::kDivide, Sum(x), n);
      HloInstruction* xc = Binary(HloOpcode::kSubtract, x, B(mean));
      HloInstruction* var =
          Binary(HloOpcode::kDivide, Sum(Binary(HloOpcode::kMultiply, xc, xc)), n);
      HloInstruction* factor = Binary(HloOpcode::kMultiply, Rstd(var), In(1));
      HloInstruction* y =
          Binary(HloOpcode::kAdd, Binary(HloOpcode::kMultiply, xc, B(factor)), B(In(2)));
      return Tuple({y, mean, var});
    }
    case HloOpcode::kBatchNormInference: {
      HloInstruction* xc = Binary(HloOpcode::kSubtract, x, B(In(3)));
      HloInstruction* factor = Binary(HloOpcode::kMultiply, Rstd(In(4)), In(1));
      HloInstruction* y =
          Binary(HloOpcode::kAdd, Binary(HloOpcode::kMultiply, xc, B(factor)), B(In(2)));
      return Out(y, bn_->shape());
    }
    default: {  // kBatchNormGrad(x, scale, mean, var, dy)
      HloInstruction* dy = In(4);
      HloInstruction* var = In(3);
      HloInstruction* xc = Binary(HloOpcode::kSubtract, x, B(In(2)));
      HloInstruction* sum_dy = Sum(dy);
      HloInstruction* sum_dyxc = Sum(Binary(HloOpcode::kMultiply, dy, xc));
      HloInstruction* rstd = Rstd(var);
      HloInstruction* grad_scale = Binary(HloOpcode::kMultiply, sum_dyxc, rstd);
      HloInstruction* var_eps = Binary(HloOpcode::kAdd, var, Splat(Scalar(epsilon_), PerFeature()));
      HloInstruction* k =
          Binary(HloOpcode::kDivide, sum_dyxc, Binary(HloOpcode::kMultiply, n, var_eps));
      HloInstruction* centered =
          Binary(HloOpcode::kSubtract,
                 Binary(HloOpcode::kSubtract, dy, B(Binary(HloOpcode::kDivide, sum_dy, n))),
                 Binary(HloOpcode::kMultiply, xc, B(k)));
      HloInstruction* grad_x =
          Binary(HloOpcode::kMultiply, B(Binary(HloOpcode::kMultiply, In(1), rstd)), centered);
      return Tuple({grad_x, grad_scale, sum_dy});
    }
  }
}

bool IsBatchNorm(const HloInstruction* instruction) {
  switch (instruction->opcode()) {
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return true;
    default:
      return false;
  }
}

// Whether `bn` is well formed enough to expand (the verifier's checks; a
// malformed op is left for the interpreter / backend to reject by name).
bool CanExpand(const HloInstruction* bn) {
  const Shape& operand = bn->operand(0)->shape();
  const int64_t feature = cast<HloBatchNormInstruction>(bn)->feature_index();
  if (!operand.IsArray() || !primitive_util::IsFloatingPointType(operand.element_type()) ||
      primitive_util::IsComplexType(operand.element_type()) || feature < 0 ||
      feature >= operand.rank()) {
    return false;
  }
  for (const HloInstruction* o : bn->operands()) {
    if (!o->shape().IsArray() || o->shape().element_type() != operand.element_type()) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> BatchNormExpander::Run(HloModule* module) {
  bool changed = false;
  std::map<PrimitiveType, HloComputation*> adders;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!IsBatchNorm(instruction) || !CanExpand(instruction)) continue;
      PrimitiveType type = instruction->operand(0)->shape().element_type();
      if (type != F64) type = F32;
      HloComputation*& add = adders[type];
      if (add == nullptr) {
        add = AddScalarCombiner(
            module,
            absl::StrCat("batchnorm_add_", primitive_util::LowercasePrimitiveTypeName(type)),
            HloOpcode::kAdd, type);
      }
      HloInstruction* expanded = Expander(instruction, add).Expand();
      AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, expanded));
      changed = true;
    }
  }
  return changed;
}

}  // namespace axle
