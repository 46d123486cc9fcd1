// DotThunk: dot and dot epilogues through oneDNN matmul, or an emitted loop
// kernel for the element types oneDNN lacks (see dot_thunk.h).
#include "axle/cpu/runtime/dot_thunk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/dot_loop_emitter.h"
#include "axle/cpu/runtime/dnnl_post_ops.h"
#include "axle/cpu/runtime/omp_team.h"
#include "axle/cpu/runtime/rhs_packing.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// Where the elements of an array come from: a thunk operand or a literal,
// read at `strides` (in elements, 0 for broadcast dims) over `dims`.
struct Source {
  int64_t operand = -1;  // index into the thunk's operands, or -1: `literal`
  std::shared_ptr<const Literal> literal;
  PrimitiveType type = F32;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
};

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

std::vector<int64_t> DimsOf(const Shape& shape) {
  return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end());
}

// Resolves a parameter, constant or broadcast (of those) to a Source.
// `parameter_operand(i)` maps a parameter number to the thunk operand.
absl::StatusOr<Source> Resolve(const HloInstruction& instruction, bool in_fusion,
                               const std::vector<const Literal*>& constants) {
  Source source;
  source.type = instruction.shape().element_type();
  source.dims = DimsOf(instruction.shape());
  source.strides = RowMajorStrides(source.dims);
  switch (instruction.opcode()) {
    case HloOpcode::kParameter: {
      int64_t number = cast<HloParameterInstruction>(&instruction)->parameter_number();
      if (!in_fusion) break;
      if (constants[number] != nullptr) {
        source.literal = std::make_shared<const Literal>(constants[number]->Clone());
      } else {
        source.operand = number;
      }
      return source;
    }
    case HloOpcode::kConstant:
      if (!in_fusion) break;
      source.literal =
          std::make_shared<const Literal>(cast<HloConstantInstruction>(&instruction)->literal());
      return source;
    case HloOpcode::kBroadcast: {
      if (!in_fusion) break;
      AXLE_ASSIGN_OR_RETURN(Source inner, Resolve(*instruction.operand(0), true, constants));
      const auto& mapping = cast<HloDimensionsInstruction>(&instruction)->dimensions();
      std::fill(source.strides.begin(), source.strides.end(), 0);
      for (size_t j = 0; j < mapping.size(); ++j) source.strides[mapping[j]] = inner.strides[j];
      source.operand = inner.operand;
      source.literal = std::move(inner.literal);
      return source;
    }
    default:
      break;
  }
  return Unsupported(instruction, "a dot operand the dot thunk cannot read");
}

// Copies the elements of `source` at data `base` into a dense array of
// dims `order` (a permutation of the source's dims), elements of `size`
// bytes.
void GatherInto(const char* base, const Source& source, absl::Span<const int64_t> order,
                int64_t size, char* out) {
  int64_t rank = static_cast<int64_t>(order.size());
  std::vector<int64_t> dims(rank), strides(rank), index(rank, 0);
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = source.dims[order[i]];
    strides[i] = source.strides[order[i]] * size;
    count *= dims[i];
  }
  if (count == 0) return;
  if (rank == 0) {
    std::memcpy(out, base, size);
    return;
  }
  // Row by row along the innermost dimension: one memcpy per contiguous
  // row, a typed strided loop otherwise (a memcpy call per element made the
  // gathers of attention's batched dots a third of its run time).
  const int64_t row = dims[rank - 1];
  const int64_t row_stride = strides[rank - 1];
  const int64_t rows = count / row;
  int64_t offset = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const char* from = base + offset;
    char* to = out + r * row * size;
    if (row_stride == size) {
      std::memcpy(to, from, row * size);
    } else if (size == 4) {
      for (int64_t j = 0; j < row; ++j) std::memcpy(to + 4 * j, from + j * row_stride, 4);
    } else if (size == 2) {
      for (int64_t j = 0; j < row; ++j) std::memcpy(to + 2 * j, from + j * row_stride, 2);
    } else {
      for (int64_t j = 0; j < row; ++j) std::memcpy(to + j * size, from + j * row_stride, size);
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

// A 3-d view of a Source: the dims in `groups` (each a list of source dims
// in order) collapsed, when each group's strides allow it.
struct View3 {
  int64_t dims[3];
  int64_t strides[3];
};
std::optional<View3> Collapse(const Source& source,
                              const std::vector<std::vector<int64_t>>& groups) {
  View3 view;
  for (int g = 0; g < 3; ++g) {
    view.dims[g] = 1;
    view.strides[g] = 0;
    int64_t expected = -1;
    for (auto it = groups[g].rbegin(); it != groups[g].rend(); ++it) {
      int64_t dim = source.dims[*it];
      if (dim == 1) continue;
      int64_t stride = source.strides[*it];
      if (expected == -1) {
        view.strides[g] = stride;
      } else if (stride != expected) {
        return std::nullopt;
      }
      expected = stride * dim;
      view.dims[g] *= dim;
    }
  }
  return view;
}

// 64-byte aligned memory on this thread for one oneDNN call's scratchpad
// (kScratchpad) or a run's packed rhs (kPackedRhs), kept for the thread's
// next calls (a thread runs one thunk at a time), so a warm run neither
// allocates nor touches fresh pages for it.
enum ThreadBufferSlot { kScratchpad, kPackedRhs, kThreadBufferSlots };
void* ThreadBuffer(ThreadBufferSlot slot, int64_t bytes) {
  thread_local std::vector<char> storage[kThreadBufferSlots];
  std::vector<char>& buffer = storage[slot];
  if (static_cast<int64_t>(buffer.size()) < bytes + 64) buffer.resize(bytes + 64);
  return buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64);
}

// The rhs of an unbatched bf16 dot that is not a constant is packed on
// each run into the layout the primitive prefers (as a constant one is at
// compile time: PackBA16a64b2a, or oneDNN's reorder for another layout)
// when the lhs has at least this many rows: oneDNN's brgemm matmul reading
// a plain bf16 rhs copies it into its VNNI layout again for every block of
// rows (1024^3: 12% of the run, against ~2.5% for packing it once).
constexpr int64_t kPackRhsMinRows = 64;
// For f32 the packed layout pays only with more rows: at 256 rows (the MLP
// step's forward dots) packing plus the packed matmul is no faster than
// reading the plain rhs (1 thread, k 784 / 1024: +1%), at 512 rows 2%
// faster, at 1024 rows 4% (packing is 1.2% of matmul 1024^3's time,
// rhs_packing.h).
constexpr int64_t kPackF32RhsMinRows = 512;

// A plain [1, d1, d2] memory desc as [d1, d2]. For bf16, oneDNN's brgemm
// matmul prefers a packed (VNNI) weights layout only for 2-d weights.
dnnl::memory::desc Squeeze(const dnnl::memory::desc& desc) {
  const dnnl_memory_desc_t& data = desc.data;
  return dnnl::memory::desc(
      {data.dims[1], data.dims[2]}, desc.data_type(),
      {data.format_desc.blocking.strides[1], data.format_desc.blocking.strides[2]});
}

// Whether `packed` (the layout the primitive chose for a [k, n] rhs of
// `type`) is one Axle packs itself, from `plain` with dense columns:
// BA16a64b2a (bf16) or BA16a64b (f32).
bool IsOwnPackingLayout(const dnnl::memory::desc& packed, const dnnl::memory::desc& plain,
                        int64_t k, int64_t n, PrimitiveType type) {
  if (plain.data.ndims != 2 || plain.data.format_desc.blocking.strides[1] != 1) return false;
  const dnnl_dims_t& padded = packed.data.padded_dims;
  if (padded[0] % 16 != 0 || padded[1] % 64 != 0) return false;
  if (type == BF16) {
    return packed == dnnl::memory::desc({k, n}, dnnl::memory::data_type::bf16,
                                        dnnl::memory::format_tag::BA16a64b2a);
  }
  return type == F32 && packed == dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32,
                                                     dnnl::memory::format_tag::BA16a64b);
}

struct DotPlan {
  // Source dims of lhs: batch, free (M), contracting (K); of rhs: batch,
  // contracting (K), free (N).
  std::vector<std::vector<int64_t>> lhs_groups, rhs_groups;
  Source lhs, rhs;
  std::optional<Source> bias;  // over the output dims
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

std::vector<int64_t> Flatten(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> all;
  for (const auto& group : groups) all.insert(all.end(), group.begin(), group.end());
  return all;
}

absl::StatusOr<double> SplatValue(const HloInstruction& instruction,
                                  const std::vector<const Literal*>& constants) {
  AXLE_ASSIGN_OR_RETURN(Source source, Resolve(instruction, true, constants));
  bool splat = source.literal != nullptr;
  for (int64_t stride : source.strides) splat = splat && stride == 0;
  if (!splat || source.literal->element_count() != 1) {
    return Unsupported(instruction, "an activation bound that is not a constant");
  }
  return source.literal->GetAsDouble(0);
}

absl::StatusOr<DotPlan> MakePlan(const HloInstruction& instruction,
                                 const std::vector<const Literal*>& constants) {
  DotPlan plan;
  const HloInstruction* node = &instruction;
  bool in_fusion = false;
  if (instruction.opcode() == HloOpcode::kFusion) {
    in_fusion = true;
    node = cast<HloFusionInstruction>(&instruction)
               ->fused_instructions_computation()
               ->root_instruction();
    auto is_chain = [](const HloInstruction* value) {
      return value->opcode() == HloOpcode::kDot || value->opcode() == HloOpcode::kAdd;
    };
    switch (node->opcode()) {
      case HloOpcode::kLogistic:
      case HloOpcode::kTanh:
      case HloOpcode::kExp:
        plan.activation = node->opcode() == HloOpcode::kLogistic ? Activation::kLogistic
                          : node->opcode() == HloOpcode::kTanh   ? Activation::kTanh
                                                                 : Activation::kExp;
        plan.chain.emplace_back(node, 0);
        node = node->operand(0);
        break;
      case HloOpcode::kMaximum: {
        int chain = is_chain(node->operand(0)) ? 0 : 1;
        AXLE_ASSIGN_OR_RETURN(double zero, SplatValue(*node->operand(1 - chain), constants));
        if (zero != 0.0) return Unsupported(instruction, "a maximum that is not a relu");
        plan.activation = Activation::kRelu;
        plan.chain.emplace_back(node, chain);
        node = node->operand(chain);
        break;
      }
      case HloOpcode::kClamp: {
        AXLE_ASSIGN_OR_RETURN(plan.low, SplatValue(*node->operand(0), constants));
        AXLE_ASSIGN_OR_RETURN(plan.high, SplatValue(*node->operand(2), constants));
        plan.activation = Activation::kClamp;
        plan.chain.emplace_back(node, 1);
        node = node->operand(1);
        break;
      }
      default:
        break;
    }
    if (node->opcode() == HloOpcode::kAdd) {
      int chain = node->operand(0)->opcode() == HloOpcode::kDot ? 0 : 1;
      AXLE_ASSIGN_OR_RETURN(Source bias, Resolve(*node->operand(1 - chain), true, constants));
      plan.bias = std::move(bias);
      plan.chain.emplace_back(node, chain);
      node = node->operand(chain);
    }
  }
  if (node->opcode() != HloOpcode::kDot) {
    return Unsupported(instruction, "a fusion the dot thunk does not implement");
  }
  const auto* dot = cast<HloDotInstruction>(node);
  const auto& numbers = dot->dot_dimension_numbers();
  for (auto precision : dot->precision_config().operand_precision()) {
    plan.packed_nibble = plan.packed_nibble || precision == PrecisionConfig::PACKED_NIBBLE;
  }
  if (in_fusion) {
    AXLE_ASSIGN_OR_RETURN(plan.lhs, Resolve(*node->operand(0), true, constants));
    AXLE_ASSIGN_OR_RETURN(plan.rhs, Resolve(*node->operand(1), true, constants));
  } else {
    for (int i = 0; i < 2; ++i) {
      Source& source = i == 0 ? plan.lhs : plan.rhs;
      const Shape& shape = node->operand(i)->shape();
      source.type = shape.element_type();
      source.dims = DimsOf(shape);
      source.strides = RowMajorStrides(source.dims);
      if (constants[i] != nullptr) {
        source.literal = std::make_shared<const Literal>(constants[i]->Clone());
      } else {
        source.operand = i;
      }
    }
  }
  auto free_dims = [](int64_t rank, absl::Span<const int64_t> batch,
                      absl::Span<const int64_t> contracting) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        free.push_back(d);
      }
    }
    return free;
  };
  std::vector<int64_t> lhs_batch(numbers.lhs_batch_dimensions().begin(),
                                 numbers.lhs_batch_dimensions().end());
  std::vector<int64_t> rhs_batch(numbers.rhs_batch_dimensions().begin(),
                                 numbers.rhs_batch_dimensions().end());
  std::vector<int64_t> lhs_contracting(numbers.lhs_contracting_dimensions().begin(),
                                       numbers.lhs_contracting_dimensions().end());
  std::vector<int64_t> rhs_contracting(numbers.rhs_contracting_dimensions().begin(),
                                       numbers.rhs_contracting_dimensions().end());
  plan.lhs_groups = {lhs_batch, free_dims(plan.lhs.dims.size(), lhs_batch, lhs_contracting),
                     lhs_contracting};
  plan.rhs_groups = {rhs_batch, rhs_contracting,
                     free_dims(plan.rhs.dims.size(), rhs_batch, rhs_contracting)};
  for (int64_t d : lhs_batch) plan.batch *= plan.lhs.dims[d];
  for (int64_t d : plan.lhs_groups[1]) plan.m *= plan.lhs.dims[d];
  for (int64_t d : lhs_contracting) plan.k *= plan.lhs.dims[d];
  for (int64_t d : plan.rhs_groups[2]) plan.n *= plan.rhs.dims[d];
  plan.output_type = instruction.shape().element_type();
  plan.output_dims = DimsOf(instruction.shape());
  plan.output_batch_rank = static_cast<int64_t>(lhs_batch.size());
  plan.output_m_rank = static_cast<int64_t>(plan.lhs_groups[1].size());
  return plan;
}

// The output dims grouped as batch, M, N.
std::vector<std::vector<int64_t>> OutputGroups(const DotPlan& plan) {
  std::vector<std::vector<int64_t>> groups(3);
  for (int64_t d = 0; d < static_cast<int64_t>(plan.output_dims.size()); ++d) {
    int g = d < plan.output_batch_rank                        ? 0
            : d < plan.output_batch_rank + plan.output_m_rank ? 1
                                                              : 2;
    groups[g].push_back(d);
  }
  return groups;
}

// ---------------------------------------------------------------------------
// The loop path: the types oneDNN lacks, as a kernel emitted into the
// program's LLVM module (dot_loop_emitter.h).

// The spec of `plan`'s kernel. Operand strides are those of the Sources (a
// broadcast operand has stride 0 in the dims it adds).
DotLoopSpec MakeLoopSpec(const DotPlan& plan) {
  DotLoopSpec spec;
  spec.lhs_type = plan.lhs.type;
  spec.rhs_type = plan.rhs.type;
  spec.output_type = plan.output_type;
  spec.packed_nibble = plan.packed_nibble;
  spec.has_bias = plan.bias.has_value();
  if (plan.bias) spec.bias_type = plan.bias->type;
  auto bias_stride = [&](int64_t output_dim) {
    return plan.bias ? plan.bias->strides[output_dim] : 0;
  };
  const std::vector<int64_t>& lhs_batch = plan.lhs_groups[0];
  const std::vector<int64_t>& rhs_batch = plan.rhs_groups[0];
  int64_t output_dim = 0;
  for (size_t i = 0; i < lhs_batch.size(); ++i, ++output_dim) {
    spec.batch.push_back({plan.lhs.dims[lhs_batch[i]], plan.lhs.strides[lhs_batch[i]],
                          plan.rhs.strides[rhs_batch[i]], bias_stride(output_dim)});
  }
  for (int64_t d : plan.lhs_groups[1]) {
    spec.m.push_back({plan.lhs.dims[d], plan.lhs.strides[d], 0, bias_stride(output_dim++)});
  }
  for (int64_t d : plan.rhs_groups[2]) {
    spec.n.push_back({plan.rhs.dims[d], 0, plan.rhs.strides[d], bias_stride(output_dim++)});
  }
  const std::vector<int64_t>& lhs_contracting = plan.lhs_groups[2];
  const std::vector<int64_t>& rhs_contracting = plan.rhs_groups[1];
  for (size_t i = 0; i < lhs_contracting.size(); ++i) {
    spec.k.push_back({plan.lhs.dims[lhs_contracting[i]], plan.lhs.strides[lhs_contracting[i]],
                      plan.rhs.strides[rhs_contracting[i]], 0});
  }
  return spec;
}

// The epilogue ops of `plan` bottom up, with their splat constants.
absl::StatusOr<std::vector<DotLoopSpec::EpilogueOp>> LoopEpilogue(
    const DotPlan& plan, const std::vector<const Literal*>& constants) {
  std::vector<DotLoopSpec::EpilogueOp> epilogue;
  for (auto it = plan.chain.rbegin(); it != plan.chain.rend(); ++it) {
    DotLoopSpec::EpilogueOp op;
    op.instruction = it->first;
    op.chain_operand = it->second;
    op.constants.resize(op.instruction->operand_count());
    for (int64_t i = 0; i < op.instruction->operand_count(); ++i) {
      if (i == op.chain_operand) continue;
      if (op.instruction->opcode() == HloOpcode::kAdd) {
        op.bias_operand = i;
        continue;
      }
      const HloInstruction& operand = *op.instruction->operand(i);
      AXLE_ASSIGN_OR_RETURN(Source source, Resolve(operand, true, constants));
      if (source.literal == nullptr) return Unsupported(operand, "a non-constant epilogue bound");
      auto scalar = std::make_shared<Literal>(ShapeUtil::MakeShape(source.type, {}));
      std::memcpy(scalar->untyped_data(), source.literal->untyped_data(), scalar->size_bytes());
      op.constants[i] = std::move(scalar);
    }
    epilogue.push_back(std::move(op));
  }
  return epilogue;
}

// Runs the emitted kernel over the output rows, split across the intra-op
// pool when there is enough work. Constant operands are the thunk's own
// literals.
class LoopDotThunk : public Thunk {
 public:
  LoopDotThunk(std::string name, std::unique_ptr<CompiledKernel> kernel, const DotPlan& plan,
               std::vector<int64_t> operand_values, int64_t output_value)
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value),
        work_per_row_(std::max<int64_t>(1, plan.k * plan.n)) {
    sources_.push_back(plan.lhs);
    sources_.push_back(plan.rhs);
    if (plan.bias) sources_.push_back(*plan.bias);
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  absl::Status Execute(const ThunkContext& context) const override {
    void* buffers[4];
    size_t count = 0;
    for (const Source& source : sources_) {
      buffers[count++] = source.literal != nullptr
                             ? const_cast<void*>(source.literal->untyped_data())
                             : context.address(operand_values_[source.operand]);
    }
    buffers[count] = context.address(output_value_);
    RunRowsInParallel(*kernel_, buffers, context, work_per_row_);
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<CompiledKernel> kernel_;
  std::vector<Source> sources_;  // lhs, rhs, [bias]
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  int64_t work_per_row_;  // multiply-adds per row (RunRowsInParallel)
};

absl::StatusOr<std::unique_ptr<Thunk>> CreateLoopDotThunk(
    const HloInstruction& instruction, const DotPlan& plan, std::vector<int64_t> operand_values,
    const std::vector<const Literal*>& constants, int64_t output_value, LoopKernelModule& kernels,
    absl::string_view kernel_name) {
  DotLoopSpec spec = MakeLoopSpec(plan);
  AXLE_ASSIGN_OR_RETURN(spec.epilogue, LoopEpilogue(plan, constants));
  AXLE_RETURN_IF_ERROR(CheckDotLoopSpec(spec, instruction));
  absl::StatusOr<std::unique_ptr<CompiledKernel>> kernel =
      AddDotLoopKernel(kernels, spec, kernel_name);
  if (!kernel.ok()) {
    return absl::Status(
        kernel.status().code(),
        absl::StrCat(kernel.status().message(), " (in dot %", instruction.name(), ")"));
  }
  return std::unique_ptr<Thunk>(std::make_unique<LoopDotThunk>(
      instruction.name(), *std::move(kernel), plan, std::move(operand_values), output_value));
}

// ---------------------------------------------------------------------------
// The oneDNN path.

const dnnl::engine& Engine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::memory::data_type DnnlType(PrimitiveType type) {
  return type == BF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// How the thunk gets one matmul input at run time.
struct MatmulInput {
  Source source;
  std::vector<int64_t> order;        // source dims in canonical order
  bool gather = false;               // copy into a dense canonical buffer first
  dnnl::memory::desc desc;           // the primitive's view
  std::shared_ptr<char[]> constant;  // a gathered constant
};

// Bytes of the dense copy of `input` a run makes (64-byte multiples), or
// 0 when it is read in place.
int64_t GatherBytes(const MatmulInput& input) {
  if (!input.gather || input.constant) return 0;
  int64_t count = 1;
  for (int64_t d : input.source.dims) count *= d;
  const int64_t bytes = std::max<int64_t>(1, count * primitive_util::ByteWidth(input.source.type));
  return (bytes + 63) / 64 * 64;
}

// Decides whether `source` can be read in place as [d0, d1, d2] (oneDNN
// wants the innermost or the second-innermost dim dense), else gathers.
MatmulInput PlanInput(const Source& source, const std::vector<std::vector<int64_t>>& groups,
                      const int64_t (&dims)[3]) {
  MatmulInput input;
  input.source = source;
  input.order = Flatten(groups);
  dnnl::memory::data_type type = DnnlType(source.type);
  std::optional<View3> view = Collapse(source, groups);
  bool in_place = view.has_value() && source.literal == nullptr;
  if (in_place) {
    // Strides of size-1 dims are free: pick the ones a plain layout has.
    int64_t* s = view->strides;
    bool rows = dims[2] == 1 || s[2] == 1;
    if (rows) {
      s[2] = 1;
      if (dims[1] == 1) s[1] = dims[2];
      in_place = s[1] >= dims[2];
    } else {
      if (dims[1] == 1) s[1] = 1;
      in_place = s[1] == 1 && s[2] >= dims[1];
    }
    int64_t span = std::max(dims[1] * s[1], dims[2] * s[2]);
    if (dims[0] == 1) s[0] = span;
    in_place = in_place && s[0] >= span;
    if (in_place) {
      input.desc = dnnl::memory::desc({dims[0], dims[1], dims[2]}, type, {s[0], s[1], s[2]});
      return input;
    }
  }
  input.gather = true;
  input.desc = dnnl::memory::desc({dims[0], dims[1], dims[2]}, type, dnnl::memory::format_tag::abc);
  if (source.literal != nullptr) {
    int64_t size = primitive_util::ByteWidth(source.type);
    input.constant.reset(new char[std::max<int64_t>(1, dims[0] * dims[1] * dims[2] * size)]);
    GatherInto(static_cast<const char*>(source.literal->untyped_data()), source, input.order, size,
               input.constant.get());
  }
  return input;
}

class DnnlDotThunk : public Thunk {
 public:
  DnnlDotThunk(std::string name, std::vector<int64_t> operand_values, int64_t output_value)
      : Thunk(std::move(name)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value) {}

  absl::Status Build(const DotPlan& plan) {
    // oneDNN fixes a primitive's team size (the run-time rhs reorder's at
    // least) when it creates it: the size a run gets when it runs alone.
    OmpTeamShare share(nullptr);
    // A bf16 result rounds after the dot and after each epilogue op (as the
    // HLO says); oneDNN's post-ops would round once, so they run here. A
    // plain bf16 dot has none: oneDNN writes its rounded result directly.
    rounded_epilogue_ =
        plan.output_type == BF16 && (plan.bias || plan.activation != Activation::kNone);
    activation_ = plan.activation;
    low_ = static_cast<float>(plan.low);
    high_ = static_cast<float>(plan.high);
    dims_[0] = plan.batch;
    dims_[1] = plan.m;
    dims_[2] = plan.n;
    dims_[3] = plan.k;
    int64_t lhs_dims[3] = {plan.batch, plan.m, plan.k};
    int64_t rhs_dims[3] = {plan.batch, plan.k, plan.n};
    lhs_ = PlanInput(plan.lhs, plan.lhs_groups, lhs_dims);
    rhs_ = PlanInput(plan.rhs, plan.rhs_groups, rhs_dims);
    dnnl::memory::desc dst_desc({plan.batch, plan.m, plan.n}, DnnlType(plan.output_type),
                                dnnl::memory::format_tag::abc);
    dnnl::post_ops post_ops;
    if (plan.bias) {
      // The bias as a dense [B|1, M|1, N|1] array: a group the bias does not
      // vary over is 1.
      std::vector<std::vector<int64_t>> groups = OutputGroups(plan);
      bias_ = MatmulInput();
      bias_->source = *plan.bias;
      int64_t dims[3] = {plan.batch, plan.m, plan.n};
      for (int g = 0; g < 3; ++g) {
        bool varies = false;
        for (int64_t d : groups[g]) varies = varies || plan.bias->strides[d] != 0;
        if (!varies) {
          dims[g] = 1;
          // Read only the first element of this group.
          for (int64_t d : groups[g]) bias_->source.dims[d] = 1;
        }
      }
      bias_->order = Flatten(groups);
      bias_->gather = true;
      bias_->desc = dnnl::memory::desc({dims[0], dims[1], dims[2]}, DnnlType(plan.bias->type),
                                       dnnl::memory::format_tag::abc);
      std::copy(dims, dims + 3, bias_dims_);
      if (plan.bias->literal != nullptr) {
        int64_t size = primitive_util::ByteWidth(plan.bias->type);
        bias_->constant.reset(new char[std::max<int64_t>(1, dims[0] * dims[1] * dims[2] * size)]);
        GatherInto(static_cast<const char*>(plan.bias->literal->untyped_data()), bias_->source,
                   bias_->order, size, bias_->constant.get());
      }
    }
    // A bf16 dot without batch: 2-d descs (Squeeze).
    bool two_d = plan.batch == 1 && (plan.lhs.type == BF16 || plan.lhs.type == F32);
    dnnl::memory::dims weights_dims = {plan.batch, plan.k, plan.n};
    if (two_d) {
      lhs_.desc = Squeeze(lhs_.desc);
      rhs_.desc = Squeeze(rhs_.desc);
      dst_desc = Squeeze(dst_desc);
      if (bias_) bias_->desc = Squeeze(bias_->desc);
      weights_dims = {plan.k, plan.n};
    }
    if (bias_ && !rounded_epilogue_) {
      post_ops.append_binary(dnnl::algorithm::binary_add, bias_->desc);
    }
    AppendActivationPostOp(post_ops, rounded_epilogue_ ? Activation::kNone : plan.activation,
                           plan.low, plan.high);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // A constant rhs: let the primitive choose its weights layout, reorder
    // once. A large bf16 one: reorder on each run (kPackRhsMinRows).
    bool constant_weights = plan.rhs.literal != nullptr;
    // (Batched weights keep oneDNN's plain layout: no packing to gain.)
    bool pack_at_run_time = !constant_weights && two_d &&
                            plan.m >= (plan.rhs.type == F32 ? kPackF32RhsMinRows : kPackRhsMinRows);
    dnnl::memory::desc weights_desc =
        constant_weights || pack_at_run_time
            ? dnnl::memory::desc(weights_dims, DnnlType(plan.rhs.type),
                                 dnnl::memory::format_tag::any)
            : rhs_.desc;
    try {
      dnnl::matmul::desc desc(lhs_.desc, weights_desc, dst_desc);
      dnnl::matmul::primitive_desc primitive_desc(desc, attr, Engine());
      scratchpad_size_ = static_cast<int64_t>(primitive_desc.scratchpad_desc().get_size());
      if (constant_weights) {
        packed_weights_ = dnnl::memory(primitive_desc.weights_desc(), Engine());
        dnnl::memory plain(rhs_.desc, Engine(), rhs_.constant.get());
        dnnl::stream stream(Engine());
        dnnl::reorder(plain, packed_weights_).execute(stream, plain, packed_weights_);
        stream.wait();
        rhs_.constant.reset();
      }
      if (pack_at_run_time && plan.rhs.type == F32 &&
          !IsOwnPackingLayout(primitive_desc.weights_desc(), rhs_.desc, plan.k, plan.n, F32)) {
        // Only our own f32 packing pays (oneDNN's f32 reorder costs more
        // than the packed layout saves): otherwise the plain layout.
        pack_at_run_time = false;
        desc = dnnl::matmul::desc(lhs_.desc, rhs_.desc, dst_desc);
        primitive_desc = dnnl::matmul::primitive_desc(desc, attr, Engine());
        scratchpad_size_ = static_cast<int64_t>(primitive_desc.scratchpad_desc().get_size());
      }
      if (pack_at_run_time && primitive_desc.weights_desc() != rhs_.desc) {
        packed_rhs_desc_ = primitive_desc.weights_desc();
        own_packing_ =
            IsOwnPackingLayout(packed_rhs_desc_, rhs_.desc, plan.k, plan.n, plan.rhs.type);
        dnnl::primitive_attr reorder_attr;
        reorder_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        dnnl::reorder::primitive_desc reorder_desc(Engine(), rhs_.desc, Engine(), packed_rhs_desc_,
                                                   reorder_attr);
        rhs_reorder_ = dnnl::reorder(reorder_desc);
        scratchpad_size_ = std::max(
            scratchpad_size_, static_cast<int64_t>(reorder_desc.scratchpad_desc().get_size()));
      }
      primitive_ = dnnl::matmul(primitive_desc);
      dst_desc_ = dst_desc;
    } catch (const dnnl::error& error) {
      return absl::UnimplementedError(absl::StrCat("oneDNN matmul: ", error.what()));
    }
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  // The dense copies of the operands that need gathering, one after the
  // other in the thunk's scratch memory.
  int64_t scratch_bytes() const override {
    int64_t bytes = 0;
    for (const MatmulInput* input : {&lhs_, &rhs_}) bytes += GatherBytes(*input);
    if (bias_) bytes += GatherBytes(*bias_);
    return bytes;
  }

  absl::Status Execute(const ThunkContext& context) const override {
    OmpTeamShare share(context.run_options);
    // The executable's scratch memory, or (called without) our own.
    std::vector<char> own_scratch;
    char* scratch = context.scratch;
    if (scratch == nullptr || context.scratch_bytes < scratch_bytes()) {
      own_scratch.resize(scratch_bytes() + 64);
      scratch = own_scratch.data() + (64 - reinterpret_cast<uintptr_t>(own_scratch.data()) % 64);
    }
    auto pointer = [&](const MatmulInput& input) -> void* {
      if (input.constant) return input.constant.get();
      const Source& source = input.source;
      void* base = context.address(operand_values_[source.operand]);
      if (!input.gather) return base;
      char* dense = scratch;
      scratch += GatherBytes(input);
      GatherInto(static_cast<const char*>(base), source, input.order,
                 primitive_util::ByteWidth(source.type), dense);
      return dense;
    };
    try {
      dnnl::stream stream(Engine());
      std::unordered_map<int, dnnl::memory> args;
      args[DNNL_ARG_SRC] = dnnl::memory(lhs_.desc, Engine(), pointer(lhs_));
      args[DNNL_ARG_WEIGHTS] =
          packed_weights_ ? packed_weights_ : dnnl::memory(rhs_.desc, Engine(), pointer(rhs_));
      args[DNNL_ARG_DST] = dnnl::memory(dst_desc_, Engine(), context.address(output_value_));
      const void* bias = bias_ ? pointer(*bias_) : nullptr;
      if (bias_ && !rounded_epilogue_) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
            dnnl::memory(bias_->desc, Engine(), const_cast<void*>(bias));
      }
      void* aligned = ThreadBuffer(kScratchpad, scratchpad_size_);
      if (scratchpad_size_ > 0) {
        dnnl::memory::desc scratch_desc({scratchpad_size_}, dnnl::memory::data_type::u8,
                                        dnnl::memory::format_tag::a);
        args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(scratch_desc, Engine(), aligned);
      }
      if (own_packing_) {
        // On the intra-op pool (oneDNN's team sleeps meanwhile), blocks of
        // 16 row pairs (bf16) or 32 rows (f32): 64 / 128 KiB of a
        // 1024-wide rhs.
        void* packed = ThreadBuffer(kPackedRhs, packed_rhs_desc_.get_size());
        dnnl::memory plain = args[DNNL_ARG_WEIGHTS];
        const void* src = plain.get_data_handle();
        const int64_t ld = plain.get_desc().data.format_desc.blocking.strides[0];
        const int64_t padded_k = packed_rhs_desc_.data.padded_dims[0];
        const int64_t padded_n = packed_rhs_desc_.data.padded_dims[1];
        const bool f32 = packed_rhs_desc_.data_type() == dnnl::memory::data_type::f32;
        auto pack = [&](int64_t begin, int64_t end) {
          if (f32) {
            PackBA16a64b(static_cast<const float*>(src), dims_[3], dims_[2], ld, padded_k, padded_n,
                         begin, end, static_cast<float*>(packed));
          } else {
            PackBA16a64b2a(static_cast<const uint16_t*>(src), dims_[3], dims_[2], ld, padded_k,
                           padded_n, begin, end, static_cast<uint16_t*>(packed));
          }
        };
        const int64_t units = f32 ? padded_k : padded_k / 2;
        if (context.thread_pool != nullptr) {
          context.thread_pool->ParallelFor(units, f32 ? 32 : 16, pack, context.max_threads);
        } else {
          pack(0, units);
        }
        args[DNNL_ARG_WEIGHTS] = dnnl::memory(packed_rhs_desc_, Engine(), packed);
      } else if (rhs_reorder_) {
        // The stream is in order: the reorder is done before the matmul
        // reads the packed rhs (and the two take turns on the scratchpad).
        dnnl::memory packed(packed_rhs_desc_, Engine(),
                            ThreadBuffer(kPackedRhs, packed_rhs_desc_.get_size()));
        std::unordered_map<int, dnnl::memory> reorder_args = {
            {DNNL_ARG_FROM, args[DNNL_ARG_WEIGHTS]}, {DNNL_ARG_TO, packed}};
        if (scratchpad_size_ > 0) reorder_args[DNNL_ARG_SCRATCHPAD] = args[DNNL_ARG_SCRATCHPAD];
        rhs_reorder_.execute(stream, reorder_args);
        args[DNNL_ARG_WEIGHTS] = packed;
      }
      primitive_.execute(stream, args);
      stream.wait();
      if (rounded_epilogue_) {
        RoundedEpilogue(static_cast<const bfloat16*>(bias),
                        static_cast<bfloat16*>(context.address(output_value_)));
      }
    } catch (const dnnl::error& error) {
      return absl::InternalError(absl::StrCat("oneDNN matmul: ", error.what()));
    }
    return absl::OkStatus();
  }

 private:
  // The epilogue of a bf16 result, row by row: each op rounds to bf16.
  void RoundedEpilogue(const bfloat16* bias, bfloat16* out) const {
    const int64_t* bias_dims = bias_dims_;
    const int64_t n = dims_[2];
    for (int64_t b = 0; b < dims_[0]; ++b) {
      for (int64_t i = 0; i < dims_[1]; ++i) {
        bfloat16* row = out + (b * dims_[1] + i) * n;
        if (bias != nullptr) {
          int64_t bb = bias_dims[0] == 1 ? 0 : b, bi = bias_dims[1] == 1 ? 0 : i;
          const bfloat16* bias_row = bias + (bb * bias_dims[1] + bi) * bias_dims[2];
          if (bias_dims[2] == 1) {
            float term = static_cast<float>(bias_row[0]);
            for (int64_t j = 0; j < n; ++j) row[j] = bfloat16(static_cast<float>(row[j]) + term);
          } else {
            for (int64_t j = 0; j < n; ++j) {
              row[j] = bfloat16(static_cast<float>(row[j]) + static_cast<float>(bias_row[j]));
            }
          }
        }
        ActivateRow(row, n);
      }
    }
  }

  void ActivateRow(bfloat16* row, int64_t n) const {
    auto apply = [&](auto f) {
      for (int64_t j = 0; j < n; ++j) row[j] = bfloat16(f(static_cast<float>(row[j])));
    };
    switch (activation_) {
      case Activation::kNone:
        return;
      case Activation::kRelu:
        return apply([](float x) { return std::isnan(x) ? x : std::max(x, 0.f); });
      case Activation::kClamp:
        return apply(
            [&](float x) { return std::isnan(x) ? x : std::min(std::max(x, low_), high_); });
      case Activation::kLogistic:
        return apply([](float x) { return 1.f / (1.f + std::exp(-x)); });
      case Activation::kTanh:
        return apply([](float x) { return std::tanh(x); });
      case Activation::kExp:
        return apply([](float x) { return std::exp(x); });
    }
  }

  bool rounded_epilogue_ = false;
  Activation activation_ = Activation::kNone;
  float low_ = 0, high_ = 0;
  int64_t dims_[4] = {1, 1, 1, 1};    // B, M, N, K
  int64_t bias_dims_[3] = {1, 1, 1};  // [B|1, M|1, N|1]
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  MatmulInput lhs_, rhs_;
  std::optional<MatmulInput> bias_;
  dnnl::memory packed_weights_;
  // A rhs packed on each run (kPackRhsMinRows): its layout and the reorder.
  dnnl::memory::desc packed_rhs_desc_;
  dnnl::primitive rhs_reorder_;
  bool own_packing_ = false;  // PackBA16a64b2a instead of rhs_reorder_
  dnnl::memory::desc dst_desc_;
  dnnl::primitive primitive_;
  int64_t scratchpad_size_ = 0;
};

bool DnnlTakes(const DotPlan& plan) {
  PrimitiveType in = plan.lhs.type;
  if (in != plan.rhs.type || (in != F32 && in != BF16)) return false;
  if (plan.output_type != F32 && !(in == BF16 && plan.output_type == BF16)) return false;
  if (plan.bias && plan.bias->type != plan.output_type) return false;
  return plan.batch * plan.m * plan.n > 0 && plan.k > 0;
}

}  // namespace

int DotThreads() { return ThreadPool::DefaultNumThreads(); }

absl::StatusOr<std::unique_ptr<Thunk>> CreateDotThunk(const HloInstruction& instruction,
                                                      std::vector<int64_t> operand_values,
                                                      const std::vector<const Literal*>& constants,
                                                      int64_t output_value,
                                                      LoopKernelModule& kernels,
                                                      absl::string_view kernel_name) {
  if (!instruction.shape().IsArray()) {
    return Unsupported(instruction, "a dot with a tuple result");
  }
  AXLE_ASSIGN_OR_RETURN(DotPlan plan, MakePlan(instruction, constants));
  if (DnnlTakes(plan)) {
    auto thunk = std::make_unique<DnnlDotThunk>(instruction.name(), operand_values, output_value);
    if (thunk->Build(plan).ok()) return std::unique_ptr<Thunk>(std::move(thunk));
  }
  return CreateLoopDotThunk(instruction, plan, std::move(operand_values), constants, output_value,
                            kernels, kernel_name);
}

absl::Status EmitDotThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  std::vector<int64_t> operand_values;
  std::vector<const Literal*> constants;
  for (const HloInstruction* operand : instruction.operands()) {
    AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(operand));
    operand_values.push_back(value);
    constants.push_back(builder.ConstantOf(value));
  }
  int64_t output = builder.DefineTemporary(&instruction, {}, instruction.shape());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Thunk> thunk,
                        CreateDotThunk(instruction, std::move(operand_values), constants, output,
                                       builder.kernels(), builder.UniqueName("dot_loop")));
  builder.AddThunk(std::move(thunk));
  return absl::OkStatus();
}

}  // namespace axle::cpu
