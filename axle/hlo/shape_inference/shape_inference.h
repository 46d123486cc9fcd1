//===- shape_inference.h - Result shapes of HLO operations -----------------===//
//
// For every HLO opcode, the shape its result must have given its operands and
// attributes, with XLA's rules ("Operation semantics" and XLA's
// shape_inference.cc). Each function validates its inputs and returns an
// InvalidArgument status that names the operation and says what is wrong, in
// the user's terms ("dot: lhs_contracting_dimensions={1} but lhs has rank 1").
//
// Results carry the default (descending) layout; callers compare them with
// instruction shapes ignoring layouts. Mixed float precisions are accepted
// where XLA accepts them (the higher precision wins); the verifier decides
// whether mixed precision is allowed.
//
// The implementation is split by op family:
//   shape_inference_elementwise.cc    unary, binary, clamp/select, convert, map
//   shape_inference_data_movement.cc  broadcast, reshape, slices, concat, pad...
//   shape_inference_windowed.cc       reduce, reduce-window, select-and-scatter,
//                                     convolution
//   shape_inference_linalg.cc         dot family, fft, cholesky, triangular
//                                     solve, batch norm
//   shape_inference_gather_scatter.cc gather, scatter
//   shape_inference_control.cc        while, conditional, call, collectives, rng
//   shape_inference.cc                InferInstructionShape (dispatch on opcode)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_SHAPE_INFERENCE_SHAPE_INFERENCE_H_
#define AXLE_HLO_SHAPE_INFERENCE_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_module_config.h"
#include "axle/hlo/ir/hlo_opcode.h"

namespace axle {

class HloComputation;
class HloInstruction;

class ShapeInference {
 public:
  // --- Elementwise ----------------------------------------------------------
  // abs, negate, exp, ..., is-finite (-> pred), real/imag (complex -> real),
  // copy and domain (any shape).
  static absl::StatusOr<Shape> InferUnaryOpShape(HloOpcode opcode, const Shape& operand);
  // add, ..., compare (-> pred), complex (-> c64/c128). Operands of equal rank
  // broadcast degenerate (size-1) dimensions; a lower-rank operand is mapped
  // onto `broadcast_dimensions` of the other (XLA's client-level semantics).
  static absl::StatusOr<Shape> InferBinaryOpShape(HloOpcode opcode, const Shape& lhs,
                                                  const Shape& rhs,
                                                  absl::Span<const int64_t> broadcast_dimensions);
  // clamp(min, operand, max), select(pred, on_true, on_false).
  static absl::StatusOr<Shape> InferTernaryOpShape(HloOpcode opcode, const Shape& lhs,
                                                   const Shape& rhs, const Shape& ehs);
  static absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand,
                                               const Shape& max);
  static absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true,
                                                const Shape& on_false);
  // tuple (a tuple of the operands) and sort (the operand, or a tuple).
  static absl::StatusOr<Shape> InferVariadicOpShape(HloOpcode opcode,
                                                    absl::Span<const Shape* const> operands);
  static absl::StatusOr<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type);
  static absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand,
                                                        PrimitiveType new_type);
  static absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand,
                                                           const Shape& random,
                                                           PrimitiveType new_type);
  static absl::StatusOr<Shape> InferReducePrecisionShape(const Shape& operand, int exponent_bits,
                                                         int mantissa_bits);
  // map(operands...), dimensions (all of them), to_apply: scalars -> scalar.
  static absl::StatusOr<Shape> InferMapShape(absl::Span<const Shape* const> operands,
                                             const ProgramShape& to_apply,
                                             absl::Span<const int64_t> dimensions);

  // --- Data movement --------------------------------------------------------
  // XLA's client Broadcast: `broadcast_sizes` become new major dimensions.
  static absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                                   absl::Span<const int64_t> broadcast_sizes);
  // BroadcastInDim: operand dimension i maps to output dimension
  // broadcast_dimensions[i] (same size, or 1); returns `output`.
  static absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand, const Shape& output,
                                                   absl::Span<const int64_t> broadcast_dimensions);
  static absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                                 absl::Span<const int64_t> new_sizes,
                                                 int64_t inferred_dimension = -1);
  static absl::StatusOr<Shape> InferDynamicReshapeShape(
      const Shape& operand, absl::Span<const Shape* const> dim_size_shapes,
      absl::Span<const int64_t> new_size_bounds, const std::vector<bool>& dims_are_dynamic);
  static absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                                   absl::Span<const int64_t> dimensions);
  static absl::StatusOr<Shape> InferReverseShape(const Shape& operand,
                                                 absl::Span<const int64_t> dimensions);
  static absl::StatusOr<Shape> InferSliceShape(const Shape& operand,
                                               absl::Span<const int64_t> starts,
                                               absl::Span<const int64_t> limits,
                                               absl::Span<const int64_t> strides);
  // Start indices are scalars (one per dimension) or, XLA's old form, one
  // rank-1 array.
  static absl::StatusOr<Shape> InferDynamicSliceShape(const Shape& operand,
                                                      absl::Span<const Shape> start_indices,
                                                      absl::Span<const int64_t> slice_sizes);
  static absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const Shape& operand,
                                                            const Shape& update,
                                                            absl::Span<const Shape> start_indices);
  static absl::StatusOr<Shape> InferConcatOpShape(absl::Span<const Shape* const> operands,
                                                  int64_t dimension);
  static absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                                             const PaddingConfig& padding_config);
  static absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index);
  static absl::StatusOr<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension);
  static absl::StatusOr<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                                          int64_t dimension);
  // (values, s32 indices) of the k largest along the last dimension.
  static absl::StatusOr<Shape> InferTopKShape(const Shape& operand, int64_t k);
  // iota: a non-scalar integral/float/complex array; iota_dimension in range.
  static absl::StatusOr<Shape> InferIotaShape(const Shape& shape, int64_t iota_dimension);

  // --- Reductions and windows -----------------------------------------------
  // reduce(inputs..., inits...), dimensions, to_apply: 2N scalars -> N.
  static absl::StatusOr<Shape> InferReduceShape(absl::Span<const Shape* const> operands,
                                                absl::Span<const int64_t> dimensions,
                                                const ProgramShape& to_apply);
  static absl::StatusOr<Shape> InferReduceWindowShape(absl::Span<const Shape* const> operands,
                                                      absl::Span<const Shape* const> init_values,
                                                      const Window& window,
                                                      const ProgramShape& to_apply);
  static absl::StatusOr<Shape> InferSelectAndScatterShape(const Shape& operand,
                                                          const ProgramShape& select,
                                                          const Window& window, const Shape& source,
                                                          const Shape& init_value,
                                                          const ProgramShape& scatter);
  // The shape of a window applied to `base` (reduce-window, convolution).
  static absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                                      PrimitiveType element_type);
  static absl::StatusOr<Shape> InferConvolveShape(
      const Shape& lhs, const Shape& rhs, int64_t feature_group_count, int64_t batch_group_count,
      const Window& window, const ConvolutionDimensionNumbers& dnums,
      std::optional<PrimitiveType> preferred_element_type);

  // --- Linear algebra -------------------------------------------------------
  static absl::StatusOr<Shape> InferDotOpShape(const Shape& lhs, const Shape& rhs,
                                               const DotDimensionNumbers& dnums,
                                               std::optional<PrimitiveType> preferred_element_type);
  static absl::StatusOr<Shape> InferRaggedDotOpShape(
      const Shape& lhs, const Shape& rhs, const Shape& group_sizes,
      const RaggedDotDimensionNumbers& dnums, std::optional<PrimitiveType> preferred_element_type);
  static absl::StatusOr<Shape> InferScaledDotOpShape(
      const Shape& lhs, const Shape& rhs, const Shape& lhs_scale, const Shape& rhs_scale,
      const DotDimensionNumbers& dnums, std::optional<PrimitiveType> preferred_element_type);
  static absl::StatusOr<Shape> InferFftShape(const Shape& operand, FftType fft_type,
                                             absl::Span<const int64_t> fft_length);
  static absl::StatusOr<Shape> InferCholeskyShape(const Shape& a);
  static absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                                         const TriangularSolveOptions& options);
  static absl::StatusOr<Shape> InferBatchNormTrainingShape(const Shape& operand, const Shape& scale,
                                                           const Shape& offset,
                                                           int64_t feature_index);
  static absl::StatusOr<Shape> InferBatchNormInferenceShape(const Shape& operand,
                                                            const Shape& scale, const Shape& offset,
                                                            const Shape& mean,
                                                            const Shape& variance,
                                                            int64_t feature_index);
  static absl::StatusOr<Shape> InferBatchNormGradShape(const Shape& operand, const Shape& scale,
                                                       const Shape& mean, const Shape& variance,
                                                       const Shape& output_grad,
                                                       int64_t feature_index);

  // --- Gather and scatter ---------------------------------------------------
  static absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                                const GatherDimensionNumbers& dnums,
                                                absl::Span<const int64_t> slice_sizes);
  // scatter(operands..., indices, updates...), to_apply: 2N scalars -> N.
  static absl::StatusOr<Shape> InferScatterShape(absl::Span<const Shape* const> operands,
                                                 const ProgramShape& to_apply,
                                                 const ScatterDimensionNumbers& dnums);

  // --- Control flow ---------------------------------------------------------
  static absl::StatusOr<Shape> InferWhileShape(const ProgramShape& condition,
                                               const ProgramShape& body, const Shape& init);
  // `branch_index` is pred[] (two branches) or s32[].
  static absl::StatusOr<Shape> InferConditionalShape(
      const Shape& branch_index, absl::Span<const ProgramShape> branch_computations,
      absl::Span<const Shape> branch_operands);
  static absl::StatusOr<Shape> InferCallShape(absl::Span<const Shape* const> arguments,
                                              const ProgramShape& to_apply);
  // scan(inputs..., inits...), dimensions={d}, num_carries: to_apply maps a
  // slice of each input and the carries to (outputs..., new carries...); the
  // result is (outputs stacked along d..., final carries...).
  static absl::StatusOr<Shape> InferScanShape(absl::Span<const Shape* const> operands,
                                              int64_t dimension, int64_t num_carries,
                                              const ProgramShape& to_apply);

  // --- Collectives ----------------------------------------------------------
  static absl::StatusOr<Shape> InferAllReduceShape(absl::Span<const Shape* const> operands);
  static absl::StatusOr<Shape> InferAllGatherShape(absl::Span<const Shape* const> operands,
                                                   int64_t all_gather_dimension,
                                                   int64_t shard_count);
  static absl::StatusOr<Shape> InferAllGatherStartShape(absl::Span<const Shape* const> operands,
                                                        int64_t all_gather_dimension,
                                                        int64_t shard_count);
  static absl::StatusOr<Shape> InferReduceScatterShape(absl::Span<const Shape* const> operands,
                                                       int64_t scatter_dimension,
                                                       int64_t shard_count);
  // Array form (split_dimension set) and tuple form (N equal operands).
  static absl::StatusOr<Shape> InferAllToAllShape(const Shape& operand, int64_t split_dimension,
                                                  int64_t concat_dimension, int64_t split_count);
  static absl::StatusOr<Shape> InferAllToAllTupleShape(absl::Span<const Shape* const> operands);
  static absl::StatusOr<Shape> InferRaggedAllToAllShape(absl::Span<const Shape* const> operands);
  static absl::StatusOr<Shape> InferCollectivePermuteShape(absl::Span<const Shape* const> operands);
  static absl::StatusOr<Shape> InferCollectivePermuteStartShape(
      absl::Span<const Shape* const> operands, absl::Span<const Shape> context_shapes);
  static absl::StatusOr<Shape> InferCollectivePermuteDoneShape(const Shape& start);
  static absl::StatusOr<Shape> InferCollectiveBroadcastShape(
      absl::Span<const Shape* const> operands);

  // --- Random numbers -------------------------------------------------------
  // rng(a, b): scalars of the result's element type.
  static absl::StatusOr<Shape> InferRngShape(const Shape& a, const Shape& b,
                                             RandomDistribution distribution, const Shape& result);
  // (new_state, output): state is u64/u32 of rank 1 (or any, as XLA allows).
  static absl::StatusOr<Shape> InferRngBitGeneratorShape(const Shape& state, const Shape& output);

  // --- Whole instructions ---------------------------------------------------
  // The shape `instruction` must have, from its operands, attributes and
  // called computations (and, for ops whose result type the instruction
  // itself chooses, such as convert or dot's preferred element type, from its
  // own shape). Returns an Unimplemented status for opcodes whose shape is
  // whatever the instruction says (custom-call, parameter, bitcast, ...); the
  // verifier checks those by other means.
  static absl::StatusOr<Shape> InferInstructionShape(const HloInstruction& instruction);

  // The signature of a computation: its parameters (numbered densely from 0)
  // and its root's shape. Fails when a parameter number is missing or the
  // computation has no root.
  static absl::StatusOr<ProgramShape> ComputationSignature(const HloComputation& computation);
};

}  // namespace axle

#endif  // AXLE_HLO_SHAPE_INFERENCE_SHAPE_INFERENCE_H_
