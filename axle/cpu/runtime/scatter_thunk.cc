//===- scatter_thunk.cc - scatter with a compiled combiner -----------------===//
#include "axle/cpu/runtime/scatter_thunk.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/core/scatter_indexing.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/integer_element.h"
#include "axle/cpu/runtime/scatter_rows.h"
#include "axle/cpu/runtime/thunk_serialization.h"

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

// Updated elements from which the one-row-per-update path splits the
// operand's rows across the intra-op pool (each thread reads every index);
// a filled output of kMinParallelFillBytes or more is split too. 2^16
// f32 elements (1024 rows of 64) take ~6 us on one Zen 5 thread
// (scatter_rows.h), less than waking a sleeping worker: at 2 threads
// embedding_bag_grad's scatter of them took 8 us split, 6 us inline.
constexpr int64_t kMinParallelRowElements = int64_t{1} << 17;

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
    ScatterRows walk_rows;
    walk_rows.op = g.row_op;
    walk_rows.type = g.element_type;
    walk_rows.indices = indices;
    walk_rows.index_type = g.indices_type;
    walk_rows.index_stride = batch_strides[0];
    walk_rows.count = scatter_count;
    walk_rows.limit = limit;
    walk_rows.output = outputs[0];
    walk_rows.output_step = output_step;
    walk_rows.updates = updates[0];
    walk_rows.update_step = update_step;
    walk_rows.length = row_length;
    auto combine_rows = [&](int64_t first, int64_t last) {
      if (fill_rows)
        Fill(outputs[0] + first * output_step, (last - first) * output_step, fills_[0]);
      CombineRows(walk_rows, first, last);
    };
    const bool large_fill = fill_rows && rows * output_step >= kMinParallelFillBytes;
    if (threads <= 1 || rows < threads ||
        (scatter_count * row_length < kMinParallelRowElements && !large_fill)) {
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
  // Updates s in [first, last) (row-major over the update scatter
  // dimensions), each applied in order.
  auto apply_updates = [&](int64_t first, int64_t last) {
    std::vector<const void*> parameters(2 * n);
    std::vector<void*> results(n);
    std::vector<int64_t> scatter_index(scatter_sizes.size(), 0);
    std::vector<int64_t> window_index(window_sizes.size(), 0);
    std::vector<int64_t> start(operand_rank, 0);
    for (int64_t rest = first, d = static_cast<int64_t>(scatter_sizes.size()) - 1; d >= 0; --d) {
      scatter_index[d] = rest % scatter_sizes[d];
      rest /= scatter_sizes[d];
    }
    for (int64_t s = first; s < last; ++s, Next(scatter_index, scatter_sizes)) {
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
  };
  // With the operand's outermost dimension a batching dimension that the
  // outermost update scatter dimension indexes (a vmapped scatter), the
  // updates of batch b touch only the operand's slab b: each thread
  // starts and updates its own range of slabs, its updates in order.
  int64_t batches = 0;
  for (size_t i = 0; i < g.input_batching_dims.size(); ++i) {
    if (g.input_batching_dims[i] == 0 && g.batch_positions[i] == 0) batches = scatter_sizes[0];
  }
  // (An index into dimension 0 as well would reach other slabs.)
  if (std::find(g.scatter_dims_to_operand_dims.begin(), g.scatter_dims_to_operand_dims.end(), 0) !=
      g.scatter_dims_to_operand_dims.end()) {
    batches = 0;
  }
  const int64_t operand_bytes = operand_elements * g.element_bytes[0];
  if (threads <= 1 || batches < threads ||
      (operand_bytes < kMinParallelFillBytes &&
       scatter_count * window_count < kMinParallelRowElements)) {
    initialize(/*skip_fill=*/false);
    apply_updates(0, scatter_count);
    return absl::OkStatus();
  }
  const int64_t slab_elements = operand_elements / g.operand_dims[0];
  const int64_t updates_per_batch = scatter_count / batches;
  context.thread_pool->ParallelFor(
      threads, 1,
      [&](int64_t begin, int64_t end) {
        const int64_t first = batches * begin / threads, last = batches * end / threads;
        for (int64_t i = 0; i < n; ++i) {
          const int64_t slab = slab_elements * g.element_bytes[i];
          char* output = outputs[i] + first * slab;
          if (fills_[i].empty()) {
            const char* operand = static_cast<const char*>(context.address(operand_values_[i]));
            if (operand != outputs[i])
              std::memmove(output, operand + first * slab, (last - first) * slab);
          } else {
            Fill(output, (last - first) * slab, fills_[i]);
          }
        }
        apply_updates(first * updates_per_batch, last * updates_per_batch);
      },
      threads);
  return absl::OkStatus();
}

absl::Status ScatterThunk::Serialize(ThunkWriter& writer) const {
  const Geometry& g = geometry_;
  writer.Begin(ThunkTag::kScatter, *this);
  // The shapes and dimension numbers the indexing comes from: the loader
  // analyzes them again (AnalyzeScatterIndexing), which checks them.
  writer.Ints(g.operand_dims);
  writer.Ints(g.indices_dims);
  writer.Ints(g.update_dims);
  writer.Int(static_cast<int64_t>(g.indices_type));
  writer.Int(g.index_vector_dim);
  writer.Ints(g.update_window_dims);
  std::vector<int64_t> inserted;
  for (int64_t d = 0; d < static_cast<int64_t>(g.operand_dims.size()); ++d) {
    if (std::find(g.window_operand_dims.begin(), g.window_operand_dims.end(), d) ==
            g.window_operand_dims.end() &&
        std::find(g.input_batching_dims.begin(), g.input_batching_dims.end(), d) ==
            g.input_batching_dims.end()) {
      inserted.push_back(d);
    }
  }
  writer.Ints(inserted);
  writer.Ints(g.scatter_dims_to_operand_dims);
  writer.Ints(g.input_batching_dims);
  std::vector<int64_t> indices_batching;
  for (int64_t position : g.batch_positions) {
    indices_batching.push_back(position < g.index_vector_dim ? position : position + 1);
  }
  writer.Ints(indices_batching);
  writer.Ints(g.element_bytes);
  writer.Int(static_cast<int64_t>(g.row_op));
  writer.Int(static_cast<int64_t>(g.element_type));
  writer.Ints(operand_values_);
  writer.Int(indices_value_);
  writer.Ints(update_values_);
  writer.Ints(output_values_);
  for (const std::vector<char>& fill : fills_) {
    writer.String(absl::string_view(fill.data(), fill.size()));
  }
  return writer.ScalarFunction(*combiner_, absl::StrCat("scatter %", name(), "'s combiner"));
}

std::unique_ptr<Thunk> LoadScatterThunk(std::string name, ThunkReader& reader) {
  std::vector<int64_t> operand_dims = reader.Ints();
  std::vector<int64_t> indices_dims = reader.Ints();
  std::vector<int64_t> update_dims = reader.Ints();
  const int64_t indices_type = reader.Int();
  ScatterDimensionNumbers dn;
  dn.set_index_vector_dim(reader.Int());
  for (int64_t d : reader.Ints()) dn.add_update_window_dims(d);
  for (int64_t d : reader.Ints()) dn.add_inserted_window_dims(d);
  for (int64_t d : reader.Ints()) dn.add_scatter_dims_to_operand_dims(d);
  for (int64_t d : reader.Ints()) dn.add_input_batching_dims(d);
  for (int64_t d : reader.Ints()) dn.add_scatter_indices_batching_dims(d);
  std::vector<int64_t> element_bytes = reader.Ints();
  const int64_t row_op = reader.Int();
  const int64_t element_type = reader.Int();
  std::vector<int64_t> operand_values = reader.Ints();
  const int64_t indices_value = reader.Value();
  std::vector<int64_t> update_values = reader.Values();
  std::vector<int64_t> output_values = reader.Values();
  std::vector<std::vector<char>> fills;
  for (size_t i = 0; i < output_values.size() && reader.ok(); ++i) {
    const std::string fill = reader.String();
    fills.emplace_back(fill.begin(), fill.end());
  }
  std::unique_ptr<CompiledScalarFunction> combiner = reader.ScalarFunction();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("scatter %", name, ": ", why));
    return nullptr;
  };
  // Shapes of at most 2^48 elements, so that no size below overflows.
  constexpr int64_t kMaxElements = int64_t{1} << 48;
  auto elements_of = [&](const std::vector<int64_t>& dims) -> int64_t {
    int64_t elements = 1;
    for (int64_t d : dims) {
      if (d < 0 || (d > 0 && elements > kMaxElements / d)) return -1;
      elements *= d;
    }
    return elements;
  };
  const int64_t operand_elements = elements_of(operand_dims);
  const int64_t indices_elements = elements_of(indices_dims);
  const int64_t update_elements = elements_of(update_dims);
  if (operand_elements < 0 || indices_elements < 0 || update_elements < 0) {
    return fail("a negative or too large dimension");
  }
  if (!IsArrayTypeNumber(indices_type) ||
      !IsByteIntegerType(static_cast<PrimitiveType>(indices_type))) {
    return fail(absl::StrCat("indices of type number ", indices_type));
  }
  const auto index_type = static_cast<PrimitiveType>(indices_type);
  absl::StatusOr<ScatterIndexing> indexing = AnalyzeScatterIndexing(
      ShapeUtil::MakeShape(F32, operand_dims), ShapeUtil::MakeShape(index_type, indices_dims),
      ShapeUtil::MakeShape(F32, update_dims), dn);
  if (!indexing.ok()) return fail(indexing.status().message());
  const size_t n = output_values.size();
  if (n == 0 || operand_values.size() != n || update_values.size() != n ||
      element_bytes.size() != n) {
    return fail("operands, updates, outputs and element sizes that do not match");
  }
  if (!reader.ValueHas(indices_value, indices_elements * primitive_util::ByteWidth(index_type))) {
    return fail("an indices value whose size does not match its shape");
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t bytes = element_bytes[i];
    if (bytes < 1 || bytes > 16) return fail(absl::StrCat("elements of ", bytes, " bytes"));
    const bool filled = !fills[i].empty();
    if (filled ? (operand_values[i] != -1 || static_cast<int64_t>(fills[i].size()) != bytes)
               : !reader.ValueHas(operand_values[i], operand_elements * bytes)) {
      return fail(absl::StrCat("operand ", i, " matches neither a value nor a fill"));
    }
    if (!reader.ValueHas(update_values[i], update_elements * bytes) ||
        !reader.ValueHas(output_values[i], operand_elements * bytes)) {
      return fail("values whose sizes do not match its shapes");
    }
  }
  ScatterThunk::Geometry g;
  static_cast<ScatterIndexing&>(g) = *std::move(indexing);
  g.element_bytes = std::move(element_bytes);
  if (row_op < static_cast<int64_t>(ScatterThunk::Geometry::RowOp::kNone) ||
      row_op > static_cast<int64_t>(ScatterThunk::Geometry::RowOp::kMin) ||
      !IsArrayTypeNumber(element_type)) {
    return fail(absl::StrCat("row op ", row_op, " on type number ", element_type));
  }
  g.row_op = static_cast<ScatterThunk::Geometry::RowOp>(row_op);
  g.element_type = static_cast<PrimitiveType>(element_type);
  if (g.row_op != ScatterThunk::Geometry::RowOp::kNone &&
      (n != 1 || primitive_util::ByteWidth(g.element_type) != g.element_bytes[0] ||
       (g.element_type != F32 && g.element_type != F64 && g.element_type != S32 &&
        g.element_type != S64 && g.element_type != U32 && g.element_type != U64))) {
    return fail("a row op on elements it does not combine");
  }
  return std::make_unique<ScatterThunk>(
      std::move(name), std::move(combiner), std::move(g), std::move(operand_values), indices_value,
      std::move(update_values), std::move(output_values), std::move(fills));
}

}  // namespace axle::cpu
