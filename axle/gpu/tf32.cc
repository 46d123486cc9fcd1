//===- tf32.cc - Which f32 products the cuda backend computes in TF32 ------===//
#include "axle/gpu/tf32.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

const PrecisionConfig* PrecisionOf(const HloInstruction& instruction) {
  if (const auto* dot = dyn_cast<HloDotInstruction>(&instruction)) return &dot->precision_config();
  if (const auto* conv = dyn_cast<HloConvolutionInstruction>(&instruction)) {
    return &conv->precision_config();
  }
  if (const auto* call = dyn_cast<HloCustomCallInstruction>(&instruction)) {
    return &call->attrs().precision_config;
  }
  return nullptr;
}

bool IsCudnnConvolutionCall(const HloInstruction& instruction) {
  const auto* call = dyn_cast<HloCustomCallInstruction>(&instruction);
  return call != nullptr && absl::StartsWith(call->custom_call_target(), "__cudnn$conv");
}

const Shape& FirstResult(const HloInstruction& instruction) {
  const Shape& shape = instruction.shape();
  return shape.IsTuple() && shape.tuple_shapes_size() > 0 ? shape.tuple_shapes(0) : shape;
}

// The sum of squares and count of a literal's finite float (or complex)
// elements, all leaves of a tuple.
void AddSquares(const Literal& literal, double& sum, int64_t& count) {
  if (literal.shape().IsTuple()) {
    for (int64_t i = 0; i < literal.shape().tuple_shapes_size(); ++i) {
      AddSquares(literal.tuple_element(i), sum, count);
    }
    return;
  }
  const PrimitiveType type = literal.shape().element_type();
  if (primitive_util::IsComplexType(type)) {
    absl::StatusOr<Literal> wide = literal.Convert(C128);
    if (!wide.ok()) return;
    for (const std::complex<double>& value : wide->data<std::complex<double>>()) {
      if (std::isfinite(value.real()) && std::isfinite(value.imag())) {
        sum += std::norm(value);
        ++count;
      }
    }
  } else if (primitive_util::IsFloatingPointType(type)) {
    absl::StatusOr<Literal> wide = literal.Convert(F64);
    if (!wide.ok()) return;
    for (double value : wide->data<double>()) {
      if (std::isfinite(value)) {
        sum += value * value;
        ++count;
      }
    }
  }
}

// Whether an instruction's value, or a computation, may depend on an
// instruction that ComputesInTf32. Memoized.
class Tf32Reach {
 public:
  bool OfComputation(const HloComputation* computation) {
    auto found = computations_.find(computation);
    if (found != computations_.end()) return found->second;
    computations_[computation] = false;  // guards against recursion
    bool reads = false;
    for (const HloInstruction* instruction : computation->instructions()) {
      reads = Own(*instruction) || reads;
    }
    computations_[computation] = reads;
    return reads;
  }

  // Whether `instruction`'s value may: its own and its operands', computed
  // over its computation in post order (no recursion along operands).
  bool OfValue(const HloInstruction* instruction) {
    if (!values_.contains(instruction)) {
      for (const HloInstruction* node : instruction->parent()->MakeInstructionPostOrder()) {
        bool reads = Own(*node);
        for (const HloInstruction* operand : node->operands()) {
          reads = values_[operand] || reads;
        }
        values_[node] = reads;
      }
    }
    return values_[instruction];
  }

 private:
  // The instruction itself and the computations it calls.
  bool Own(const HloInstruction& instruction) {
    bool reads = ComputesInTf32(instruction);
    for (const HloComputation* called : instruction.called_computations()) {
      reads = OfComputation(called) || reads;
    }
    return reads;
  }

  absl::flat_hash_map<const HloComputation*, bool> computations_;
  absl::flat_hash_map<const HloInstruction*, bool> values_;
};

}  // namespace

bool Tf32Enabled() {
  static const bool enabled = EnvironmentOptions::Read().gpu_tf32.value_or(true);
  return enabled;
}

bool PrecisionAllowsTf32(const PrecisionConfig& config) {
  if (config.algorithm() != PrecisionConfig::ALG_UNSET) {
    return config.algorithm() == PrecisionConfig::ALG_DOT_TF32_TF32_F32;
  }
  return std::all_of(
      config.operand_precision().begin(), config.operand_precision().end(), [](auto precision) {
        return precision == PrecisionConfig::DEFAULT || precision == PrecisionConfig::HIGH;
      });
}

bool ComputesInTf32(const HloInstruction& instruction) {
  const PrecisionConfig* precision = PrecisionOf(instruction);
  if (precision == nullptr || instruction.operand_count() < 2) return false;
  const PrimitiveType lhs = instruction.operand(0)->shape().element_type();
  const PrimitiveType out = FirstResult(instruction).element_type();
  switch (instruction.opcode()) {
    case HloOpcode::kDot:
      if (!((lhs == F32 || lhs == C64) && out == lhs &&
            instruction.operand(1)->shape().element_type() == lhs)) {
        return false;
      }
      break;
    case HloOpcode::kConvolution:
      if (lhs != F32 || out != F32) return false;
      break;
    case HloOpcode::kCustomCall:
      if (!IsCudnnConvolutionCall(instruction) || lhs != F32 || out != F32) return false;
      break;
    default:
      return false;
  }
  return PrecisionAllowsTf32(*precision);
}

std::vector<bool> ResultElementsReadingTf32(const HloModule& module) {
  const HloInstruction* root = module.entry_computation()->root_instruction();
  Tf32Reach reach;
  if (!root->shape().IsTuple()) return {reach.OfValue(root)};
  std::vector<bool> reads;
  const int64_t elements = root->shape().tuple_shapes_size();
  reads.reserve(elements);
  for (int64_t i = 0; i < elements; ++i) {
    // A tuple's element is its operand's value; any other tuple-shaped root
    // (a loop, a call) is taken whole.
    reads.push_back(root->opcode() == HloOpcode::kTuple ? reach.OfValue(root->operand(i))
                                                        : reach.OfValue(root));
  }
  return reads;
}

ErrorSpec Tf32ErrorSpec(const ErrorSpec& base, const Literal& expected) {
  double sum = 0;
  int64_t count = 0;
  AddSquares(expected, sum, count);
  const double rms = count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 0;
  ErrorSpec spec = base;
  spec.rel = std::max(spec.rel, 1e-2);
  spec.abs = std::max(spec.abs, 1e-2 * rms);
  return spec;
}

absl::Status LiteralsNearAllowingTf32(const HloModule& module, const Literal& expected,
                                      const Literal& actual, const ErrorSpec& base, bool tf32) {
  if (!tf32) return LiteralsNear(expected, actual, base);
  const std::vector<bool> reads = ResultElementsReadingTf32(module);
  const auto elements = static_cast<int64_t>(reads.size());
  if (!expected.shape().IsTuple() || !actual.shape().IsTuple() ||
      expected.shape().tuple_shapes_size() != elements ||
      actual.shape().tuple_shapes_size() != elements) {
    // One array (or shapes the comparison itself refuses).
    const bool any = std::find(reads.begin(), reads.end(), true) != reads.end();
    return LiteralsNear(expected, actual, any ? Tf32ErrorSpec(base, expected) : base);
  }
  for (int64_t i = 0; i < elements; ++i) {
    const Literal& want = expected.tuple_element(i);
    const bool widened = reads[static_cast<size_t>(i)];
    absl::Status near =
        LiteralsNear(want, actual.tuple_element(i), widened ? Tf32ErrorSpec(base, want) : base);
    if (!near.ok()) {
      return absl::Status(near.code(),
                          absl::StrCat("result element ", i, widened ? " (TF32 bounds)" : "", ": ",
                                       near.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace axle::gpu
