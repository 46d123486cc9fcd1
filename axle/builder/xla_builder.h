//===- xla_builder.h - XLA's client API for building computations ----------===//
//
// XlaBuilder, XlaOp and the free functions that enqueue operations (Add,
// Dot, Reduce, While, CustomCall, ...), with XLA's names and signatures
// (xla/hlo/builder/xla_builder.h), so that code written against XLA's
// builder compiles against Axle through the forwarding headers in
// compat/include.
//
// How it works:
//   * A builder keeps the instructions it has enqueued in one computation; an
//     XlaOp is a handle (an index) into it. Every op's result shape comes from
//     ShapeInference; binary ops insert the broadcasts XLA's builder inserts
//     (scalars, `broadcast_dimensions`, degenerate size-1 dimensions).
//   * Errors are recorded, not thrown: the first bad call stores its status
//     (prefixed with the op's name, e.g. "Add: Binary op add with
//     incompatible shapes: f32[2] and f32[3]."), returns an invalid XlaOp, and
//     every later op returns an invalid XlaOp too; Build() returns the first
//     error. No input crashes the builder.
//   * Computations passed to ops (to_apply, while bodies, branches, ...) are
//     XlaComputations built by other builders; the first use copies their
//     computations into this builder (embedded computations) under fresh
//     unique names.
//   * Build() copies everything into a new HloModule (the builder stays
//     usable), adds the aliases of SetUpAlias / AddBufferDonor to its config
//     after checking them against the program shape, and verifies it.
//
// Instruction names: parameters keep the name given to Parameter(), other
// instructions are named after their opcode; names are made unique with
// ".N" suffixes ("add", "add.1", ...).
//
// The op functions are implemented by family in xla_builder_*.cc.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BUILDER_XLA_BUILDER_H_
#define AXLE_BUILDER_XLA_BUILDER_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/builder/padding.h"
#include "axle/builder/xla_computation.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/core/shape_util.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/ir/hlo_module_config.h"

namespace axle {

class XlaBuilder;

// XLA's `Comparison::Type` for Compare(..., compare_type).
struct Comparison {
  using Type = ComparisonType;
};

// An operation enqueued on an XlaBuilder: a handle into it. Cheap to copy.
class XlaOp {
 public:
  XlaOp() = default;

  // The builder that made this op (also for invalid ops); null for a
  // default-constructed XlaOp.
  XlaBuilder* builder() const { return builder_; }
  // False for the invalid op returned after an error.
  bool valid() const { return handle_ >= 0; }
  bool IsUninitialized() const { return builder_ == nullptr; }
  bool IsIdenticalTo(XlaOp rhs) const { return handle_ == rhs.handle_ && builder_ == rhs.builder_; }

  friend std::ostream& operator<<(std::ostream& out, XlaOp op) { return out << op.handle_; }

 private:
  friend class XlaBuilder;
  XlaOp(int64_t handle, XlaBuilder* builder) : handle_(handle), builder_(builder) {}
  int64_t handle() const { return handle_; }

  int64_t handle_ = -1;  // < 0: invalid
  XlaBuilder* builder_ = nullptr;
};

// Arithmetic and bitwise operators, as XLA defines them. `>>` is an
// arithmetic shift for signed types and a logical one otherwise.
XlaOp operator-(XlaOp x);
XlaOp operator+(XlaOp x, XlaOp y);
XlaOp operator-(XlaOp x, XlaOp y);
XlaOp operator*(XlaOp x, XlaOp y);
XlaOp operator/(XlaOp x, XlaOp y);
XlaOp operator%(XlaOp x, XlaOp y);
XlaOp operator~(XlaOp x);
XlaOp operator&(XlaOp x, XlaOp y);
XlaOp operator|(XlaOp x, XlaOp y);
XlaOp operator^(XlaOp x, XlaOp y);
XlaOp operator<<(XlaOp x, XlaOp y);
XlaOp operator>>(XlaOp x, XlaOp y);

class XlaBuilder {
 public:
  explicit XlaBuilder(const std::string& computation_name);
  XlaBuilder(const XlaBuilder&) = delete;
  XlaBuilder& operator=(const XlaBuilder&) = delete;
  virtual ~XlaBuilder();

  const std::string& name() const { return name_; }

  // --- Attributes attached to every op enqueued from now on ------------------
  void SetOpMetadata(OpMetadata metadata) { metadata_ = std::move(metadata); }
  OpMetadata SwapOpMetadata(OpMetadata metadata) {
    return std::exchange(metadata_, std::move(metadata));
  }
  // Only for the next op.
  void SetOneShotOpMetadata(OpMetadata metadata) { one_shot_metadata_ = std::move(metadata); }
  void ClearOpMetadata() { metadata_ = OpMetadata(); }
  void SetSharding(const HloSharding& sharding) { sharding_ = sharding; }
  std::optional<HloSharding> SwapSharding(std::optional<HloSharding> sharding) {
    return std::exchange(sharding_, std::move(sharding));
  }
  void ClearSharding() { sharding_.reset(); }
  const std::optional<HloSharding>& sharding() const { return sharding_; }
  void SetFrontendAttributes(const FrontendAttributes& attributes) {
    frontend_attributes_ = attributes;
  }
  FrontendAttributes SwapFrontendAttributes(const FrontendAttributes& attributes) {
    return std::exchange(frontend_attributes_, attributes);
  }
  const FrontendAttributes& frontend_attributes() const { return frontend_attributes_; }
  void ClearFrontendAttributes() { frontend_attributes_.clear(); }
  // Sets one frontend attribute / the sharding of an op already enqueued.
  absl::Status SetInstructionFrontendAttribute(XlaOp op, std::string attribute, std::string value);
  absl::Status SetInstructionSharding(XlaOp op, const std::optional<HloSharding>& sharding);

  // Default convolution dimension numbers: input {batch, feature, spatial...}
  // = {0, 1, 2, ...}, kernel {output feature, input feature, spatial...}.
  static constexpr int64_t kConvBatchDimension = 0;
  static constexpr int64_t kConvFeatureDimension = 1;
  static constexpr int64_t kConvFirstSpatialDimension = 2;
  static constexpr int64_t kConvSecondSpatialDimension = 3;
  static constexpr int64_t kConvKernelOutputDimension = 0;
  static constexpr int64_t kConvKernelInputDimension = 1;
  static constexpr int64_t kConvKernelFirstSpatialDimension = 2;
  static constexpr int64_t kConvKernelSecondSpatialDimension = 3;
  static ConvolutionDimensionNumbers CreateDefaultConvDimensionNumbers(int num_spatial_dims = 2);
  // Fails when the dimension numbers use a dimension twice.
  static absl::Status Validate(const ConvolutionDimensionNumbers& dnum);

  // A builder for a computation used by this one (a reduction, a loop
  // body, ...). Its Build() result is passed to the op that uses it.
  std::unique_ptr<XlaBuilder> CreateSubBuilder(const std::string& computation_name);

  // --- Building ---------------------------------------------------------------
  // The computation rooted at the last op enqueued, or at `root`; or the first
  // error recorded. `remove_dynamic_dimensions` is accepted for XLA
  // compatibility and has no effect.
  absl::StatusOr<XlaComputation> Build(bool remove_dynamic_dimensions = false);
  absl::StatusOr<XlaComputation> Build(XlaOp root, bool remove_dynamic_dimensions = false);
  // Build(), but on failure the error is recorded in the parent builder (of
  // a sub-builder) and a null computation returned.
  XlaComputation BuildAndNoteError();

  // --- Errors -----------------------------------------------------------------
  absl::Status first_error() const { return first_error_; }
  absl::Status GetCurrentStatus() const { return first_error_; }
  // Records `error` if it is the first one; returns an invalid XlaOp.
  XlaOp ReportError(const absl::Status& error);
  XlaOp ReportErrorOrReturn(const absl::StatusOr<XlaOp>& op);
  XlaOp ReportErrorOrReturn(absl::FunctionRef<absl::StatusOr<XlaOp>()> op_creator);
  // The same, prefixing a failure's message with `op_name` ("Add: ...").
  XlaOp ReportErrorOrReturn(absl::string_view op_name,
                            absl::FunctionRef<absl::StatusOr<XlaOp>()> op_creator);

  // --- Queries ----------------------------------------------------------------
  absl::StatusOr<Shape> GetShape(XlaOp op) const;
  absl::StatusOr<const Shape*> GetShapePtr(XlaOp op) const;
  absl::StatusOr<std::vector<Shape>> GetOperandShapes(absl::Span<const XlaOp> operands) const;
  // Parameter shapes and the shape of the last op (or of `root`).
  absl::StatusOr<ProgramShape> GetProgramShape() const;
  absl::StatusOr<ProgramShape> GetProgramShape(XlaOp root) const;
  // True when `operand` depends on no parameter and no random or
  // side-effecting op.
  absl::StatusOr<bool> IsConstant(XlaOp operand) const;
  // The op's instruction as one line of HLO text.
  std::string OpToString(XlaOp op) const;

  // --- Aliasing (checked at Build()) -----------------------------------------
  // Output `output_index` may (or must) live in the buffer of parameter
  // `param_number` at `param_index`.
  void SetUpAlias(
      const ShapeIndex& output_index, int64_t param_number, const ShapeIndex& param_index,
      HloInputOutputAliasConfig::AliasKind kind = HloInputOutputAliasConfig::AliasKind::kMayAlias) {
    input_output_aliases_.push_back({output_index, param_number, param_index, kind});
  }
  struct InputOutputAlias {
    ShapeIndex output_index;
    int64_t param_number;
    ShapeIndex param_index;
    HloInputOutputAliasConfig::AliasKind kind;
  };
  // The buffer of parameter `param_number` at `param_index` may be reused
  // for any output of the same shape.
  void AddBufferDonor(int64_t param_number, const ShapeIndex& param_index) {
    buffer_donors_.insert({param_number, param_index});
  }

  // --- Construction (Axle; used by the op functions) --------------------------
  // The instruction of `op`, checking that it belongs to this builder.
  absl::StatusOr<HloInstruction*> LookUpInstruction(XlaOp op) const;
  absl::StatusOr<std::vector<HloInstruction*>> LookUpInstructions(
      absl::Span<const XlaOp> ops) const;
  // Names `instruction`, attaches the current metadata, sharding and
  // frontend attributes, and enqueues it. Its operands must be instructions
  // of this builder.
  XlaOp AddInstruction(std::unique_ptr<HloInstruction> instruction);
  // The computation of `computation` embedded in this builder (copied on its
  // first use, with fresh names); errors for a null computation.
  absl::StatusOr<HloComputation*> AddSubComputation(const XlaComputation& computation);
  // Enqueues a parameter (used by Parameter()).
  XlaOp Parameter(int64_t parameter_number, const Shape& shape, const std::string& name,
                  const std::vector<bool>& replicated_at_leaf_buffers);

 private:
  absl::StatusOr<XlaComputation> BuildImpl(int64_t root_handle);
  absl::Status CheckOpBuilder(XlaOp op) const;
  absl::Status CheckAliases(const HloComputation& entry) const;
  std::string UniqueName(absl::string_view prefix);

  std::string name_;
  XlaBuilder* parent_builder_ = nullptr;
  // The instructions enqueued, in order; handle i is ops_[i].
  std::unique_ptr<HloComputation> body_;
  std::vector<HloInstruction*> ops_;
  std::map<int64_t, HloInstruction*> parameters_;
  // Embedded computations, callees before callers, and the copy of each
  // XlaComputation's entry by its unique id.
  std::vector<std::unique_ptr<HloComputation>> embedded_;
  absl::flat_hash_map<int64_t, HloComputation*> embedded_by_id_;
  // Names in use in the module being built, and the next suffix per prefix.
  absl::flat_hash_map<std::string, int64_t> name_suffixes_;
  std::set<std::string> used_names_;

  std::vector<InputOutputAlias> input_output_aliases_;
  std::set<std::pair<int64_t, ShapeIndex>> buffer_donors_;

  absl::Status first_error_;
  OpMetadata metadata_;
  std::optional<OpMetadata> one_shot_metadata_;
  std::optional<HloSharding> sharding_;
  FrontendAttributes frontend_attributes_;
};

// ===== Free functions: XLA's public API for enqueueing ops ===================

// --- Parameters and constants ------------------------------------------------
XlaOp Parameter(XlaBuilder* builder, int64_t parameter_number, const Shape& shape,
                const std::string& name);
XlaOp Parameter(XlaBuilder* builder, int64_t parameter_number, const Shape& shape,
                const std::string& name, const std::vector<bool>& replicated_at_leaf_buffers);

XlaOp ConstantLiteral(XlaBuilder* builder, const Literal& literal);
template <typename NativeT>
XlaOp ConstantR0(XlaBuilder* builder, NativeT value) {
  return ConstantLiteral(builder, LiteralUtil::CreateR0<NativeT>(value));
}
template <typename NativeT>
XlaOp ConstantR1(XlaBuilder* builder, absl::Span<const NativeT> values) {
  return ConstantLiteral(builder, LiteralUtil::CreateR1<NativeT>(values));
}
// `length` copies of `value`.
template <typename NativeT>
XlaOp ConstantR1(XlaBuilder* builder, int64_t length, NativeT value) {
  std::vector<NativeT> values(length > 0 ? length : 0, value);
  return ConstantLiteral(builder,
                         LiteralUtil::CreateR1<NativeT>(absl::Span<const NativeT>(values)));
}
template <typename NativeT>
XlaOp ConstantR2(XlaBuilder* builder, std::initializer_list<std::initializer_list<NativeT>> values);
// Row-major `values` of the given dimensions (Axle's stand-in for XLA's
// ConstantFromArray, which takes an xla::Array).
template <typename NativeT>
XlaOp ConstantFromArray(XlaBuilder* builder, absl::Span<const int64_t> dimensions,
                        absl::Span<const NativeT> values);

// Scalars of `type` (lib/constants.h in XLA).
XlaOp Zero(XlaBuilder* builder, PrimitiveType type);
XlaOp Zeros(XlaBuilder* builder, const Shape& shape);
XlaOp One(XlaBuilder* builder, PrimitiveType type);
XlaOp MinValue(XlaBuilder* builder, PrimitiveType type);
XlaOp MaxValue(XlaBuilder* builder, PrimitiveType type);

// --- Elementwise unary ---------------------------------------------------------
XlaOp Abs(XlaOp operand);
XlaOp Neg(XlaOp operand);
XlaOp Exp(XlaOp operand);
XlaOp Expm1(XlaOp operand);
XlaOp Log(XlaOp operand);
XlaOp Log1p(XlaOp operand);
XlaOp Logistic(XlaOp operand);
XlaOp Sqrt(XlaOp operand);
XlaOp Rsqrt(XlaOp operand);
XlaOp Cbrt(XlaOp operand);
XlaOp Tanh(XlaOp operand);
XlaOp Tan(XlaOp operand);
XlaOp Acos(XlaOp operand);
XlaOp Acosh(XlaOp operand);
XlaOp Asin(XlaOp operand);
XlaOp Asinh(XlaOp operand);
XlaOp Atan(XlaOp operand);
XlaOp Atanh(XlaOp operand);
XlaOp Cosh(XlaOp operand);
XlaOp Sinh(XlaOp operand);
XlaOp Sin(XlaOp operand);
XlaOp Cos(XlaOp operand);
XlaOp Erf(XlaOp operand);
XlaOp Floor(XlaOp operand);
XlaOp Ceil(XlaOp operand);
// Halfway cases away from zero.
XlaOp Round(XlaOp operand);
XlaOp RoundNearestEven(XlaOp operand);
XlaOp Sign(XlaOp operand);
XlaOp Not(XlaOp operand);
XlaOp Clz(XlaOp operand);
XlaOp PopulationCount(XlaOp operand);
XlaOp IsFinite(XlaOp operand);
XlaOp Real(XlaOp operand);
XlaOp Imag(XlaOp operand);
// Complex conjugate: Complex(Real(x), -Imag(x)).
XlaOp Conj(XlaOp operand);
XlaOp Square(XlaOp operand);  // x * x
XlaOp Copy(XlaOp operand);
XlaOp OptimizationBarrier(XlaOp operand);
XlaOp ReducePrecision(XlaOp operand, int exponent_bits, int mantissa_bits);

// --- Elementwise binary (with XLA's implicit broadcasting) ----------------------
// Operands of equal rank must have equal dimensions, except that size-1
// dimensions broadcast; a scalar broadcasts to the other operand; otherwise
// dimension i of the lower-rank operand maps to dimension
// broadcast_dimensions[i] of the higher-rank one.
XlaOp Add(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Sub(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Mul(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Div(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Rem(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Max(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Min(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Pow(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Atan2(XlaOp y, XlaOp x, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Complex(XlaOp real, XlaOp imag, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp And(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
inline XlaOp And(XlaOp op1, XlaOp op2, XlaOp op3) { return And(op1, And(op2, op3)); }
template <typename... XlaOpTs>
XlaOp And(XlaOp op1, XlaOp op2, XlaOp op3, const XlaOpTs&... operands) {
  return And(op1, And(op2, And(op3, operands...)));
}
XlaOp Or(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
inline XlaOp Or(XlaOp op1, XlaOp op2, XlaOp op3) { return Or(op1, Or(op2, op3)); }
template <typename... XlaOpTs>
XlaOp Or(XlaOp op1, XlaOp op2, XlaOp op3, const XlaOpTs&... operands) {
  return Or(op1, Or(op2, Or(op3, operands...)));
}
XlaOp Xor(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp ShiftLeft(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp ShiftRightArithmetic(XlaOp lhs, XlaOp rhs,
                           absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp ShiftRightLogical(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});

// --- Comparisons ---------------------------------------------------------------
XlaOp Eq(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Ne(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Ge(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Gt(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Lt(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Le(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
// The same with the total order on floats (-NaN < -inf < ... < +inf < +NaN).
XlaOp EqTotalOrder(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp NeTotalOrder(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp GeTotalOrder(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp GtTotalOrder(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp LtTotalOrder(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp LeTotalOrder(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions = {});
XlaOp Compare(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions,
              ComparisonDirection direction, Comparison::Type compare_type);
XlaOp Compare(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> broadcast_dimensions,
              ComparisonDirection direction);
XlaOp Compare(XlaOp lhs, XlaOp rhs, ComparisonDirection direction);

// --- Select, clamp, conversions --------------------------------------------------
// Scalar operands broadcast to the shape of the others.
XlaOp Select(XlaOp pred, XlaOp on_true, XlaOp on_false);
XlaOp Clamp(XlaOp min, XlaOp operand, XlaOp max);
XlaOp ConvertElementType(XlaOp operand, PrimitiveType new_element_type);
XlaOp BitcastConvertType(XlaOp operand, PrimitiveType new_element_type);
XlaOp StochasticConvertType(XlaOp operand, XlaOp random, PrimitiveType new_element_type);

// --- Shapes and data movement ------------------------------------------------------
XlaOp Iota(XlaBuilder* builder, const Shape& shape, int64_t iota_dimension);
XlaOp Iota(XlaBuilder* builder, PrimitiveType type, int64_t size);
// New major dimensions of sizes `broadcast_sizes`.
XlaOp Broadcast(XlaOp operand, absl::Span<const int64_t> broadcast_sizes);
// Operand dimension i becomes output dimension broadcast_dimensions[i]
// (equal size, or 1 and broadcast).
XlaOp BroadcastInDim(XlaOp operand, absl::Span<const int64_t> out_dim_size,
                     absl::Span<const int64_t> broadcast_dimensions);
XlaOp Reshape(XlaOp operand, absl::Span<const int64_t> dimensions);
XlaOp Reshape(const Shape& shape, XlaOp operand);
XlaOp ReshapeWithInferredDimension(XlaOp operand, absl::Span<const int64_t> new_sizes,
                                   int64_t inferred_dimension);
// Merges the consecutive, in-order dimensions `dimensions` into one.
XlaOp Collapse(XlaOp operand, absl::Span<const int64_t> dimensions);
XlaOp Transpose(XlaOp operand, absl::Span<const int64_t> permutation);
XlaOp Rev(XlaOp operand, absl::Span<const int64_t> dimensions);
XlaOp Slice(XlaOp operand, absl::Span<const int64_t> start_indices,
            absl::Span<const int64_t> limit_indices, absl::Span<const int64_t> strides);
XlaOp SliceInDim(XlaOp operand, int64_t start_index, int64_t limit_index, int64_t stride,
                 int64_t dimno);
XlaOp DynamicSlice(XlaOp operand, absl::Span<const XlaOp> start_indices,
                   absl::Span<const int64_t> slice_sizes);
XlaOp DynamicUpdateSlice(XlaOp operand, XlaOp update, absl::Span<const XlaOp> start_indices);
XlaOp ConcatInDim(XlaBuilder* builder, absl::Span<const XlaOp> operands, int64_t dimension);
XlaOp Pad(XlaOp operand, XlaOp padding_value, const PaddingConfig& padding_config);
XlaOp PadInDim(XlaOp operand, XlaOp padding_value, int64_t dimno, int64_t pad_lo, int64_t pad_hi);
XlaOp Tuple(XlaBuilder* builder, absl::Span<const XlaOp> elements);
XlaOp GetTupleElement(XlaOp tuple_data, int64_t index);
XlaOp Gather(XlaOp input, XlaOp start_indices, const GatherDimensionNumbers& dimension_numbers,
             absl::Span<const int64_t> slice_sizes, bool indices_are_sorted = false);
XlaOp Scatter(XlaOp input, XlaOp scatter_indices, XlaOp updates,
              const XlaComputation& update_computation,
              const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,
              bool unique_indices = false);
XlaOp Scatter(absl::Span<const XlaOp> inputs, XlaOp scatter_indices,
              absl::Span<const XlaOp> updates, const XlaComputation& update_computation,
              const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,
              bool unique_indices = false);
XlaOp GetDimensionSize(XlaOp operand, int64_t dimension);
XlaOp SetDimensionSize(XlaOp operand, XlaOp val, int64_t dimension);

// --- Linear algebra ------------------------------------------------------------------
XlaOp Dot(XlaOp lhs, XlaOp rhs, const PrecisionConfig* precision_config = nullptr,
          std::optional<PrimitiveType> preferred_element_type = std::nullopt);
XlaOp DotGeneral(XlaOp lhs, XlaOp rhs, const DotDimensionNumbers& dimension_numbers,
                 const PrecisionConfig* precision_config = nullptr,
                 std::optional<PrimitiveType> preferred_element_type = std::nullopt);
XlaOp Conv(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides, Padding padding,
           int64_t feature_group_count = 1, int64_t batch_group_count = 1,
           const PrecisionConfig* precision_config = nullptr,
           std::optional<PrimitiveType> preferred_element_type = std::nullopt);
XlaOp ConvWithGeneralPadding(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                             absl::Span<const std::pair<int64_t, int64_t>> padding,
                             int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                             const PrecisionConfig* precision_config = nullptr,
                             std::optional<PrimitiveType> preferred_element_type = std::nullopt);
XlaOp ConvWithGeneralDimensions(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                                Padding padding,
                                const ConvolutionDimensionNumbers& dimension_numbers,
                                int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                                const PrecisionConfig* precision_config = nullptr,
                                std::optional<PrimitiveType> preferred_element_type = std::nullopt);
XlaOp ConvGeneral(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                  absl::Span<const std::pair<int64_t, int64_t>> padding,
                  const ConvolutionDimensionNumbers& dimension_numbers,
                  int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                  const PrecisionConfig* precision_config = nullptr,
                  std::optional<PrimitiveType> preferred_element_type = std::nullopt);
XlaOp ConvGeneralDilated(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                         absl::Span<const std::pair<int64_t, int64_t>> padding,
                         absl::Span<const int64_t> lhs_dilation,
                         absl::Span<const int64_t> rhs_dilation,
                         const ConvolutionDimensionNumbers& dimension_numbers,
                         int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                         const PrecisionConfig* precision_config = nullptr,
                         std::optional<PrimitiveType> preferred_element_type = std::nullopt,
                         std::optional<std::vector<bool>> window_reversal = std::nullopt);
XlaOp Fft(XlaOp operand, FftType fft_type, absl::Span<const int64_t> fft_length);
XlaOp Cholesky(XlaOp a, bool lower);
XlaOp TriangularSolve(XlaOp a, XlaOp b, bool left_side, bool lower, bool unit_diagonal,
                      TriangularSolveOptions::Transpose transpose_a);
XlaOp BatchNormTraining(XlaOp operand, XlaOp scale, XlaOp offset, float epsilon,
                        int64_t feature_index);
XlaOp BatchNormInference(XlaOp operand, XlaOp scale, XlaOp offset, XlaOp mean, XlaOp variance,
                         float epsilon, int64_t feature_index);
XlaOp BatchNormGrad(XlaOp operand, XlaOp scale, XlaOp batch_mean, XlaOp batch_var,
                    XlaOp grad_output, float epsilon, int64_t feature_index);

// --- Ops with computations -------------------------------------------------------------
XlaOp Reduce(XlaOp operand, XlaOp init_value, const XlaComputation& computation,
             absl::Span<const int64_t> dimensions_to_reduce);
XlaOp Reduce(XlaBuilder* builder, absl::Span<const XlaOp> operands,
             absl::Span<const XlaOp> init_values, const XlaComputation& computation,
             absl::Span<const int64_t> dimensions_to_reduce);
XlaOp ReduceAll(XlaOp operand, XlaOp init_value, const XlaComputation& computation);
XlaOp ReduceWindow(XlaOp operand, XlaOp init_value, const XlaComputation& computation,
                   absl::Span<const int64_t> window_dimensions,
                   absl::Span<const int64_t> window_strides, Padding padding);
XlaOp ReduceWindow(absl::Span<const XlaOp> operands, absl::Span<const XlaOp> init_values,
                   const XlaComputation& computation, absl::Span<const int64_t> window_dimensions,
                   absl::Span<const int64_t> window_strides, Padding padding);
XlaOp ReduceWindowWithGeneralPadding(XlaOp operand, XlaOp init_value,
                                     const XlaComputation& computation,
                                     absl::Span<const int64_t> window_dimensions,
                                     absl::Span<const int64_t> window_strides,
                                     absl::Span<const int64_t> base_dilations,
                                     absl::Span<const int64_t> window_dilations,
                                     absl::Span<const std::pair<int64_t, int64_t>> padding);
XlaOp ReduceWindowWithGeneralPadding(absl::Span<const XlaOp> operands,
                                     absl::Span<const XlaOp> init_values,
                                     const XlaComputation& computation,
                                     absl::Span<const int64_t> window_dimensions,
                                     absl::Span<const int64_t> window_strides,
                                     absl::Span<const int64_t> base_dilations,
                                     absl::Span<const int64_t> window_dilations,
                                     absl::Span<const std::pair<int64_t, int64_t>> padding);
XlaOp SelectAndScatter(XlaOp operand, const XlaComputation& select,
                       absl::Span<const int64_t> window_dimensions,
                       absl::Span<const int64_t> window_strides, Padding padding, XlaOp source,
                       XlaOp init_value, const XlaComputation& scatter);
XlaOp SelectAndScatterWithGeneralPadding(XlaOp operand, const XlaComputation& select,
                                         absl::Span<const int64_t> window_dimensions,
                                         absl::Span<const int64_t> window_strides,
                                         absl::Span<const std::pair<int64_t, int64_t>> padding,
                                         XlaOp source, XlaOp init_value,
                                         const XlaComputation& scatter);
// `static_operands` must be empty (as in XLA).
XlaOp Map(XlaBuilder* builder, absl::Span<const XlaOp> operands, const XlaComputation& computation,
          absl::Span<const int64_t> dimensions, absl::Span<const XlaOp> static_operands = {});
// `dimension` -1 sorts along the last dimension.
XlaOp Sort(absl::Span<const XlaOp> operands, const XlaComputation& comparator,
           int64_t dimension = -1, bool is_stable = false);
XlaOp TopK(XlaOp operand, int64_t k, bool largest);
XlaOp While(const XlaComputation& condition, const XlaComputation& body, XlaOp init);
XlaOp Conditional(XlaOp predicate, XlaOp true_operand, const XlaComputation& true_computation,
                  XlaOp false_operand, const XlaComputation& false_computation);
// Branch `branch_index` (s32; out of range runs the last branch).
XlaOp Conditional(XlaOp branch_index, absl::Span<const XlaComputation* const> branch_computations,
                  absl::Span<const XlaOp> branch_operands);
XlaOp Call(XlaBuilder* builder, const XlaComputation& computation,
           absl::Span<const XlaOp> operands);

// --- Random numbers ------------------------------------------------------------------------
XlaOp RngNormal(XlaOp mu, XlaOp sigma, const Shape& shape);
// Uniform in [a, b).
XlaOp RngUniform(XlaOp a, XlaOp b, const Shape& shape);
// (new state, random bits of `shape`).
XlaOp RngBitGenerator(RandomAlgorithm algorithm, XlaOp initial_state, const Shape& shape);

// --- Tokens --------------------------------------------------------------------------------
XlaOp CreateToken(XlaBuilder* builder);
// Joins one or more tokens.
XlaOp AfterAll(XlaBuilder* builder, absl::Span<const XlaOp> tokens);

// --- Custom calls --------------------------------------------------------------------------
// Calls the target registered as `call_target_name`. `opaque` is handed to
// the target (it is the instruction's backend_config); each aliasing entry
// (output index, (operand number, operand index)) lets an output live in an
// operand's buffer.
using CustomCallOutputOperandAliasing = std::pair<ShapeIndex, std::pair<int64_t, ShapeIndex>>;
XlaOp CustomCall(XlaBuilder* builder, const std::string& call_target_name,
                 absl::Span<const XlaOp> operands, const Shape& shape,
                 const std::string& opaque = "", bool has_side_effect = false,
                 absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing = {},
                 const Literal* literal = nullptr,
                 CustomCallSchedule schedule = CustomCallSchedule::SCHEDULE_NONE,
                 CustomCallApiVersion api_version = API_VERSION_ORIGINAL);
// The same with the computation `computation` attached (called_computations).
XlaOp CustomCallWithComputation(
    XlaBuilder* builder, const std::string& call_target_name, absl::Span<const XlaOp> operands,
    const XlaComputation& computation, const Shape& shape, const std::string& opaque = "",
    bool has_side_effect = false,
    absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing = {},
    const Literal* literal = nullptr,
    CustomCallSchedule schedule = CustomCallSchedule::SCHEDULE_NONE,
    CustomCallApiVersion api_version = API_VERSION_ORIGINAL);
// Fixed layouts: `shape_with_layout` and every operand shape must have one.
XlaOp CustomCallWithLayout(
    XlaBuilder* builder, const std::string& call_target_name, absl::Span<const XlaOp> operands,
    const Shape& shape_with_layout, absl::Span<const Shape> operand_shapes_with_layout,
    const std::string& opaque = "", bool has_side_effect = false,
    absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing = {},
    const Literal* literal = nullptr,
    CustomCallSchedule schedule = CustomCallSchedule::SCHEDULE_NONE,
    CustomCallApiVersion api_version = API_VERSION_ORIGINAL);
// A convolution-like custom call carrying a window and dimension numbers.
XlaOp CustomCallWithConvDnums(
    XlaBuilder* builder, const std::string& call_target_name, absl::Span<const XlaOp> operands,
    const Shape& shape, absl::Span<const Shape> operand_shapes_with_layout,
    const std::string& opaque, bool has_side_effect,
    absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing,
    const Literal* literal, Window window, ConvolutionDimensionNumbers dnums,
    CustomCallSchedule schedule = CustomCallSchedule::SCHEDULE_NONE,
    CustomCallApiVersion api_version = API_VERSION_ORIGINAL);

// ===== Template definitions =================================================

template <typename NativeT>
XlaOp ConstantR2(XlaBuilder* builder,
                 std::initializer_list<std::initializer_list<NativeT>> values) {
  if (builder == nullptr) return XlaOp();
  const int64_t rows = static_cast<int64_t>(values.size());
  const int64_t cols = rows > 0 ? static_cast<int64_t>(values.begin()->size()) : 0;
  std::vector<NativeT> flat;
  for (const auto& row : values) {
    if (static_cast<int64_t>(row.size()) != cols) {
      return builder->ReportError(
          absl::InvalidArgumentError("ConstantR2: rows of different lengths"));
    }
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return ConstantFromArray<NativeT>(builder, {rows, cols}, flat);
}

template <typename NativeT>
XlaOp ConstantFromArray(XlaBuilder* builder, absl::Span<const int64_t> dimensions,
                        absl::Span<const NativeT> values) {
  if (builder == nullptr) return XlaOp();
  int64_t count = 1;
  for (int64_t d : dimensions) {
    if (d < 0) {
      return builder->ReportError(
          absl::InvalidArgumentError("ConstantFromArray: negative dimension size"));
    }
    count *= d;
  }
  if (count != static_cast<int64_t>(values.size())) {
    return builder->ReportError(absl::InvalidArgumentError(
        "ConstantFromArray: the number of values does not match the dimensions"));
  }
  return ConstantLiteral(builder, LiteralUtil::CreateFromDimensions<NativeT>(dimensions, values));
}

}  // namespace axle

#endif  // AXLE_BUILDER_XLA_BUILDER_H_
