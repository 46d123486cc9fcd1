//===- scatter_thunk.cc - scatter with a compiled combiner -----------------===//
#include "axle/cpu/runtime/scatter_thunk.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/integer_element.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/analysis/scatter_indexing.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// Advances `index` (over `sizes`) to the next row-major position.
void Next(std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < sizes[d]) return;
    index[d] = 0;
  }
}

int64_t Product(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  return product;
}

absl::Status Invalid(const HloInstruction& instruction, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("cpu platform: scatter ", instruction.name(), ": ", what));
}

// Whether `values` are distinct and in [0, bound).

// Updated elements from which the one-row-per-update path splits the
// operand's rows across the intra-op pool (each thread reads every index).
constexpr int64_t kMinParallelRowElements = int64_t{1} << 15;

// The row op `combiner` is on operands of `type`, if any (see Geometry).
ScatterThunk::Geometry::RowOp RowOpOf(const HloComputation& combiner, PrimitiveType type) {
  using RowOp = ScatterThunk::Geometry::RowOp;
  switch (type) {
    case F32:
    case F64:
    case S32:
    case S64:
    case U32:
    case U64:
      break;
    default:
      return RowOp::kNone;
  }
  const HloInstruction* root = combiner.root_instruction();
  if (combiner.num_parameters() != 2) return RowOp::kNone;
  if (root == combiner.parameter_instruction(1)) return RowOp::kAssign;
  if (root->operand_count() != 2 || root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter || root->operand(0) == root->operand(1)) {
    return RowOp::kNone;
  }
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return RowOp::kAdd;
    case HloOpcode::kMultiply:
      return RowOp::kMultiply;
    default:
      return RowOp::kNone;
  }
}

// Output and update rows never overlap (distinct buffers); the loops are
// vectorized (GCC's -O2 leaves loops of unknown trip count scalar).
template <typename T>
__attribute__((optimize("tree-vectorize"))) void CombineRow(ScatterThunk::Geometry::RowOp op,
                                                            char* output, const char* update,
                                                            int64_t length) {
  using RowOp = ScatterThunk::Geometry::RowOp;
  T* __restrict out = reinterpret_cast<T*>(output);
  const T* __restrict in = reinterpret_cast<const T*>(update);
  switch (op) {
    case RowOp::kAdd:
#pragma GCC ivdep
      for (int64_t j = 0; j < length; ++j) out[j] = out[j] + in[j];
      break;
    case RowOp::kMultiply:
#pragma GCC ivdep
      for (int64_t j = 0; j < length; ++j) out[j] = out[j] * in[j];
      break;
    case RowOp::kAssign:
      std::memcpy(out, in, length * sizeof(T));
      break;
    case RowOp::kNone:
      break;
  }
}

// One window row of `length` elements: output = op(output, update).
void CombineRow(ScatterThunk::Geometry::RowOp op, PrimitiveType type, char* output,
                const char* update, int64_t length) {
  switch (type) {
    case F32:
      return CombineRow<float>(op, output, update, length);
    case F64:
      return CombineRow<double>(op, output, update, length);
    case S32:
    case U32:  // wrapping: unsigned arithmetic for both
      return CombineRow<uint32_t>(op, output, update, length);
    case S64:
    case U64:
      return CombineRow<uint64_t>(op, output, update, length);
    default:
      break;
  }
}

// Fills `bytes` of `output` with copies of `scalar` (a whole number of them).
void Fill(char* output, int64_t bytes, const std::vector<char>& scalar) {
  if (bytes <= 0) return;
  if (std::all_of(scalar.begin(), scalar.end(), [](char c) { return c == 0; })) {
    std::memset(output, 0, bytes);
    return;
  }
  const auto size = static_cast<int64_t>(scalar.size());
  switch (size) {
    case 4: {
      uint32_t value;
      std::memcpy(&value, scalar.data(), 4);
      std::fill_n(reinterpret_cast<uint32_t*>(output), bytes / 4, value);
      return;
    }
    case 8: {
      uint64_t value;
      std::memcpy(&value, scalar.data(), 8);
      std::fill_n(reinterpret_cast<uint64_t*>(output), bytes / 8, value);
      return;
    }
    default:
      break;
  }
  // Doubling copies of the filled prefix.
  std::memcpy(output, scalar.data(), size);
  for (int64_t filled = size; filled < bytes;) {
    const int64_t chunk = std::min(filled, bytes - filled);
    std::memcpy(output + filled, output, chunk);
    filled += chunk;
  }
}

// Fills from which a filled output is split across the intra-op pool.
constexpr int64_t kMinParallelFillBytes = int64_t{1} << 20;

}  // namespace

const Literal* ScatterFillsOperand(const HloInstruction& operand) {
  if (operand.opcode() != HloOpcode::kFusion || operand.operand_count() != 0 ||
      !operand.shape().IsArray() || operand.user_count() != 1 || operand.parent() == nullptr ||
      operand.parent()->root_instruction() == &operand) {
    return nullptr;
  }
  const HloInstruction* root =
      cast<HloFusionInstruction>(&operand)->fused_instructions_computation()->root_instruction();
  if (root->opcode() != HloOpcode::kBroadcast ||
      root->operand(0)->opcode() != HloOpcode::kConstant || !root->operand(0)->shape().IsArray() ||
      root->operand(0)->shape().rank() != 0 ||
      root->operand(0)->shape().element_type() != operand.shape().element_type()) {
    return nullptr;
  }
  // The only user is a scatter that reads it once, as an operand (not as
  // its indices or updates).
  const HloInstruction* scatter = operand.users().front();
  if (scatter->opcode() != HloOpcode::kScatter) return nullptr;
  const int64_t n = scatter->operand_count() / 2;
  int64_t uses = 0;
  bool as_operand = false;
  for (int64_t i = 0; i < scatter->operand_count(); ++i) {
    if (scatter->operand(i) != &operand) continue;
    ++uses;
    as_operand = i < n;
  }
  if (uses != 1 || !as_operand) return nullptr;
  const Literal& literal = cast<HloConstantInstruction>(root->operand(0))->literal();
  const int64_t count = ShapeUtil::ElementsIn(operand.shape());
  if (count == 0 ||
      literal.size_bytes() * count != ShapeUtil::ByteSizeOfElements(operand.shape())) {
    return nullptr;
  }
  return &literal;
}

ScatterThunk::ScatterThunk(std::string name, std::unique_ptr<CompiledScalarFunction> combiner,
                           Geometry geometry, std::vector<int64_t> operand_values,
                           int64_t indices_value, std::vector<int64_t> update_values,
                           std::vector<int64_t> output_values, std::vector<std::vector<char>> fills)
    : Thunk(std::move(name)),
      combiner_(std::move(combiner)),
      geometry_(std::move(geometry)),
      operand_values_(std::move(operand_values)),
      indices_value_(indices_value),
      update_values_(std::move(update_values)),
      output_values_(std::move(output_values)),
      fills_(std::move(fills)) {
  fills_.resize(output_values_.size());
}

std::optional<Thunk::BufferUses> ScatterThunk::buffer_uses() const {
  BufferUses uses{{}, output_values_};
  for (int64_t value : operand_values_) {
    if (value >= 0) uses.reads.push_back(value);
  }
  uses.reads.push_back(indices_value_);
  uses.reads.insert(uses.reads.end(), update_values_.begin(), update_values_.end());
  return uses;
}

absl::Status ScatterThunk::Execute(const ThunkContext& context) const {
  const Geometry& g = geometry_;
  const int64_t n = static_cast<int64_t>(output_values_.size());
  const int64_t operand_elements = Product(g.operand_dims);
  const int threads = context.thread_pool == nullptr ? 1
                      : context.max_threads > 0      ? context.max_threads
                                                     : context.thread_pool->num_threads();
  std::vector<char*> outputs(n);
  std::vector<const char*> updates(n);
  for (int64_t i = 0; i < n; ++i) {
    outputs[i] = static_cast<char*>(context.address(output_values_[i]));
    updates[i] = static_cast<const char*>(context.address(update_values_[i]));
  }
  // Each output starts as its operand or its fill; `skip_fill` leaves
  // output 0's fill to the threads that combine into it.
  auto initialize = [&](bool skip_fill) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t bytes = operand_elements * g.element_bytes[i];
      if (bytes <= 0) continue;
      if (fills_[i].empty()) {
        const void* operand = context.address(operand_values_[i]);
        if (operand != outputs[i]) std::memmove(outputs[i], operand, bytes);
        continue;
      }
      if (skip_fill && i == 0) continue;
      char* output = outputs[i];
      const std::vector<char>& fill = fills_[i];
      const int64_t elements = bytes / g.element_bytes[i];
      if (threads <= 1 || bytes < kMinParallelFillBytes) {
        Fill(output, bytes, fill);
        continue;
      }
      const int64_t per_block =
          std::max<int64_t>(1, (kMinParallelFillBytes / 4) / g.element_bytes[i]);
      context.thread_pool->ParallelFor(
          elements, per_block,
          [&](int64_t begin, int64_t end) {
            Fill(output + begin * g.element_bytes[i], (end - begin) * g.element_bytes[i], fill);
          },
          threads);
    }
  };
  const void* indices = context.address(indices_value_);

  const ScatterWalk walk = ScatterWalkOf(g);
  const std::vector<int64_t>& operand_strides = walk.operand_strides;
  const std::vector<int64_t> update_strides = ShapeUtil::RowMajorStrides(g.update_dims);
  const int64_t operand_rank = static_cast<int64_t>(g.operand_dims.size());
  const int64_t vector_size = walk.vector_size;
  const int64_t vector_stride = walk.vector_stride;
  // The indices' stride of each update scatter dimension.
  const std::vector<int64_t>& batch_strides = walk.batch_strides;
  const std::vector<int64_t>& window_extent = walk.window_extent;

  std::vector<int64_t> scatter_sizes, window_sizes;
  for (int64_t d : g.update_scatter_dims) scatter_sizes.push_back(g.update_dims[d]);
  for (int64_t d : g.update_window_dims) window_sizes.push_back(g.update_dims[d]);
  const int64_t scatter_count = Product(scatter_sizes);
  const int64_t window_count = Product(window_sizes);
  if (scatter_count == 0 || window_count == 0) {
    initialize(/*skip_fill=*/false);
    return absl::OkStatus();
  }

  // Rows combined inline (Geometry::row_op), when the window's minor
  // dimension is the operand's and the updates' minor dimension.
  const int64_t row_length =
      g.row_op != Geometry::RowOp::kNone && !window_sizes.empty() &&
              g.update_window_dims.back() == static_cast<int64_t>(g.update_dims.size()) - 1 &&
              g.window_operand_dims.back() == operand_rank - 1
          ? window_sizes.back()
          : 0;
  // One index per update, each update one row of the operand combined
  // inline (an embedding's gradient): no per-update index vectors.
  if (row_length > 0 && row_length == window_count && vector_size == 1 &&
      scatter_sizes.size() == 1 && g.input_batching_dims.empty()) {
    const int64_t dim = g.scatter_dims_to_operand_dims[0];
    for (int64_t d = 0; d < operand_rank; ++d) {
      // The window is at 0 in the other dimensions: out of bounds there,
      // every update is skipped.
      if (d != dim && window_extent[d] > g.operand_dims[d]) {
        initialize(/*skip_fill=*/false);
        return absl::OkStatus();
      }
    }
    const int64_t limit = g.operand_dims[dim] - window_extent[dim];
    const int64_t output_step = operand_strides[dim] * g.element_bytes[0];
    const int64_t update_step = update_strides[g.update_scatter_dims[0]] * g.element_bytes[0];
    const int64_t rows = limit + 1;
    // A filled output whose rows along `dim` are its outermost, one apart:
    // each range of rows is filled by the thread that combines into it.
    const bool fill_rows = !fills_[0].empty() && dim == 0 && window_extent[0] == 1;
    initialize(/*skip_fill=*/fill_rows);
    // Updates whose row starts in [first, last), in update order: a
    // thread owns a range of operand rows, so rows updated more than once
    // are combined in order, by one thread.
    auto combine_rows = [&](int64_t first, int64_t last) {
      if (fill_rows)
        Fill(outputs[0] + first * output_step, (last - first) * output_step, fills_[0]);
      for (int64_t s = 0; s < scatter_count; ++s) {
        const int64_t start = ReadIntegerElement(indices, g.indices_type, s * batch_strides[0]);
        if (start < 0 || start > limit || start < first || start >= last) continue;
        CombineRow(g.row_op, g.element_type, outputs[0] + start * output_step,
                   updates[0] + s * update_step, row_length);
      }
    };
    if (threads <= 1 || scatter_count * row_length < kMinParallelRowElements || rows < threads) {
      combine_rows(0, rows);
      return absl::OkStatus();
    }
    context.thread_pool->ParallelFor(
        threads, 1,
        [&](int64_t begin, int64_t end) {
          combine_rows(rows * begin / threads, rows * end / threads);
        },
        threads);
    return absl::OkStatus();
  }
  initialize(/*skip_fill=*/false);
  std::vector<const void*> parameters(2 * n);
  std::vector<void*> results(n);
  std::vector<int64_t> scatter_index(scatter_sizes.size(), 0);
  std::vector<int64_t> window_index(window_sizes.size(), 0);
  std::vector<int64_t> start(operand_rank, 0);
  for (int64_t s = 0; s < scatter_count; ++s, Next(scatter_index, scatter_sizes)) {
    int64_t indices_base = 0, update_base = 0;
    for (size_t j = 0; j < scatter_index.size(); ++j) {
      indices_base += scatter_index[j] * batch_strides[j];
      update_base += scatter_index[j] * update_strides[g.update_scatter_dims[j]];
    }
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < vector_size; ++k) {
      start[g.scatter_dims_to_operand_dims[k]] =
          ReadIntegerElement(indices, g.indices_type, indices_base + k * vector_stride);
    }
    for (size_t i = 0; i < g.input_batching_dims.size(); ++i) {
      start[g.input_batching_dims[i]] = scatter_index[g.batch_positions[i]];
    }
    bool in_bounds = true;
    int64_t operand_base = 0;
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (start[d] < 0 || start[d] > g.operand_dims[d] - window_extent[d]) in_bounds = false;
      operand_base += start[d] * operand_strides[d];
    }
    if (!in_bounds) continue;
    if (row_length > 0) {
      // Contiguous rows with an inline op: the window's outer positions,
      // each a row of row_length elements.
      std::fill(window_index.begin(), window_index.end(), 0);
      for (int64_t w = 0; w < window_count; w += row_length) {
        int64_t operand_linear = operand_base, update_linear = update_base;
        for (size_t k = 0; k < window_index.size(); ++k) {
          operand_linear += window_index[k] * operand_strides[g.window_operand_dims[k]];
          update_linear += window_index[k] * update_strides[g.update_window_dims[k]];
        }
        CombineRow(g.row_op, g.element_type, outputs[0] + operand_linear * g.element_bytes[0],
                   updates[0] + update_linear * g.element_bytes[0], row_length);
        window_index.back() = window_sizes.back() - 1;
        Next(window_index, window_sizes);
      }
      continue;
    }
    std::fill(window_index.begin(), window_index.end(), 0);
    for (int64_t w = 0; w < window_count; ++w, Next(window_index, window_sizes)) {
      int64_t operand_linear = operand_base, update_linear = update_base;
      for (size_t k = 0; k < window_index.size(); ++k) {
        operand_linear += window_index[k] * operand_strides[g.window_operand_dims[k]];
        update_linear += window_index[k] * update_strides[g.update_window_dims[k]];
      }
      for (int64_t i = 0; i < n; ++i) {
        // The combiner loads every parameter before it stores a result, so
        // results go straight into the outputs.
        char* target = outputs[i] + operand_linear * g.element_bytes[i];
        parameters[i] = target;
        parameters[n + i] = updates[i] + update_linear * g.element_bytes[i];
        results[i] = target;
      }
      combiner_->Run(parameters.data(), results.data());
    }
  }
  return absl::OkStatus();
}

absl::Status EmitScatterThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  absl::StatusOr<ScatterIndexing> indexing = AnalyzeScatter(instruction);
  if (!indexing.ok()) return Invalid(instruction, indexing.status().message());
  const int64_t n = cast<HloScatterInstruction>(&instruction)->scatter_operand_count();
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& indices = instruction.operand(n)->shape();
  if (!IsByteIntegerType(indices.element_type())) {
    return Invalid(instruction,
                   absl::StrCat("indices of type ",
                                primitive_util::LowercasePrimitiveTypeName(indices.element_type()),
                                " are not integers"));
  }
  ScatterThunk::Geometry g;
  static_cast<ScatterIndexing&>(g) = *std::move(indexing);
  const HloComputation* combiner = instruction.to_apply();
  std::vector<int64_t> operand_values, update_values;
  std::vector<std::vector<char>> fills(n);
  for (int64_t i = 0; i < n; ++i) {
    const Shape& o = instruction.operand(i)->shape();
    if (const Literal* fill = ScatterFillsOperand(*instruction.operand(i))) {
      // No kernel computed it (program_builder.cc): the thunk fills.
      const char* bytes = static_cast<const char*>(fill->untyped_data());
      fills[i].assign(bytes, bytes + fill->size_bytes());
      operand_values.push_back(-1);
    } else {
      AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(instruction.operand(i)));
      operand_values.push_back(value);
    }
    AXLE_ASSIGN_OR_RETURN(int64_t update_value, builder.ValueOf(instruction.operand(n + 1 + i)));
    update_values.push_back(update_value);
    const int64_t count = ShapeUtil::ElementsIn(o);
    g.element_bytes.push_back(count == 0 ? 1 : ShapeUtil::ByteSizeOfElements(o) / count);
  }
  if (n == 1) {
    g.element_type = operand.element_type();
    g.row_op = RowOpOf(*combiner, g.element_type);
  }
  AXLE_ASSIGN_OR_RETURN(int64_t indices_value, builder.ValueOf(instruction.operand(n)));
  AXLE_ASSIGN_OR_RETURN(
      std::unique_ptr<CompiledScalarFunction> function,
      builder.kernels().AddScalarFunction(*combiner, builder.UniqueName("scatter_combiner")));
  std::vector<int64_t> output_values = builder.DefineTemporaries(&instruction);
  if (static_cast<int64_t>(output_values.size()) != n) {
    return Unsupported(instruction, "a scatter whose result leaves do not match its operands");
  }
  builder.AddThunk(std::make_unique<ScatterThunk>(
      instruction.name(), std::move(function), std::move(g), std::move(operand_values),
      indices_value, std::move(update_values), std::move(output_values), std::move(fills)));
  return absl::OkStatus();
}

}  // namespace axle::cpu
