//===- xla_data.h - XLA's attribute messages -------------------------------===//
//
// The small structured attributes of HLO instructions, with the accessor
// names of XLA's xla_data.proto messages (`lhs_contracting_dimensions()`,
// `add_lhs_contracting_dimensions(d)`, `set_feature_group_count(n)`, ...), so
// that code written against XLA's builder compiles unchanged. Plain structs,
// no protobuf.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_XLA_DATA_H_
#define AXLE_CORE_XLA_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

namespace axle {

// A repeated field: `name()`, `name(i)`, `name_size()`, `add_name(v)`,
// `mutable_name()`, `clear_name()`, `set_name(i, v)`.
#define AXLE_REPEATED_FIELD(type, name)                                \
 public:                                                               \
  const std::vector<type>& name() const { return name##_; }            \
  const type& name(int i) const { return name##_[i]; }                 \
  int name##_size() const { return static_cast<int>(name##_.size()); } \
  void add_##name(const type& v) { name##_.push_back(v); }             \
  type* add_##name() { return &name##_.emplace_back(); }               \
  std::vector<type>* mutable_##name() { return &name##_; }             \
  void set_##name(int i, const type& v) { name##_[i] = v; }            \
  void clear_##name() { name##_.clear(); }                             \
                                                                       \
 private:                                                              \
  std::vector<type> name##_;

// A scalar field: `name()`, `set_name(v)`.
#define AXLE_SCALAR_FIELD(type, name, init) \
 public:                                    \
  type name() const { return name##_; }     \
  void set_##name(type v) { name##_ = v; }  \
                                            \
 private:                                   \
  type name##_ = init;

#define AXLE_STRING_FIELD(name)                              \
 public:                                                     \
  const std::string& name() const { return name##_; }        \
  void set_##name(std::string v) { name##_ = std::move(v); } \
  std::string* mutable_##name() { return &name##_; }         \
                                                             \
 private:                                                    \
  std::string name##_;

class DotDimensionNumbers {
  AXLE_REPEATED_FIELD(int64_t, lhs_contracting_dimensions)
  AXLE_REPEATED_FIELD(int64_t, rhs_contracting_dimensions)
  AXLE_REPEATED_FIELD(int64_t, lhs_batch_dimensions)
  AXLE_REPEATED_FIELD(int64_t, rhs_batch_dimensions)
 public:
  bool operator==(const DotDimensionNumbers&) const = default;
};

class RaggedDotDimensionNumbers {
 public:
  const DotDimensionNumbers& dot_dimension_numbers() const { return dot_; }
  DotDimensionNumbers* mutable_dot_dimension_numbers() { return &dot_; }
  AXLE_REPEATED_FIELD(int64_t, lhs_ragged_dimensions)
  AXLE_REPEATED_FIELD(int64_t, rhs_group_dimensions)
 public:
  bool operator==(const RaggedDotDimensionNumbers&) const = default;

 private:
  DotDimensionNumbers dot_;
};

class ConvolutionDimensionNumbers {
  AXLE_SCALAR_FIELD(int64_t, input_batch_dimension, 0)
  AXLE_SCALAR_FIELD(int64_t, input_feature_dimension, 0)
  AXLE_REPEATED_FIELD(int64_t, input_spatial_dimensions)
  AXLE_SCALAR_FIELD(int64_t, kernel_input_feature_dimension, 0)
  AXLE_SCALAR_FIELD(int64_t, kernel_output_feature_dimension, 0)
  AXLE_REPEATED_FIELD(int64_t, kernel_spatial_dimensions)
  AXLE_SCALAR_FIELD(int64_t, output_batch_dimension, 0)
  AXLE_SCALAR_FIELD(int64_t, output_feature_dimension, 0)
  AXLE_REPEATED_FIELD(int64_t, output_spatial_dimensions)
 public:
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

class WindowDimension {
  AXLE_SCALAR_FIELD(int64_t, size, 0)
  AXLE_SCALAR_FIELD(int64_t, stride, 1)
  AXLE_SCALAR_FIELD(int64_t, padding_low, 0)
  AXLE_SCALAR_FIELD(int64_t, padding_high, 0)
  AXLE_SCALAR_FIELD(int64_t, window_dilation, 1)
  AXLE_SCALAR_FIELD(int64_t, base_dilation, 1)
  AXLE_SCALAR_FIELD(bool, window_reversal, false)
 public:
  bool operator==(const WindowDimension&) const = default;
};

class Window {
  AXLE_REPEATED_FIELD(WindowDimension, dimensions)
 public:
  bool operator==(const Window&) const = default;
};

class PaddingConfig {
 public:
  class PaddingConfigDimension {
    AXLE_SCALAR_FIELD(int64_t, edge_padding_low, 0)
    AXLE_SCALAR_FIELD(int64_t, edge_padding_high, 0)
    AXLE_SCALAR_FIELD(int64_t, interior_padding, 0)
   public:
    bool operator==(const PaddingConfigDimension&) const = default;
  };
  AXLE_REPEATED_FIELD(PaddingConfigDimension, dimensions)
 public:
  bool operator==(const PaddingConfig&) const = default;
};

class GatherDimensionNumbers {
  AXLE_REPEATED_FIELD(int64_t, offset_dims)
  AXLE_REPEATED_FIELD(int64_t, collapsed_slice_dims)
  AXLE_REPEATED_FIELD(int64_t, start_index_map)
  AXLE_SCALAR_FIELD(int64_t, index_vector_dim, 0)
  AXLE_REPEATED_FIELD(int64_t, operand_batching_dims)
  AXLE_REPEATED_FIELD(int64_t, start_indices_batching_dims)
 public:
  bool operator==(const GatherDimensionNumbers&) const = default;
};

class ScatterDimensionNumbers {
  AXLE_REPEATED_FIELD(int64_t, update_window_dims)
  AXLE_REPEATED_FIELD(int64_t, inserted_window_dims)
  AXLE_REPEATED_FIELD(int64_t, scatter_dims_to_operand_dims)
  AXLE_SCALAR_FIELD(int64_t, index_vector_dim, 0)
  AXLE_REPEATED_FIELD(int64_t, input_batching_dims)
  AXLE_REPEATED_FIELD(int64_t, scatter_indices_batching_dims)
 public:
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

class PrecisionConfig {
 public:
  enum Precision { DEFAULT = 0, HIGH = 1, HIGHEST = 2, PACKED_NIBBLE = 3 };
  // XLA's dot algorithms (`algorithm=dot_bf16_bf16_f32` in text).
  enum Algorithm {
    ALG_UNSET = 0,
    ALG_DOT_ANY_F8_ANY_F8_F32 = 1,
    ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM = 2,
    ALG_DOT_F16_F16_F16 = 3,
    ALG_DOT_F16_F16_F32 = 4,
    ALG_DOT_BF16_BF16_BF16 = 5,
    ALG_DOT_BF16_BF16_F32 = 6,
    ALG_DOT_BF16_BF16_F32_X3 = 7,
    ALG_DOT_BF16_BF16_F32_X6 = 8,
    ALG_DOT_TF32_TF32_F32 = 9,
    ALG_DOT_TF32_TF32_F32_X3 = 10,
    ALG_DOT_F32_F32_F32 = 11,
    ALG_DOT_F64_F64_F64 = 12,
    ALG_DOT_BF16_BF16_F32_X9 = 13,
  };
  AXLE_REPEATED_FIELD(Precision, operand_precision)
  AXLE_SCALAR_FIELD(Algorithm, algorithm, ALG_UNSET)
 public:
  bool operator==(const PrecisionConfig&) const = default;
};

class TriangularSolveOptions {
 public:
  enum Transpose { TRANSPOSE_INVALID = 0, NO_TRANSPOSE = 1, TRANSPOSE = 2, ADJOINT = 3 };
  AXLE_SCALAR_FIELD(bool, left_side, false)
  AXLE_SCALAR_FIELD(bool, lower, false)
  AXLE_SCALAR_FIELD(bool, unit_diagonal, false)
  AXLE_SCALAR_FIELD(Transpose, transpose_a, NO_TRANSPOSE)
 public:
  bool operator==(const TriangularSolveOptions&) const = default;
};

class CholeskyOptions {
  AXLE_SCALAR_FIELD(bool, lower, false)
 public:
  bool operator==(const CholeskyOptions&) const = default;
};

enum FftType { FFT = 0, IFFT = 1, RFFT = 2, IRFFT = 3 };

enum RandomDistribution { RNG_INVALID = 0, RNG_UNIFORM = 1, RNG_NORMAL = 2 };

enum RandomAlgorithm { RNG_DEFAULT = 0, RNG_THREE_FRY = 1, RNG_PHILOX = 2 };

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };

// Which comparison a `compare` does for floats: IEEE-754 ("FLOAT") or the
// total order (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN).
enum class ComparisonType { kDefault, kFloat, kFloatTotalOrder, kSigned, kUnsigned };

class ReplicaGroup {
  AXLE_REPEATED_FIELD(int64_t, replica_ids)
 public:
  bool operator==(const ReplicaGroup&) const = default;
};

// Source-level information attached to an instruction: `metadata={...}`.
class OpMetadata {
  AXLE_STRING_FIELD(op_type)
  AXLE_STRING_FIELD(op_name)
  AXLE_STRING_FIELD(source_file)
  AXLE_SCALAR_FIELD(int32_t, source_line, 0)
  AXLE_SCALAR_FIELD(int32_t, source_end_line, 0)
  AXLE_SCALAR_FIELD(int32_t, source_column, 0)
  AXLE_SCALAR_FIELD(int32_t, source_end_column, 0)
  AXLE_REPEATED_FIELD(int32_t, profile_type)
  AXLE_STRING_FIELD(deduplicated_name)
  AXLE_SCALAR_FIELD(bool, preserve_layout, false)
  AXLE_STRING_FIELD(scheduling_name)
  AXLE_SCALAR_FIELD(int32_t, stack_frame_id, 0)
 public:
  bool operator==(const OpMetadata&) const = default;
};

// Custom-call calling conventions (XLA's CustomCallApiVersion).
enum CustomCallApiVersion {
  API_VERSION_UNSPECIFIED = 0,
  API_VERSION_ORIGINAL = 1,
  API_VERSION_STATUS_RETURNING = 2,
  API_VERSION_STATUS_RETURNING_UNIFIED = 3,
  API_VERSION_TYPED_FFI = 4,
};

enum CustomCallSchedule { SCHEDULE_NONE = 0, SCHEDULE_LATEST = 1, SCHEDULE_EARLIEST = 2 };

#undef AXLE_REPEATED_FIELD
#undef AXLE_SCALAR_FIELD
#undef AXLE_STRING_FIELD

}  // namespace axle

#endif  // AXLE_CORE_XLA_DATA_H_
