//===- evaluator_reduce.cc - reduce, reduce-window, map, scan --------------===//
//
// The ops that apply a computation to elements. Each output element folds
// its inputs strictly in row-major order of the reduced (or window)
// positions, starting from the init value, as XLA's evaluator does; the
// computation runs lane-wise over all outputs at once (one lane per output
// element), which keeps that order while costing a loop per step.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "axle/base/status_macros.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/eval/lanewise_computation.h"

namespace axle::eval_internal {
namespace {

// The array shapes of a result that is one array or a tuple of arrays.
absl::StatusOr<std::vector<Shape>> ResultArrays(const HloInstruction& instruction, int64_t count) {
  const Shape& shape = instruction.shape();
  std::vector<Shape> shapes;
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) shapes.push_back(s);
  } else {
    shapes.push_back(shape);
  }
  if (static_cast<int64_t>(shapes.size()) != count) {
    return InvalidInstruction(
        instruction, absl::StrCat("expects ", count, " results, its shape has ", shapes.size()));
  }
  for (const Shape& s : shapes) {
    if (!s.IsArray()) return InvalidInstruction(instruction, "results must be arrays");
  }
  return shapes;
}

// A byte buffer of n elements of one type.
struct Buffer {
  PrimitiveType type;
  int width;
  std::vector<uint8_t> bytes;
  Buffer(PrimitiveType t, int64_t n)
      : type(t), width(primitive_util::ByteWidth(t)), bytes(std::max<int64_t>(n, 1) * width) {}
  uint8_t* at(int64_t i) { return bytes.data() + i * width; }
  Lanes lanes() const { return Lanes{type, bytes.data(), false}; }
};

// The result: one array per accumulator (of shapes `results`), or their
// tuple.
Literal PackResults(const HloInstruction& instruction, absl::Span<const Shape> results,
                    const std::vector<Buffer>& accumulators) {
  std::vector<Literal> out;
  for (size_t k = 0; k < results.size(); ++k) {
    Literal literal(results[k]);
    std::memcpy(literal.untyped_data(), accumulators[k].bytes.data(), literal.size_bytes());
    out.push_back(std::move(literal));
  }
  if (!instruction.shape().IsTuple()) return std::move(out[0]);
  return Literal::MakeTuple(std::move(out));
}

void Fill(Buffer& buffer, const Literal& scalar, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(buffer.at(i), scalar.untyped_data(), buffer.width);
}

absl::Status CheckInits(const HloInstruction& instruction, absl::Span<const Literal* const> inputs,
                        absl::Span<const Literal* const> inits, absl::Span<const Shape> results) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    AXLE_RETURN_IF_ERROR(ExpectArray(instruction, *inputs[k], absl::StrCat("input ", k)));
    AXLE_RETURN_IF_ERROR(ExpectArray(instruction, *inits[k], absl::StrCat("init value ", k)));
    if (inits[k]->shape().rank() != 0) {
      return InvalidInstruction(instruction, absl::StrCat("init value ", k, " must be a scalar"));
    }
    if (!ShapeUtil::SameDimensions(inputs[k]->shape(), inputs[0]->shape())) {
      return InvalidInstruction(instruction, "inputs must have the same dimensions");
    }
    if (results[k].element_type() != inits[k]->shape().element_type()) {
      return InvalidInstruction(instruction, absl::StrCat("result ", k, " and init value ", k,
                                                          " have different element types"));
    }
  }
  return absl::OkStatus();
}

// The operands of a reduce or reduce-window (inputs..., init values...),
// checked, and the arrays of its result.
struct ReduceOperands {
  int64_t count;
  absl::Span<const Literal*const> inputs, inits;
  std::vector<Shape> results;
};
absl::StatusOr<ReduceOperands> SplitReduceOperands(const HloInstruction& instruction,
                                                   absl::Span<const Literal* const> operands) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return InvalidInstruction(instruction, "needs inputs and as many init values");
  }
  int64_t count = static_cast<int64_t>(operands.size()) / 2;
  ReduceOperands split{count, operands.subspan(0, count), operands.subspan(count), {}};
  AXLE_ASSIGN_OR_RETURN(split.results, ResultArrays(instruction, count));
  AXLE_RETURN_IF_ERROR(CheckInits(instruction, split.inputs, split.inits, split.results));
  return split;
}

// Runs `computation` on (accumulators..., values...) for `lanes` lanes and
// stores the results back into the accumulators.
absl::Status Step(HloEvaluator& evaluator, const HloComputation& computation,
                  std::vector<Buffer>& accumulators, std::vector<Buffer>& values,
                  std::vector<Buffer>& scratch, int64_t lanes) {
  std::vector<Lanes> args;
  args.reserve(accumulators.size() + values.size());
  for (Buffer& b : accumulators) args.push_back(b.lanes());
  for (Buffer& b : values) args.push_back(b.lanes());
  std::vector<void*> results;
  results.reserve(scratch.size());
  for (Buffer& b : scratch) results.push_back(b.bytes.data());
  AXLE_RETURN_IF_ERROR(evaluator.RunLanewise(computation, args, results, lanes));
  for (size_t k = 0; k < accumulators.size(); ++k) {
    std::memcpy(accumulators[k].bytes.data(), scratch[k].bytes.data(),
                lanes * accumulators[k].width);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvaluateReduce(HloEvaluator& evaluator, const HloInstruction& instruction,
                                       absl::Span<const Literal* const> operands) {
  AXLE_ASSIGN_OR_RETURN(ReduceOperands split, SplitReduceOperands(instruction, operands));
  auto& [count, inputs, inits, results] = split;
  const Shape& input_shape = inputs[0]->shape();
  int64_t rank = input_shape.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : cast<HloDimensionsInstruction>(&instruction)->dimensions()) {
    if (d < 0 || d >= rank || reduced[d]) {
      return InvalidInstruction(instruction, absl::StrCat("bad reduced dimension ", d));
    }
    reduced[d] = true;
  }
  std::vector<int64_t> strides = Strides(input_shape);
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
  for (int64_t d = 0; d < rank; ++d) {
    (reduced[d] ? reduced_dims : kept_dims).push_back(input_shape.dimensions(d));
    (reduced[d] ? reduced_strides : kept_strides).push_back(strides[d]);
  }
  for (const Shape& s : results) {
    if (s.dimensions() != kept_dims) {
      return InvalidInstruction(instruction, "result dimensions must be the kept input dimensions");
    }
  }
  int64_t outputs = results[0].num_elements();
  int64_t steps = 1;
  for (int64_t d : reduced_dims) steps *= d;

  // Offsets of every output's first input element.
  std::vector<int64_t> base(outputs, 0);
  {
    std::vector<int64_t> index(kept_dims.size(), 0);
    int64_t offset = 0;
    for (int64_t o = 0; o < outputs; ++o) {
      base[o] = offset;
      for (int64_t d = static_cast<int64_t>(kept_dims.size()) - 1; d >= 0; --d) {
        offset += kept_strides[d];
        if (++index[d] < kept_dims[d]) break;
        offset -= kept_strides[d] * kept_dims[d];
        index[d] = 0;
      }
    }
  }
  std::vector<Buffer> accumulators, values, scratch;
  for (int64_t k = 0; k < count; ++k) {
    accumulators.emplace_back(results[k].element_type(), outputs);
    Fill(accumulators.back(), *inits[k], outputs);
    values.emplace_back(inputs[k]->shape().element_type(), outputs);
    scratch.emplace_back(results[k].element_type(), outputs);
  }
  if (outputs > 0) {
    std::vector<int64_t> index(reduced_dims.size(), 0);
    int64_t offset = 0;
    for (int64_t r = 0; r < steps; ++r) {
      for (int64_t k = 0; k < count; ++k) {
        const auto* src = static_cast<const uint8_t*>(inputs[k]->untyped_data());
        Buffer& v = values[k];
        for (int64_t o = 0; o < outputs; ++o)
          std::memcpy(v.at(o), src + (base[o] + offset) * v.width, v.width);
      }
      AXLE_RETURN_IF_ERROR(
          Step(evaluator, *instruction.to_apply(), accumulators, values, scratch, outputs));
      for (int64_t d = static_cast<int64_t>(reduced_dims.size()) - 1; d >= 0; --d) {
        offset += reduced_strides[d];
        if (++index[d] < reduced_dims[d]) break;
        offset -= reduced_strides[d] * reduced_dims[d];
        index[d] = 0;
      }
    }
  }
  return PackResults(instruction, results, accumulators);
}

absl::StatusOr<Literal> EvaluateReduceWindow(HloEvaluator& evaluator,
                                             const HloInstruction& instruction,
                                             absl::Span<const Literal* const> operands) {
  AXLE_ASSIGN_OR_RETURN(ReduceOperands split, SplitReduceOperands(instruction, operands));
  auto& [count, inputs, inits, results] = split;
  const Window& window = cast<HloWindowInstruction>(&instruction)->window();
  const Shape& input_shape = inputs[0]->shape();
  int64_t rank = input_shape.rank();
  if (window.dimensions_size() != rank) {
    return InvalidInstruction(instruction, "the window needs one entry per input dimension");
  }
  for (const Shape& s : results) {
    if (s.rank() != rank || s.dimensions() != results[0].dimensions()) {
      return InvalidInstruction(instruction, "results must have the input's rank");
    }
  }
  std::vector<int64_t> window_dims;
  for (const WindowDimension& w : window.dimensions()) {
    if (w.size() < 0 || w.stride() < 1 || w.window_dilation() < 1 || w.base_dilation() < 1) {
      return InvalidInstruction(instruction,
                                "window sizes must be >= 0, strides and dilations >= 1");
    }
    window_dims.push_back(w.size());
  }
  const std::vector<int64_t>& out_dims = results[0].dimensions();
  int64_t outputs = results[0].num_elements();
  std::vector<int64_t> strides = Strides(input_shape);

  std::vector<Buffer> accumulators, values, scratch, lane_accumulators;
  for (int64_t k = 0; k < count; ++k) {
    accumulators.emplace_back(results[k].element_type(), outputs);
    Fill(accumulators.back(), *inits[k], outputs);
  }
  int64_t window_count = 1;
  for (int64_t d : window_dims) window_count *= d;
  std::vector<int64_t> lane_output, lane_input;
  lane_output.reserve(outputs);
  lane_input.reserve(outputs);
  std::vector<int64_t> out_strides = ShapeUtil::RowMajorStrides(out_dims);
  std::vector<int64_t> w_index(rank, 0);
  // Per dimension, the output positions whose window position w_index[d]
  // lands on a real input element (not padding, not a base-dilation hole),
  // with that element's offset along the dimension.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> valid(rank);
  for (int64_t w = 0; w < window_count && outputs > 0; ++w) {
    lane_output.clear();
    lane_input.clear();
    bool any = true;
    for (int64_t d = 0; d < rank; ++d) {
      const WindowDimension& wd = window.dimensions(d);
      valid[d].clear();
      for (int64_t o = 0; o < out_dims[d]; ++o) {
        int64_t p = o * wd.stride() - wd.padding_low() + w_index[d] * wd.window_dilation();
        if (p < 0 || p % wd.base_dilation() != 0) continue;
        int64_t q = p / wd.base_dilation();
        if (q >= input_shape.dimensions(d)) continue;
        valid[d].emplace_back(o * out_strides[d], q * strides[d]);
      }
      any = any && !valid[d].empty();
    }
    if (any) {
      // The lanes are the product of the per-dimension lists, row-major.
      std::vector<size_t> pick(rank, 0);
      while (true) {
        int64_t out = 0, in = 0;
        for (int64_t d = 0; d < rank; ++d) {
          out += valid[d][pick[d]].first;
          in += valid[d][pick[d]].second;
        }
        lane_output.push_back(out);
        lane_input.push_back(in);
        int64_t d = rank - 1;
        for (; d >= 0; --d) {
          if (++pick[d] < valid[d].size()) break;
          pick[d] = 0;
        }
        if (d < 0) break;
      }
    }
    int64_t lanes = static_cast<int64_t>(lane_output.size());
    if (lanes > 0) {
      values.clear();
      scratch.clear();
      lane_accumulators.clear();
      for (int64_t k = 0; k < count; ++k) {
        lane_accumulators.emplace_back(results[k].element_type(), lanes);
        values.emplace_back(inputs[k]->shape().element_type(), lanes);
        scratch.emplace_back(results[k].element_type(), lanes);
        const auto* src = static_cast<const uint8_t*>(inputs[k]->untyped_data());
        for (int64_t l = 0; l < lanes; ++l) {
          std::memcpy(values[k].at(l), src + lane_input[l] * values[k].width, values[k].width);
          std::memcpy(lane_accumulators[k].at(l), accumulators[k].at(lane_output[l]),
                      accumulators[k].width);
        }
      }
      AXLE_RETURN_IF_ERROR(
          Step(evaluator, *instruction.to_apply(), lane_accumulators, values, scratch, lanes));
      for (int64_t k = 0; k < count; ++k) {
        for (int64_t l = 0; l < lanes; ++l) {
          std::memcpy(accumulators[k].at(lane_output[l]), lane_accumulators[k].at(l),
                      accumulators[k].width);
        }
      }
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++w_index[d] < window_dims[d]) break;
      w_index[d] = 0;
    }
  }
  return PackResults(instruction, results, accumulators);
}

absl::StatusOr<Literal> EvaluateMap(HloEvaluator& evaluator, const HloInstruction& instruction,
                                    absl::Span<const Literal* const> operands) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return InvalidInstruction(instruction, "map must produce an array");
  std::vector<Lanes> args;
  for (size_t i = 0; i < operands.size(); ++i) {
    AXLE_RETURN_IF_ERROR(ExpectArray(instruction, *operands[i], absl::StrCat("operand ", i)));
    if (!ShapeUtil::SameDimensions(operands[i]->shape(), shape)) {
      return InvalidInstruction(instruction, "operands must have the result's dimensions");
    }
    args.push_back(LanesOf(*operands[i]));
  }
  Literal result(shape);
  void* out = result.untyped_data();
  AXLE_RETURN_IF_ERROR(evaluator.RunLanewise(*instruction.to_apply(), args,
                                             absl::MakeConstSpan(&out, 1), result.element_count()));
  return result;
}

namespace {

// Calls copy(array_offset, slice_offset, bytes) for each contiguous run of
// bytes of slice `k` of dimension `dim` of an array of `shape` (the slice
// drops the dimension).
template <typename Copy>
void ForEachSliceRun(const Shape& shape, int64_t dim, int64_t k, Copy copy) {
  int width = primitive_util::ByteWidth(shape.element_type());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dimensions(d);
  for (int64_t d = dim + 1; d < shape.rank(); ++d) inner *= shape.dimensions(d);
  int64_t length = shape.dimensions(dim);
  for (int64_t o = 0; o < outer; ++o) {
    copy((o * length + k) * inner * width, o * inner * width, inner * width);
  }
}

// Copies slice `k` of dimension `dim` out of `array`.
void CopySlice(const Literal& array, int64_t dim, int64_t k, Literal& slice) {
  const auto* src = static_cast<const uint8_t*>(array.untyped_data());
  auto* dst = static_cast<uint8_t*>(slice.untyped_data());
  ForEachSliceRun(array.shape(), dim, k, [&](int64_t at, int64_t slice_at, int64_t bytes) {
    std::memcpy(dst + slice_at, src + at, bytes);
  });
}

// Copies `slice` into slice `k` of dimension `dim` of `array`.
void StoreSlice(const Literal& slice, int64_t dim, int64_t k, Literal& array) {
  const auto* src = static_cast<const uint8_t*>(slice.untyped_data());
  auto* dst = static_cast<uint8_t*>(array.untyped_data());
  ForEachSliceRun(array.shape(), dim, k, [&](int64_t at, int64_t slice_at, int64_t bytes) {
    std::memcpy(dst + at, src + slice_at, bytes);
  });
}

}  // namespace

// scan(inputs..., inits...): for i along the scan dimension (backwards when
// is_reverse), (outputs_i..., carries) = to_apply(inputs_i..., carries); the
// result is (outputs stacked along the scan dimension..., final carries...).
absl::StatusOr<Literal> EvaluateScan(HloEvaluator& evaluator, const HloInstruction& instruction,
                                     absl::Span<const Literal* const> operands) {
  const auto& attrs = cast<HloScanInstruction>(&instruction)->attrs();
  int64_t carries = attrs.num_carries;
  int64_t input_count = static_cast<int64_t>(operands.size()) - carries;
  if (attrs.dimensions.size() != 1 || carries < 0 || input_count < 1) {
    return InvalidInstruction(instruction, "needs dimensions={d}, inputs and num_carries inits");
  }
  int64_t dim = attrs.dimensions[0];
  const Shape& first = operands[0]->shape();
  if (!first.IsArray() || dim < 0 || dim >= first.rank()) {
    return InvalidInstruction(instruction, "the scan dimension must be a dimension of the inputs");
  }
  int64_t length = first.dimensions(dim);
  const Shape& shape = instruction.shape();
  int64_t output_count = (shape.IsTuple() ? shape.tuple_shapes_size() : 1) - carries;
  if (output_count < 0) return InvalidInstruction(instruction, "fewer results than carries");
  std::vector<Literal> outputs;
  for (int64_t j = 0; j < output_count; ++j) {
    const Shape& s = shape.IsTuple() ? shape.tuple_shapes(j) : shape;
    if (!s.IsArray() || s.rank() <= dim || s.dimensions(dim) != length) {
      return InvalidInstruction(instruction, "outputs must keep the scan dimension");
    }
    outputs.emplace_back(s);
  }
  std::vector<Literal> state;
  for (int64_t c = 0; c < carries; ++c) state.push_back(operands[input_count + c]->Clone());
  std::vector<Literal> slices;
  for (int64_t i = 0; i < input_count; ++i) {
    const Shape& s = operands[i]->shape();
    if (!s.IsArray() || s.rank() != first.rank() || s.dimensions(dim) != length) {
      return InvalidInstruction(instruction, "inputs must agree on the scan dimension");
    }
    slices.emplace_back(ShapeUtil::DeleteDimensions({dim}, s));
  }
  for (int64_t step = 0; step < length; ++step) {
    int64_t k = attrs.is_reverse ? length - 1 - step : step;
    std::vector<const Literal*> args;
    for (int64_t i = 0; i < input_count; ++i) {
      CopySlice(*operands[i], dim, k, slices[i]);
      args.push_back(&slices[i]);
    }
    for (Literal& c : state) args.push_back(&c);
    AXLE_ASSIGN_OR_RETURN(Literal result,
                          evaluator.EvaluateComputation(*instruction.to_apply(), args));
    std::vector<Literal> parts;
    if (result.shape().IsTuple()) {
      parts = result.DecomposeTuple();
    } else {
      parts.push_back(std::move(result));
    }
    if (static_cast<int64_t>(parts.size()) != output_count + carries) {
      return InvalidInstruction(instruction, "to_apply must return the outputs and the carries");
    }
    for (int64_t j = 0; j < output_count; ++j) {
      if (parts[j].element_count() * primitive_util::ByteWidth(parts[j].shape().element_type()) *
              length !=
          outputs[j].size_bytes()) {
        return InvalidInstruction(instruction, "to_apply's output does not fit the scan's result");
      }
      StoreSlice(parts[j], dim, k, outputs[j]);
    }
    for (int64_t c = 0; c < carries; ++c) state[c] = std::move(parts[output_count + c]);
  }
  for (Literal& c : state) outputs.push_back(std::move(c));
  if (!shape.IsTuple()) return std::move(outputs[0]);
  return Literal::MakeTuple(std::move(outputs));
}

}  // namespace axle::eval_internal
