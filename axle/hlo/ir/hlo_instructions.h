//===- hlo_instructions.h - Op-specific instruction subclasses -------------===//
//
// Each subclass adds the attributes of one opcode (or of a family of opcodes
// that share them) to HloInstruction. The attributes of a subclass are one
// copyable struct (`attrs()`, `mutable_attrs()`), so cloning is generic.
// Opcodes without attributes are plain HloInstructions.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_INSTRUCTIONS_H_
#define AXLE_HLO_IR_HLO_INSTRUCTIONS_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axle/core/literal.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

// A subclass with attribute struct `Attrs`; Derived's constructor must be
// (HloOpcode, const Shape&, absl::Span<HloInstruction* const>).
template <typename Derived, typename Attrs>
class HloInstructionWith : public HloInstruction {
 public:
  using Attributes = Attrs;

  HloInstructionWith(HloOpcode opcode, const Shape& shape,
                     absl::Span<HloInstruction* const> operands)
      : HloInstruction(opcode, shape) {
    for (HloInstruction* operand : operands) AppendOperand(operand);
  }

  const Attrs& attrs() const { return attrs_; }
  Attrs* mutable_attrs() { return &attrs_; }

 protected:
  std::unique_ptr<HloInstruction> CloneImpl(
      const Shape& shape, absl::Span<HloInstruction* const> operands) const override {
    auto clone = std::make_unique<Derived>(opcode(), shape, operands);
    clone->attrs_ = attrs_;
    return clone;
  }

  Attrs attrs_;
};

namespace internal {
inline bool OpcodeIn(const HloInstruction* i, std::initializer_list<HloOpcode> opcodes) {
  for (HloOpcode op : opcodes) {
    if (i->opcode() == op) return true;
  }
  return false;
}
}  // namespace internal

#define AXLE_HLO_CLASS_OF(...)                             \
  static bool ClassOf(const HloInstruction* instruction) { \
    return internal::OpcodeIn(instruction, {__VA_ARGS__}); \
  }

// parameter(N), parameter_replication={true,false}
struct ParameterAttrs {
  int64_t parameter_number = 0;
  std::optional<std::vector<bool>> parameter_replication;
};
class HloParameterInstruction : public HloInstructionWith<HloParameterInstruction, ParameterAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kParameter)
  int64_t parameter_number() const { return attrs_.parameter_number; }
};

// constant(literal)
struct ConstantAttrs {
  Literal literal;
  // The text gave no values (`constant({...})`, as XLA prints large
  // constants): the literal holds zeros and the printer writes `{...}` back.
  bool elided = false;
};
class HloConstantInstruction : public HloInstructionWith<HloConstantInstruction, ConstantAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kConstant)
  const Literal& literal() const { return attrs_.literal; }
};

// get-tuple-element(t), index=N
struct GetTupleElementAttrs {
  int64_t tuple_index = 0;
};
class HloGetTupleElementInstruction
    : public HloInstructionWith<HloGetTupleElementInstruction, GetTupleElementAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kGetTupleElement)
  int64_t tuple_index() const { return attrs_.tuple_index; }
};

// iota(), iota_dimension=N
struct IotaAttrs {
  int64_t iota_dimension = 0;
};
class HloIotaInstruction : public HloInstructionWith<HloIotaInstruction, IotaAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kIota)
  int64_t iota_dimension() const { return attrs_.iota_dimension; }
};

// dimensions={...}: broadcast, transpose, reverse, reduce, concatenate, map,
// get-dimension-size, set-dimension-size.
struct DimensionsAttrs {
  std::vector<int64_t> dimensions;
};
class HloDimensionsInstruction
    : public HloInstructionWith<HloDimensionsInstruction, DimensionsAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kBroadcast, HloOpcode::kTranspose, HloOpcode::kReverse,
                    HloOpcode::kReduce, HloOpcode::kConcatenate, HloOpcode::kMap,
                    HloOpcode::kGetDimensionSize, HloOpcode::kSetDimensionSize)
  const std::vector<int64_t>& dimensions() const { return attrs_.dimensions; }
  int64_t dimensions(int64_t i) const { return attrs_.dimensions[i]; }
  // concatenate, get/set-dimension-size: the single dimension.
  int64_t dimension() const { return attrs_.dimensions.at(0); }
};

// sort: dimensions={d}, is_stable=true, to_apply=comparator
struct SortAttrs {
  int64_t sort_dimension = 0;
  bool is_stable = false;
};
class HloSortInstruction : public HloInstructionWith<HloSortInstruction, SortAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kSort)
  int64_t sort_dimension() const { return attrs_.sort_dimension; }
  bool is_stable() const { return attrs_.is_stable; }
};

// reshape, inferred_dimension=N (optional)
struct ReshapeAttrs {
  int64_t inferred_dimension = -1;
};
class HloReshapeInstruction : public HloInstructionWith<HloReshapeInstruction, ReshapeAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kReshape)
  int64_t inferred_dimension() const { return attrs_.inferred_dimension; }
};

// slice={[start:limit:stride], ...}
struct SliceAttrs {
  std::vector<int64_t> starts, limits, strides;
};
class HloSliceInstruction : public HloInstructionWith<HloSliceInstruction, SliceAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kSlice)
  const std::vector<int64_t>& slice_starts() const { return attrs_.starts; }
  const std::vector<int64_t>& slice_limits() const { return attrs_.limits; }
  const std::vector<int64_t>& slice_strides() const { return attrs_.strides; }
};

// dynamic-slice, dynamic_slice_sizes={...}
struct DynamicSliceAttrs {
  std::vector<int64_t> dynamic_slice_sizes;
};
class HloDynamicSliceInstruction
    : public HloInstructionWith<HloDynamicSliceInstruction, DynamicSliceAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kDynamicSlice)
  const std::vector<int64_t>& dynamic_slice_sizes() const { return attrs_.dynamic_slice_sizes; }
};

// pad, padding=lo_hi_interior x ...
struct PadAttrs {
  PaddingConfig padding_config;
};
class HloPadInstruction : public HloInstructionWith<HloPadInstruction, PadAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kPad)
  const PaddingConfig& padding_config() const { return attrs_.padding_config; }
};

// compare, direction=LT, type=TOTALORDER (optional)
struct CompareAttrs {
  ComparisonDirection direction = ComparisonDirection::kEq;
  ComparisonType type = ComparisonType::kDefault;  // kDefault: not printed
};
class HloCompareInstruction : public HloInstructionWith<HloCompareInstruction, CompareAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kCompare)
  ComparisonDirection direction() const { return attrs_.direction; }
  ComparisonType type() const { return attrs_.type; }
};

// dot, ragged-dot, scaled-dot: dimension numbers, precision, algorithm.
struct DotAttrs {
  DotDimensionNumbers dot_dimension_numbers;
  std::vector<int64_t> lhs_ragged_dimensions;  // ragged-dot
  std::vector<int64_t> rhs_group_dimensions;   // ragged-dot
  PrecisionConfig precision_config;
};
class HloDotInstruction : public HloInstructionWith<HloDotInstruction, DotAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kDot, HloOpcode::kRaggedDot, HloOpcode::kScaledDot)
  const DotDimensionNumbers& dot_dimension_numbers() const { return attrs_.dot_dimension_numbers; }
  const PrecisionConfig& precision_config() const { return attrs_.precision_config; }
};

// convolution: window, dim_labels, feature/batch group counts, precision.
struct ConvolutionAttrs {
  Window window;
  ConvolutionDimensionNumbers convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  PrecisionConfig precision_config;
};
class HloConvolutionInstruction
    : public HloInstructionWith<HloConvolutionInstruction, ConvolutionAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kConvolution)
  const Window& window() const { return attrs_.window; }
  const ConvolutionDimensionNumbers& convolution_dimension_numbers() const {
    return attrs_.convolution_dimension_numbers;
  }
  int64_t feature_group_count() const { return attrs_.feature_group_count; }
  int64_t batch_group_count() const { return attrs_.batch_group_count; }
  const PrecisionConfig& precision_config() const { return attrs_.precision_config; }
};

// reduce-window and select-and-scatter: window={...}
struct WindowAttrs {
  Window window;
};
class HloWindowInstruction : public HloInstructionWith<HloWindowInstruction, WindowAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kReduceWindow, HloOpcode::kSelectAndScatter)
  const Window& window() const { return attrs_.window; }
};

// gather
struct GatherAttrs {
  GatherDimensionNumbers gather_dimension_numbers;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;
};
class HloGatherInstruction : public HloInstructionWith<HloGatherInstruction, GatherAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kGather)
  const GatherDimensionNumbers& gather_dimension_numbers() const {
    return attrs_.gather_dimension_numbers;
  }
  const std::vector<int64_t>& gather_slice_sizes() const { return attrs_.slice_sizes; }
  bool indices_are_sorted() const { return attrs_.indices_are_sorted; }
};

// scatter (variadic: N operands, indices, N updates), to_apply=combiner
struct ScatterAttrs {
  ScatterDimensionNumbers scatter_dimension_numbers;
  bool indices_are_sorted = false;
  bool unique_indices = false;
};
class HloScatterInstruction : public HloInstructionWith<HloScatterInstruction, ScatterAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kScatter)
  const ScatterDimensionNumbers& scatter_dimension_numbers() const {
    return attrs_.scatter_dimension_numbers;
  }
  bool indices_are_sorted() const { return attrs_.indices_are_sorted; }
  bool unique_indices() const { return attrs_.unique_indices; }
  int64_t scatter_operand_count() const { return operand_count() / 2; }
};

// fft, fft_type=FFT, fft_length={...}
struct FftAttrs {
  FftType fft_type = FFT;
  std::vector<int64_t> fft_length;
};
class HloFftInstruction : public HloInstructionWith<HloFftInstruction, FftAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kFft)
  FftType fft_type() const { return attrs_.fft_type; }
  const std::vector<int64_t>& fft_length() const { return attrs_.fft_length; }
};

// rng, distribution=rng_uniform
struct RngAttrs {
  RandomDistribution distribution = RNG_UNIFORM;
};
class HloRngInstruction : public HloInstructionWith<HloRngInstruction, RngAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kRng)
  RandomDistribution random_distribution() const { return attrs_.distribution; }
};

// rng-bit-generator, algorithm=rng_default
struct RngBitGeneratorAttrs {
  RandomAlgorithm algorithm = RNG_DEFAULT;
};
class HloRngBitGeneratorInstruction
    : public HloInstructionWith<HloRngBitGeneratorInstruction, RngBitGeneratorAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kRngBitGenerator)
  RandomAlgorithm algorithm() const { return attrs_.algorithm; }
};

// triangular-solve
struct TriangularSolveAttrs {
  TriangularSolveOptions options;
};
class HloTriangularSolveInstruction
    : public HloInstructionWith<HloTriangularSolveInstruction, TriangularSolveAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kTriangularSolve)
  const TriangularSolveOptions& triangular_solve_options() const { return attrs_.options; }
};

// cholesky, lower=true
struct CholeskyAttrs {
  CholeskyOptions options;
};
class HloCholeskyInstruction : public HloInstructionWith<HloCholeskyInstruction, CholeskyAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kCholesky)
  const CholeskyOptions& cholesky_options() const { return attrs_.options; }
};

// reduce-precision, exponent_bits=E, mantissa_bits=M
struct ReducePrecisionAttrs {
  int32_t exponent_bits = 0;
  int32_t mantissa_bits = 0;
};
class HloReducePrecisionInstruction
    : public HloInstructionWith<HloReducePrecisionInstruction, ReducePrecisionAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kReducePrecision)
  int32_t exponent_bits() const { return attrs_.exponent_bits; }
  int32_t mantissa_bits() const { return attrs_.mantissa_bits; }
};

// batch-norm-{training,inference,grad}: epsilon, feature_index
struct BatchNormAttrs {
  float epsilon = 0;
  int64_t feature_index = 0;
};
class HloBatchNormInstruction : public HloInstructionWith<HloBatchNormInstruction, BatchNormAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kBatchNormTraining, HloOpcode::kBatchNormInference,
                    HloOpcode::kBatchNormGrad)
  float epsilon() const { return attrs_.epsilon; }
  int64_t feature_index() const { return attrs_.feature_index; }
};

// One `output_to_operand_aliasing` entry: output index -> (operand, index).
struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

// custom-call
struct CustomCallAttrs {
  std::string custom_call_target;
  std::string opaque;
  CustomCallApiVersion api_version = API_VERSION_ORIGINAL;
  bool custom_call_has_side_effect = false;
  std::vector<OutputOperandAlias> output_to_operand_aliasing;
  std::optional<std::vector<Shape>> operand_layout_constraints;
  CustomCallSchedule schedule = SCHEDULE_NONE;
  std::optional<Literal> literal;
  // Convolution-like custom calls (cuDNN) carry these.
  std::optional<Window> window;
  std::optional<ConvolutionDimensionNumbers> convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  PrecisionConfig precision_config;
};
class HloCustomCallInstruction
    : public HloInstructionWith<HloCustomCallInstruction, CustomCallAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kCustomCall)
  const std::string& custom_call_target() const { return attrs_.custom_call_target; }
  // The bytes handed to the target: `opaque="..."` when given, otherwise the
  // backend config string (where XLA's builder puts a custom call's opaque).
  const std::string& opaque() const {
    return attrs_.opaque.empty() ? raw_backend_config_string() : attrs_.opaque;
  }
  CustomCallApiVersion api_version() const { return attrs_.api_version; }
  bool custom_call_has_side_effect() const { return attrs_.custom_call_has_side_effect; }
  const std::vector<OutputOperandAlias>& output_to_operand_aliasing() const {
    return attrs_.output_to_operand_aliasing;
  }
};

// fusion, kind=kLoop, calls=fused_computation
enum class FusionKind { kLoop, kInput, kOutput, kCustom };
struct FusionAttrs {
  FusionKind kind = FusionKind::kLoop;
};
class HloFusionInstruction : public HloInstructionWith<HloFusionInstruction, FusionAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kFusion)
  FusionKind fusion_kind() const { return attrs_.kind; }
  HloComputation* fused_instructions_computation() const { return called_computations().at(0); }
};

// Replica groups in XLA's compact iota form: `[num_groups,group_size]<=[dims]T(perm)`.
struct IotaReplicaGroupList {
  int64_t num_groups = 0;
  int64_t group_size = 0;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;  // empty: identity
  bool operator==(const IotaReplicaGroupList&) const = default;
  // Expands to explicit groups.
  std::vector<ReplicaGroup> Expand() const;
  std::string ToString() const;
};

// Every collective but the `-done` halves: all-reduce(-start), all-gather
// (-start), all-to-all, ragged-all-to-all, reduce-scatter, collective-permute
// (-start), collective-broadcast.
struct CollectiveAttrs {
  std::vector<ReplicaGroup> replica_groups;
  std::optional<IotaReplicaGroupList> iota_replica_groups;  // printed instead when set
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  std::vector<int64_t> dimensions;  // all-gather, all-to-all, reduce-scatter
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;  // collective-permute
};
class HloCollectiveInstruction
    : public HloInstructionWith<HloCollectiveInstruction, CollectiveAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  // The `-done` halves carry no attributes: they are plain instructions.
  static bool ClassOf(const HloInstruction* instruction) {
    return HloOpcodeIsCollective(instruction->opcode()) &&
           !HloOpcodeIsAsyncDone(instruction->opcode());
  }
  const std::vector<ReplicaGroup>& replica_groups() const { return attrs_.replica_groups; }
  const std::optional<int64_t>& channel_id() const { return attrs_.channel_id; }
};

// send, recv, send-done, recv-done: channel_id, is_host_transfer
struct SendRecvAttrs {
  std::optional<int64_t> channel_id;
  bool is_host_transfer = false;
};
class HloSendRecvInstruction : public HloInstructionWith<HloSendRecvInstruction, SendRecvAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kSend, HloOpcode::kRecv, HloOpcode::kSendDone, HloOpcode::kRecvDone)
  const std::optional<int64_t>& channel_id() const { return attrs_.channel_id; }
  bool is_host_transfer() const { return attrs_.is_host_transfer; }
};

// infeed (infeed_config="..."), outfeed (outfeed_config, outfeed_shape)
struct FeedAttrs {
  std::string config;
  std::optional<Shape> outfeed_shape;
};
class HloFeedInstruction : public HloInstructionWith<HloFeedInstruction, FeedAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kInfeed, HloOpcode::kOutfeed)
};

// topk, k=N, largest=true
struct TopKAttrs {
  int64_t k = 0;
  bool largest = true;
};
class HloTopKInstruction : public HloInstructionWith<HloTopKInstruction, TopKAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kTopK)
  int64_t k() const { return attrs_.k; }
  bool largest() const { return attrs_.largest; }
};

// scan: dimensions={d}, num_carries, is_reverse, is_associative, to_apply
struct ScanAttrs {
  std::vector<int64_t> dimensions;
  int64_t num_carries = 0;
  bool is_reverse = false;
  std::optional<bool> is_associative;
};
class HloScanInstruction : public HloInstructionWith<HloScanInstruction, ScanAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kScan)
};

// async-start / async-update / async-done: the wrapped computation is the
// called computation; async_execution_thread defaults to "main".
struct AsyncAttrs {
  std::string async_execution_thread = "main";
};
class HloAsyncInstruction : public HloInstructionWith<HloAsyncInstruction, AsyncAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kAsyncStart, HloOpcode::kAsyncUpdate, HloOpcode::kAsyncDone)
  HloComputation* async_wrapped_computation() const { return called_computations().at(0); }
  const std::string& async_execution_thread() const { return attrs_.async_execution_thread; }
};

// copy-start, cross_program_prefetch_index=N
struct CopyStartAttrs {
  std::optional<int64_t> cross_program_prefetch_index;
};
class HloCopyStartInstruction : public HloInstructionWith<HloCopyStartInstruction, CopyStartAttrs> {
 public:
  using HloInstructionWith::HloInstructionWith;
  AXLE_HLO_CLASS_OF(HloOpcode::kCopyStart)
};

#undef AXLE_HLO_CLASS_OF

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_INSTRUCTIONS_H_
