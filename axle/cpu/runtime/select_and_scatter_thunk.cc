//===- select_and_scatter_thunk.cc - select-and-scatter, compiled select ---===//
#include "axle/cpu/runtime/select_and_scatter_thunk.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "axle/core/compare_by_direction.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {
namespace {

// Advances `index` (over `sizes`) to the next row-major position; false
// after the last.
bool Next(std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < sizes[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Geometry::inline_select as serialized: 0 for none, else 1 + the
// direction's place here.
constexpr ComparisonDirection kInlineDirections[] = {
    ComparisonDirection::kGe, ComparisonDirection::kGt, ComparisonDirection::kLe,
    ComparisonDirection::kLt};
constexpr int64_t kNumInlineDirections = std::size(kInlineDirections);

int64_t InlineSelectCode(std::optional<ComparisonDirection> select) {
  for (int64_t i = 0; i < kNumInlineDirections; ++i) {
    if (select == kInlineDirections[i]) return i + 1;
  }
  return 0;
}

// Windows without base dilation, with the f32 inline select and an add
// scatter: each window's base plus fixed element offsets, the source's
// innermost dimension in a tight loop (its windows' bases a fixed stride
// apart), the select's comparison a template argument. A window that
// reaches into the padding (a max pool with padding='SAME') checks each
// element's position and leaves out those in the padding, as the general
// walk does; the others check nothing.
struct InlineWindows {
  const float* operand;
  const float* source;
  float* output;
  const int64_t* offsets;
  // offsets[j]'s position in the window along each dimension times the
  // window dilation (num_offsets x rank).
  const int64_t* taps;
  int64_t num_offsets;
  const std::vector<int64_t>& base_strides;  // window stride x operand stride
  const std::vector<int64_t>& source_dims;
  const std::vector<int64_t>& operand_dims;
  const std::vector<int64_t>& window_strides;
  const std::vector<int64_t>& padding_low;
  // Along each dimension, the source indices [inside_begin, inside_end)
  // whose windows lie inside the operand.
  const std::vector<int64_t>& inside_begin;
  const std::vector<int64_t>& inside_end;
  int64_t base_shift;  // the offset of padding_low's position (<= 0)
  int64_t source_count;

  // The window of source position `t` (its last dimension `i`) at element
  // offset `base`, leaving out positions in the padding.
  template <ComparisonDirection kSelect>
  void Border(const std::vector<int64_t>& t, int64_t i, int64_t base, float value) const {
    const int64_t rank = static_cast<int64_t>(source_dims.size());
    int64_t selected = -1;
    for (int64_t j = 0; j < num_offsets; ++j) {
      bool inside = true;
      for (int64_t d = 0; d < rank && inside; ++d) {
        const int64_t s = d + 1 < rank ? t[d] : i;
        const int64_t position = s * window_strides[d] - padding_low[d] + taps[j * rank + d];
        inside = position >= 0 && position < operand_dims[d];
      }
      if (!inside) continue;
      const int64_t offset = base + offsets[j];
      if (selected < 0 || !CompareByDirection(kSelect, operand[selected], operand[offset])) {
        selected = offset;
      }
    }
    if (selected >= 0) output[selected] += value;
  }

  // The windows of source rows [begin, end) of dimension 0 (rank >= 2), or
  // of every source element (rank < 2).
  template <ComparisonDirection kSelect>
  void Run(int64_t begin, int64_t end) const {
    const int64_t rank = static_cast<int64_t>(source_dims.size());
    if (rank == 0) {
      output[offsets[0]] += source[0];  // one window of one element
      return;
    }
    const int64_t inner = source_dims[rank - 1];
    const int64_t inner_stride = base_strides[rank - 1];
    std::vector<int64_t> outer_dims(source_dims.begin(), source_dims.end() - 1);
    std::vector<int64_t> t(rank - 1, 0);
    int64_t first = 0, last = source_count;
    if (rank >= 2) {
      const int64_t row = source_count / source_dims[0];
      t[0] = begin;
      first = begin * row;
      last = end * row;
    }
    for (int64_t linear = first; linear < last; linear += inner) {
      int64_t base = base_shift;
      bool row_inside = true;
      for (int64_t d = 0; d + 1 < rank; ++d) {
        base += t[d] * base_strides[d];
        row_inside = row_inside && t[d] >= inside_begin[d] && t[d] < inside_end[d];
      }
      const int64_t inside_from = row_inside ? inside_begin[rank - 1] : inner;
      const int64_t inside_to = row_inside ? inside_end[rank - 1] : inner;
      for (int64_t i = 0; i < inside_from; ++i) {
        Border<kSelect>(t, i, base + i * inner_stride, source[linear + i]);
      }
      const float* values = source + linear;
      for (int64_t i = inside_from, at = base + i * inner_stride; i < inside_to;
           ++i, at += inner_stride) {
        int64_t selected = at + offsets[0];
        for (int64_t j = 1; j < num_offsets; ++j) {
          const int64_t offset = at + offsets[j];
          if (!CompareByDirection(kSelect, operand[selected], operand[offset])) {
            selected = offset;
          }
        }
        output[selected] += values[i];
      }
      for (int64_t i = std::max(inside_from, inside_to); i < inner; ++i) {
        Border<kSelect>(t, i, base + i * inner_stride, source[linear + i]);
      }
      Next(t, outer_dims);
    }
  }

  template <ComparisonDirection kSelect>
  void Run(const ThunkContext& context, int threads, bool split) const {
    if (!split) {
      Run<kSelect>(0, source_dims.empty() ? 0 : source_dims[0]);
      return;
    }
    context.thread_pool->ParallelFor(
        source_dims[0], 1, [&](int64_t begin, int64_t end) { Run<kSelect>(begin, end); }, threads);
  }
};

// Work (window elements visited) and output bytes from which the inline
// walk and the init fill are split across the intra-op pool.
constexpr int64_t kMinParallelWindowElements = int64_t{1} << 16;
constexpr int64_t kMinParallelFillBytes = int64_t{1} << 18;

}  // namespace

absl::Status SelectAndScatterThunk::Execute(const ThunkContext& context) const {
  const Geometry& g = geometry_;
  const int64_t bytes = g.element_bytes;
  const int64_t rank = static_cast<int64_t>(g.operand_dims.size());
  const auto* operand = static_cast<const char*>(context.address(values_.operand));
  const auto* source = static_cast<const char*>(context.address(values_.source));
  const auto* init = static_cast<const char*>(context.address(values_.init_value));
  auto* output = static_cast<char*>(context.address(values_.output));
  int64_t count = 1, source_count = 1, window_count = 1;
  std::vector<int64_t> window_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    count *= g.operand_dims[d];
    source_count *= g.source_dims[d];
    window_sizes.push_back(g.window.dimensions(d).size());
    window_count *= window_sizes.back();
  }
  const int threads = context.thread_pool == nullptr ? 1
                      : context.max_threads > 0      ? context.max_threads
                                                     : context.thread_pool->num_threads();
  if (bytes == 4) {
    uint32_t value;
    std::memcpy(&value, init, 4);
    auto* output_u32 = reinterpret_cast<uint32_t*>(output);
    if (threads > 1 && count * 4 >= kMinParallelFillBytes) {
      context.thread_pool->ParallelFor(
          count, kMinParallelFillBytes / 8,
          [&](int64_t begin, int64_t end) {
            std::fill(output_u32 + begin, output_u32 + end, value);
          },
          threads);
    } else {
      std::fill_n(output_u32, count, value);
    }
  } else {
    for (int64_t i = 0; i < count; ++i) std::memcpy(output + i * bytes, init, bytes);
  }
  if (count == 0 || source_count == 0 || window_count == 0) return absl::OkStatus();
  bool base_dilated = false;
  for (int64_t d = 0; d < rank; ++d) base_dilated |= g.window.dimensions(d).base_dilation() != 1;
  const bool inline_ops = g.inline_select.has_value();
  const auto* operand_f32 = reinterpret_cast<const float*>(operand);
  const std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(g.operand_dims);
  std::vector<int64_t> s(rank, 0), k(rank, 0);
  if (inline_ops && !base_dilated) {
    // Each window is its base offset plus fixed element offsets; along each
    // dimension, the windows of source indices [inside_begin, inside_end)
    // lie inside the operand.
    std::vector<int64_t> element_offsets, taps;
    do {
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t tap = k[d] * g.window.dimensions(d).window_dilation();
        offset += tap * strides[d];
        taps.push_back(tap);
      }
      element_offsets.push_back(offset);
    } while (Next(k, window_sizes));
    std::vector<int64_t> base_strides(rank), window_strides(rank), padding_low(rank);
    std::vector<int64_t> inside_begin(rank), inside_end(rank);
    int64_t base_shift = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const WindowDimension& w = g.window.dimensions(d);
      base_strides[d] = w.stride() * strides[d];
      window_strides[d] = w.stride();
      padding_low[d] = w.padding_low();
      base_shift -= w.padding_low() * strides[d];
      // s * stride - padding_low >= 0 and s * stride - padding_low +
      // (size - 1) * dilation < operand_dims[d].
      const int64_t reach = (w.size() - 1) * w.window_dilation();
      const int64_t begin =
          w.padding_low() <= 0 ? 0 : (w.padding_low() + w.stride() - 1) / w.stride();
      const int64_t room = g.operand_dims[d] - 1 - reach + w.padding_low();
      const int64_t end = room < 0 ? 0 : room / w.stride() + 1;
      inside_begin[d] = std::min(begin, g.source_dims[d]);
      inside_end[d] = std::max(inside_begin[d], std::min(end, g.source_dims[d]));
    }
    auto* output_f32 = reinterpret_cast<float*>(output);
    const auto* source_f32 = reinterpret_cast<const float*>(source);
    InlineWindows windows{operand_f32,    source_f32,
                          output_f32,     element_offsets.data(),
                          taps.data(),    static_cast<int64_t>(element_offsets.size()),
                          base_strides,   g.source_dims,
                          g.operand_dims, window_strides,
                          padding_low,    inside_begin,
                          inside_end,     base_shift,
                          source_count};
    // Source rows of dimension 0 split across the pool when their windows
    // do not overlap along it (each output element then has one writer):
    // batch dimensions, and pools whose stride is at least their window.
    bool split = false;
    if (rank >= 2 && threads > 1 && g.source_dims[0] >= 2 &&
        source_count * window_count >= kMinParallelWindowElements) {
      const WindowDimension& w = g.window.dimensions(0);
      split = w.stride() >= (w.size() - 1) * w.window_dilation() + 1;
    }
    switch (*g.inline_select) {
      case ComparisonDirection::kGe:
        windows.Run<ComparisonDirection::kGe>(context, threads, split);
        break;
      case ComparisonDirection::kGt:
        windows.Run<ComparisonDirection::kGt>(context, threads, split);
        break;
      case ComparisonDirection::kLe:
        windows.Run<ComparisonDirection::kLe>(context, threads, split);
        break;
      case ComparisonDirection::kLt:
        windows.Run<ComparisonDirection::kLt>(context, threads, split);
        break;
      case ComparisonDirection::kEq:
      case ComparisonDirection::kNe:
        break;  // never inline (select_and_scatter_thunk_emitter.cc)
    }
    return absl::OkStatus();
  }
  int8_t keep = 0;
  void* select_results[] = {&keep};
  const void* parameters[2];
  void* scatter_results[1];
  for (int64_t source_linear = 0; source_linear < source_count;
       ++source_linear, Next(s, g.source_dims)) {
    int64_t selected = -1;
    do {
      int64_t offset = 0;
      bool inside = true;
      for (int64_t d = 0; d < rank && inside; ++d) {
        const WindowDimension& w = g.window.dimensions(d);
        int64_t p = s[d] * w.stride() - w.padding_low() + k[d] * w.window_dilation();
        if (base_dilated) {
          if (p % w.base_dilation() != 0) {
            inside = false;
            break;
          }
          p /= w.base_dilation();
        }
        inside = p >= 0 && p < g.operand_dims[d];
        offset += p * strides[d];
      }
      if (!inside) continue;
      if (selected < 0) {
        selected = offset;
        continue;
      }
      if (inline_ops) {
        if (!CompareByDirection(*g.inline_select, operand_f32[selected], operand_f32[offset])) {
          selected = offset;
        }
        continue;
      }
      parameters[0] = operand + selected * bytes;
      parameters[1] = operand + offset * bytes;
      select_->Run(parameters, select_results);
      if (keep == 0) selected = offset;
    } while (Next(k, window_sizes));
    if (selected < 0) continue;
    if (inline_ops) {
      float* target = reinterpret_cast<float*>(output) + selected;
      *target = *target + reinterpret_cast<const float*>(source)[source_linear];
      continue;
    }
    // The function loads both parameters before it stores its result.
    parameters[0] = output + selected * bytes;
    parameters[1] = source + source_linear * bytes;
    scatter_results[0] = output + selected * bytes;
    scatter_->Run(parameters, scatter_results);
  }
  return absl::OkStatus();
}

absl::Status SelectAndScatterThunk::Serialize(ThunkWriter& writer) const {
  const Geometry& g = geometry_;
  writer.Begin(ThunkTag::kSelectAndScatter, *this);
  writer.Ints(g.operand_dims);
  writer.Ints(g.source_dims);
  writer.Int(static_cast<int64_t>(g.window.dimensions().size()));
  for (const WindowDimension& w : g.window.dimensions()) {
    writer.Ints({w.size(), w.stride(), w.padding_low(), w.padding_high(), w.window_dilation(),
                 w.base_dilation(), w.window_reversal() ? 1 : 0});
  }
  writer.Int(g.element_bytes);
  writer.Int(InlineSelectCode(g.inline_select));
  writer.Ints({values_.operand, values_.source, values_.init_value, values_.output});
  const std::string what = absl::StrCat("select-and-scatter %", name());
  if (absl::Status status = writer.ScalarFunction(*select_, what); !status.ok()) return status;
  return writer.ScalarFunction(*scatter_, what);
}

std::unique_ptr<Thunk> LoadSelectAndScatterThunk(std::string name, ThunkReader& reader) {
  SelectAndScatterThunk::Geometry g;
  g.operand_dims = reader.Ints();
  g.source_dims = reader.Ints();
  const int64_t rank = reader.Count(64);  // each a count and 7 fields
  std::vector<std::vector<int64_t>> window;
  for (int64_t d = 0; d < rank && reader.ok(); ++d) window.push_back(reader.Ints());
  g.element_bytes = reader.Int();
  const int64_t inline_select = reader.Int();
  std::vector<int64_t> values = reader.Values();
  std::unique_ptr<CompiledScalarFunction> select = reader.ScalarFunction();
  std::unique_ptr<CompiledScalarFunction> scatter = reader.ScalarFunction();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("select-and-scatter %", name, ": ", why));
    return nullptr;
  };
  if (static_cast<int64_t>(g.operand_dims.size()) != rank ||
      static_cast<int64_t>(g.source_dims.size()) != rank || values.size() != 4) {
    return fail("operand, source and window of different ranks, or not four values");
  }
  // Sizes bounded so that no position or size below overflows.
  constexpr int64_t kMaxElements = int64_t{1} << 40, kMaxWindow = int64_t{1} << 20;
  int64_t count = 1, source_count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const std::vector<int64_t>& w = window[d];
    if (w.size() != 7) return fail("a window dimension of other than 7 fields");
    const int64_t o = g.operand_dims[d], source = g.source_dims[d];
    if (o < 0 || source < 0 || (o > 0 && count > kMaxElements / o) ||
        (source > 0 && source_count > kMaxElements / source)) {
      return fail("a negative or too large dimension");
    }
    count *= o;
    source_count *= source;
    if (w[0] < 0 || w[0] > kMaxWindow || w[1] < 1 || w[1] > kMaxWindow ||
        std::abs(w[2]) > kMaxWindow || std::abs(w[3]) > kMaxWindow || w[4] < 1 ||
        w[4] > kMaxWindow || w[5] < 1 || w[5] > kMaxWindow || w[6] != 0) {
      return fail(absl::StrCat("window dimension ", d, " out of range"));
    }
    WindowDimension& dimension = *g.window.add_dimensions();
    dimension.set_size(w[0]);
    dimension.set_stride(w[1]);
    dimension.set_padding_low(w[2]);
    dimension.set_padding_high(w[3]);
    dimension.set_window_dilation(w[4]);
    dimension.set_base_dilation(w[5]);
  }
  if (g.element_bytes < 1 || g.element_bytes > 16) {
    return fail(absl::StrCat("elements of ", g.element_bytes, " bytes"));
  }
  if (inline_select < 0 || inline_select > kNumInlineDirections ||
      (inline_select != 0 && g.element_bytes != 4)) {
    return fail(absl::StrCat("inline select ", inline_select, " on elements of ", g.element_bytes,
                             " bytes"));
  }
  if (inline_select != 0) g.inline_select = kInlineDirections[inline_select - 1];
  SelectAndScatterThunk::Values v;
  v.operand = values[0];
  v.source = values[1];
  v.init_value = values[2];
  v.output = values[3];
  if (!reader.ValueHas(v.operand, count * g.element_bytes) ||
      !reader.ValueHas(v.source, source_count * g.element_bytes) ||
      !reader.ValueHas(v.init_value, g.element_bytes) ||
      !reader.ValueHas(v.output, count * g.element_bytes)) {
    return fail("values whose sizes do not match its shapes");
  }
  return std::make_unique<SelectAndScatterThunk>(std::move(name), std::move(select),
                                                 std::move(scatter), std::move(g), v);
}

}  // namespace axle::cpu
