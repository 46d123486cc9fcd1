//===- dot_plan.h - A dot as its thunks read it ----------------------------===//
//
// Internal to the dot thunks (dot_thunk.cc, the oneDNN path;
// dot_loop_thunk.cc, the emitted loop): a dot or dot epilogue fusion
// resolved against its operands into a DotPlan (operands as Sources,
// dimension groups, sizes, the epilogue), and the gather helpers both paths
// use. No oneDNN here.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DOT_PLAN_H_
#define AXLE_CPU_RUNTIME_DOT_PLAN_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/cpu/runtime/epilogue_activation.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::cpu::dot {

// Where the elements of an array come from: a thunk operand or a literal,
// read at `strides` (in elements, 0 for broadcast dims) over `dims`.
struct Source {
  int64_t operand = -1;  // index into the thunk's operands, or -1: `literal`
  std::shared_ptr<const Literal> literal;
  PrimitiveType type = F32;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
};

// Resolves a parameter, constant or broadcast (of those) inside a fusion to
// a Source; `constants[i]` is the literal of the fusion's parameter i when
// it is a constant. Unimplemented for anything else (dot_plan_from_hlo.cc,
// as MakePlan).
absl::StatusOr<Source> Resolve(const HloInstruction& instruction, bool in_fusion,
                               const std::vector<const Literal*>& constants);

// Copies the elements of `source` at data `base` into a dense array of
// dims `order` (a permutation of the source's dims), elements of `size`
// bytes.
void GatherInto(const char* base, const Source& source, absl::Span<const int64_t> order,
                int64_t size, char* out);

// A 3-d view of a Source: the dims in `groups` (each a list of source dims
// in order) collapsed, when each group's strides allow it.
struct View3 {
  int64_t dims[3];
  int64_t strides[3];
};
std::optional<View3> Collapse(const Source& source,
                              const std::vector<std::vector<int64_t>>& groups);

struct DotPlan {
  // Source dims of lhs: batch, free (M), contracting (K); of rhs: batch,
  // contracting (K), free (N).
  std::vector<std::vector<int64_t>> lhs_groups, rhs_groups;
  Source lhs, rhs;
  std::optional<Source> bias;                // over the output dims
  const HloInstruction* bias_add = nullptr;  // the add of `bias` in `chain`
  Activation activation = Activation::kNone;
  double low = 0, high = 0;  // clamp bounds
  PrimitiveType output_type = F32;
  std::vector<int64_t> output_dims;
  int64_t batch = 1, m = 1, k = 1, n = 1;
  int64_t output_batch_rank = 0, output_m_rank = 0;
  bool packed_nibble = false;
  // The fusion's ops above the dot, top down, each with the number of its
  // operand that is the value below it (the emitted loop applies them).
  std::vector<std::pair<const HloInstruction*, int64_t>> chain;
};

// The plan of `instruction` (a dot, or a kOutput fusion rooted at a dot
// epilogue); `constants[i]` is operand i's literal when it is a constant.
absl::StatusOr<DotPlan> MakePlan(const HloInstruction& instruction,
                                 const std::vector<const Literal*>& constants);

// The groups concatenated.
std::vector<int64_t> Flatten(const std::vector<std::vector<int64_t>>& groups);

// The output dims grouped as batch, M, N.
std::vector<std::vector<int64_t>> OutputGroups(const DotPlan& plan);

// The loop path (dot_thunk_emitter.cc): `plan` as a kernel `kernel_name`
// added to `kernels`, run over the output rows on the intra-op pool.
absl::StatusOr<std::unique_ptr<Thunk>> CreateLoopDotThunk(
    const HloInstruction& instruction, const DotPlan& plan, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name);

// The thunks themselves, from a plan and what was compiled for it: what
// the emitters (dot_thunk_emitter.cc) and the loaders
// (thunk_serialization.h) both make, without HLO.
// The loop path's thunk running `kernel` (dot_loop_thunk.cc).
std::unique_ptr<Thunk> MakeLoopDotThunk(std::string name, std::unique_ptr<CompiledKernel> kernel,
                                        const DotPlan& plan, std::vector<int64_t> operand_values,
                                        int64_t output_value);
// The oneDNN matmul of `plan` (dot_thunk.cc); Unimplemented when oneDNN
// declines it.
absl::StatusOr<std::unique_ptr<Thunk>> MakeDnnlDotThunk(std::string name,
                                                        std::vector<int64_t> operand_values,
                                                        int64_t output_value, const DotPlan& plan);

// f32 dots of at most this many multiply-adds run as the emitted loop
// (dot_loop_thunk.cc), unless the small-dot path takes them.
inline constexpr int64_t kMaxLoopDotMultiplyAdds = int64_t{1} << 17;

// The small-dot path (small_dot_thunk.cc): an f32 dot with few rows per
// batch, or a small one with any rows, on AVX-512 register tiles: with
// dense rhs columns above kMaxLoopDotMultiplyAdds or more than 16 output
// columns, or with a transposed rhs ([n, k], k dense) at any size with
// few rows and at the sizes where its dot products win with more; null
// when `plan` is not one (or the CPU lacks AVX-512).
std::unique_ptr<Thunk> CreateSmallDotThunk(const HloInstruction& instruction, const DotPlan& plan,
                                           std::vector<int64_t> operand_values,
                                           int64_t output_value);

}  // namespace axle::cpu::dot

#endif  // AXLE_CPU_RUNTIME_DOT_PLAN_H_
