//===- dot_to_reduce.cc - Dots no GEMM takes, as a multiply and a reduce --===//
#include "axle/gpu/dot_to_reduce.h"

#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/hlo/analysis/dot_dimensions.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

// What the products are summed in (the header's table), or
// PRIMITIVE_TYPE_INVALID where the rewrite does not apply.
PrimitiveType AccumulatorType(PrimitiveType lhs, PrimitiveType rhs, PrimitiveType out) {
  if (out == PRED) return PRED;
  const bool any_f64 = lhs == F64 || rhs == F64 || out == F64;
  if (pu::IsComplexType(out)) return out == C128 || any_f64 ? C128 : C64;
  if (pu::IsFloatingPointType(out)) return any_f64 ? F64 : F32;
  if (pu::IsIntegralType(out)) {
    if (pu::BitWidth(out) == 64) return out;
    return pu::IsUnsignedIntegralType(out) ? U32 : S32;
  }
  return PRIMITIVE_TYPE_INVALID;
}

// `operand` transposed to `order`, converted to the result type and then
// the accumulator, broadcast into `products` along `dims`.
HloInstruction* Spread(HloInstruction* operand, const std::vector<int64_t>& order,
                       PrimitiveType result, PrimitiveType accumulator, const Shape& products,
                       const std::vector<int64_t>& dims) {
  HloInstruction* value = operand;
  if (!IsIdentityPermutation(order)) value = MakeTranspose(value, order);
  value = MakeConvert(MakeConvert(value, result), accumulator);
  return MakeBroadcast(value, products, dims);
}

std::vector<int64_t> Concat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> all;
  for (const auto* part : parts) all.insert(all.end(), part->begin(), part->end());
  return all;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> range;
  range.reserve(end > begin ? end - begin : 0);
  for (int64_t i = begin; i < end; ++i) range.push_back(i);
  return range;
}

class Rewriter {
 public:
  explicit Rewriter(HloModule* module) : module_(module) {}

  // The dot's replacement, or nullptr where it is left alone.
  HloInstruction* Rewrite(HloInstruction* dot) {
    const auto* original = cast<HloDotInstruction>(dot);
    HloInstruction* lhs = dot->mutable_operand(0);
    HloInstruction* rhs = dot->mutable_operand(1);
    const Shape& out = dot->shape();
    const PrimitiveType accumulator = AccumulatorType(
        lhs->shape().element_type(), rhs->shape().element_type(), out.element_type());
    if (accumulator == PRIMITIVE_TYPE_INVALID) return nullptr;
    const DotDimensionNumbers& numbers = original->dot_dimension_numbers();
    const std::vector<int64_t>& lhs_batch = numbers.lhs_batch_dimensions();
    const std::vector<int64_t>& rhs_batch = numbers.rhs_batch_dimensions();
    const std::vector<int64_t>& lhs_contracting = numbers.lhs_contracting_dimensions();
    const std::vector<int64_t>& rhs_contracting = numbers.rhs_contracting_dimensions();
    if (lhs_batch.size() != rhs_batch.size() || lhs_contracting.size() != rhs_contracting.size()) {
      return nullptr;
    }
    const std::vector<int64_t> lhs_free =
        DotFreeDimensions(lhs->shape().rank(), lhs_batch, lhs_contracting);
    const std::vector<int64_t> rhs_free =
        DotFreeDimensions(rhs->shape().rank(), rhs_batch, rhs_contracting);
    const auto nb = static_cast<int64_t>(lhs_batch.size());
    const auto nm = static_cast<int64_t>(lhs_free.size());
    const auto nn = static_cast<int64_t>(rhs_free.size());
    const auto nk = static_cast<int64_t>(lhs_contracting.size());
    if (nb + nm + nn != out.rank()) return nullptr;

    // The products' dims: batch, lhs free, rhs free, contracting.
    std::vector<int64_t> dims;
    dims.reserve(nb + nm + nn + nk);
    for (int64_t d : lhs_batch) dims.push_back(lhs->shape().dimensions(d));
    for (int64_t d : lhs_free) dims.push_back(lhs->shape().dimensions(d));
    for (int64_t d : rhs_free) dims.push_back(rhs->shape().dimensions(d));
    for (int64_t d : lhs_contracting) dims.push_back(lhs->shape().dimensions(d));
    const Shape products = ShapeUtil::MakeShapeWithDescendingLayout(accumulator, dims);
    const std::vector<int64_t> batch_dims = Range(0, nb);
    const std::vector<int64_t> lhs_free_dims = Range(nb, nb + nm);
    const std::vector<int64_t> rhs_free_dims = Range(nb + nm, nb + nm + nn);
    const std::vector<int64_t> contracting_dims = Range(nb + nm + nn, nb + nm + nn + nk);
    HloInstruction* x =
        Spread(lhs, Concat({&lhs_batch, &lhs_free, &lhs_contracting}), out.element_type(),
               accumulator, products, Concat({&batch_dims, &lhs_free_dims, &contracting_dims}));
    HloInstruction* y =
        Spread(rhs, Concat({&rhs_batch, &rhs_free, &rhs_contracting}), out.element_type(),
               accumulator, products, Concat({&batch_dims, &rhs_free_dims, &contracting_dims}));
    const bool logical = accumulator == PRED;
    HloComputation* computation = dot->parent();
    HloInstruction* product = computation->AddInstruction(
        HloInstruction::Create(logical ? HloOpcode::kAnd : HloOpcode::kMultiply, products, {x, y}));
    Shape summed = out.has_layout() ? out : WithDescendingLayout(out);
    summed.set_element_type(accumulator);
    HloInstruction* sum = product;
    if (nk > 0) {
      HloInstruction* zero = MakeConstant(computation, LiteralUtil::Zero(accumulator));
      auto reduce = std::make_unique<HloDimensionsInstruction>(
          HloOpcode::kReduce, summed, std::vector<HloInstruction*>{product, zero});
      reduce->mutable_attrs()->dimensions = contracting_dims;
      reduce->AppendCalledComputation(
          CombinerFor(logical ? HloOpcode::kOr : HloOpcode::kAdd, accumulator));
      sum = computation->AddInstruction(std::move(reduce));
    } else if (!SameShapeAndLayout(sum->shape(), summed)) {
      sum = MakeReshape(sum, summed);
    }
    return MakeConvert(sum, out.element_type());
  }

 private:
  HloComputation* CombinerFor(HloOpcode opcode, PrimitiveType type) {
    HloComputation*& combiner = combiners_[{opcode, type}];
    if (combiner == nullptr)
      combiner = AddScalarCombiner(module_,
                                   absl::StrCat("dot_to_reduce_", HloOpcodeString(opcode), "_",
                                                pu::LowercasePrimitiveTypeName(type)),
                                   opcode, type);
    return combiner;
  }

  HloModule* module_;
  std::map<std::pair<HloOpcode, PrimitiveType>, HloComputation*> combiners_;
};

}  // namespace

absl::StatusOr<bool> GpuDotToReduce::Run(HloModule* module) {
  Rewriter rewriter(module);
  return RewriteEachInstruction(
      module,
      [&](HloComputation* computation, HloInstruction* instruction) -> absl::StatusOr<bool> {
        if (instruction->opcode() != HloOpcode::kDot || instruction->operand_count() != 2 ||
            !instruction->shape().IsArray() || !instruction->shape().is_static() ||
            GemmSupportsTypes(*instruction)) {
          return false;
        }
        HloInstruction* replacement = rewriter.Rewrite(instruction);
        if (replacement == nullptr) return false;
        AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, replacement));
        return true;
      });
}

}  // namespace axle::gpu
