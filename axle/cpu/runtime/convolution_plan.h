//===- convolution_plan.h - A convolution as its thunks read it -----------===//
//
// Internal to the convolution thunks (convolution_thunk.cc, the oneDNN
// path; convolution_loop_thunk.cc, the loop): a convolution or convolution
// epilogue fusion resolved against its operands into a ConvPlan, and the
// strided-copy helpers both paths use. No oneDNN here.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONVOLUTION_PLAN_H_
#define AXLE_CPU_RUNTIME_CONVOLUTION_PLAN_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/cpu/runtime/epilogue_activation.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu::conv {

using ::axle::cpu::Activation;

// Where an array's elements come from: thunk operand `operand` or
// `literal`, both dense arrays of `buffer_shape`; element (i0, i1, ...) of
// the array is at element offset sum(i_d * strides[d]) of that buffer
// (stride 0 along broadcast dims).
struct Operand {
  int64_t operand = -1;  // index into the thunk's operands, or -1: `literal`
  std::shared_ptr<const Literal> literal;
  Shape buffer_shape;
  std::vector<int64_t> strides;
  PrimitiveType type() const { return buffer_shape.element_type(); }
};

// `values` reordered: element i is values[order[i]].
inline std::vector<int64_t> Permuted(const std::vector<int64_t>& values,
                                     const std::vector<int64_t>& order) {
  std::vector<int64_t> out;
  for (int64_t d : order) out.push_back(values[d]);
  return out;
}

// The convolution in canonical order: lhs [batch, feature, spatial...],
// rhs [output feature, input feature, spatial...], output [batch, feature,
// spatial...]. `*_order` maps canonical to HLO dims, `*_dims` are sizes in
// canonical order, strides of the Operands stay per HLO dim.
struct ConvPlan {
  Operand lhs, rhs;
  // Over the output's HLO dims: the result is (conv * scale + bias).
  std::optional<Operand> scale, bias;
  // Over the output's HLO dims: an array added after the bias (a residual
  // connection), and the add in `chain` that adds it.
  std::optional<Operand> addend;
  const HloInstruction* addend_add = nullptr;
  Activation activation = Activation::kNone;
  double low = 0, high = 0;  // clamp bounds
  PrimitiveType output_type = F32;
  Shape output_shape;
  int64_t spatial = 0;
  std::vector<int64_t> lhs_order, rhs_order, out_order;
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
  std::vector<WindowDimension> window;
  int64_t feature_groups = 1, batch_groups = 1;
  // The fusion's ops above the convolution, top down, each with the number
  // of its operand that is the value below it (the emitted loop applies
  // them).
  std::vector<std::pair<const HloInstruction*, int64_t>> chain;

  std::vector<int64_t> LhsStrides() const { return Permuted(lhs.strides, lhs_order); }
  std::vector<int64_t> RhsStrides() const { return Permuted(rhs.strides, rhs_order); }
  // An epilogue operand's strides in the output's canonical order.
  std::vector<int64_t> OutputOrder(const Operand& operand) const {
    return Permuted(operand.strides, out_order);
  }
  // The output in a slice of a larger array (a concatenation's result that
  // the convolution writes its part of, concat_in_place.h): its element
  // offset in that array's buffer and the element strides per output HLO
  // dim. Empty strides: the output is its own dense row-major array.
  int64_t output_offset = 0;
  std::vector<int64_t> output_strides;

  // The output's element strides in canonical order (a slice's when it is
  // one), and those of a dense row-major output of the same shape.
  std::vector<int64_t> OutStrides() const {
    return output_strides.empty() ? DenseOutStrides() : Permuted(output_strides, out_order);
  }
  std::vector<int64_t> DenseOutStrides() const {
    return Permuted(ShapeUtil::RowMajorStrides(output_shape.dimensions()), out_order);
  }
};

// `plan`, a convolution over one spatial dim, as the same convolution over
// two whose first has size one everywhere (a unit window, stride 1, no
// padding): a new HLO dim of size one just outside the spatial one in the
// input, the kernel and the output (and the epilogue operands and the
// output slice), with the stride that dense row-major arrays give it, so
// the arrays' memory is read and written unchanged. oneDNN 2.6 runs a
// grouped (depthwise) 1-D convolution on its generic grouped kernel, one
// input feature per group: 13x slower than its 2-D depthwise kernel
// (brdgmm_dw) on the same problem with a unit height (convolution_thunk.cc).
ConvPlan WithUnitRow(ConvPlan plan);

// The plan of `instruction`, a convolution or a kOutput fusion rooted at a
// convolution epilogue; `constants[i]` is operand i's literal when it is a
// constant. Unimplemented for what the thunks cannot read. (This and
// Resolve: convolution_plan_from_hlo.cc.)
absl::StatusOr<ConvPlan> MakePlan(const HloInstruction& instruction,
                                  const std::vector<const Literal*>& constants);

// A fused parameter, constant or broadcast (of those) as an Operand.
absl::StatusOr<Operand> Resolve(const HloInstruction& instruction,
                                const std::vector<const Literal*>& constants);

// The data of `operand` in this run.
const char* BaseOf(const ThunkContext& context, const Operand& operand,
                   const std::vector<int64_t>& operand_values);

// Copies `dims` elements of `size` bytes read at `strides` (elements, any
// sign) from `in` into the dense row-major array `out`.
void StridedCopy(const char* in, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& strides, int64_t size, char* out);

// Advances `index` through `dims` in row-major order; false after the last.
bool Next(const std::vector<int64_t>& dims, std::vector<int64_t>& index);

// The loop path (convolution_thunk_emitter.cc): any element type, as the
// kernel `kernel_name` emitted into `kernels` (convolution_loop_emitter.h).
absl::StatusOr<std::unique_ptr<Thunk>> CreateLoopConvolutionThunk(
    const HloInstruction& instruction, ConvPlan plan, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name);
bool IsLoopConvolutionThunk(const Thunk& thunk);

// The thunks themselves, from a plan and what was compiled for it: what
// the emitters (convolution_thunk_emitter.cc) and the loaders
// (thunk_serialization.h) both make, without HLO.
// The loop path's thunk running `kernel` (convolution_loop_thunk.cc).
std::unique_ptr<Thunk> MakeLoopConvolutionThunk(std::string name,
                                                std::unique_ptr<CompiledKernel> kernel,
                                                ConvPlan plan, std::vector<int64_t> operand_values,
                                                int64_t output_value);
// Whether oneDNN's convolution primitive takes `plan`'s types and shape,
// and that primitive (convolution_thunk.cc; Unimplemented when oneDNN
// declines it after all).
bool DnnlTakes(const ConvPlan& plan);
absl::StatusOr<std::unique_ptr<Thunk>> MakeDnnlConvolutionThunk(std::string name,
                                                                std::vector<int64_t> operand_values,
                                                                int64_t output_value,
                                                                ConvPlan plan);

}  // namespace axle::cpu::conv

#endif  // AXLE_CPU_RUNTIME_CONVOLUTION_PLAN_H_
