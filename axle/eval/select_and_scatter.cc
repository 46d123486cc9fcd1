//===- select_and_scatter.cc - select-and-scatter on host literals ---------===//
//
// XLA's SelectAndScatter, as its evaluator computes it: the result starts as
// init_value everywhere. For every source element (in row-major order) the
// window is placed on the operand as reduce-window places it (position =
// source_index * stride - padding_low + window_index * window_dilation,
// divided by base_dilation where that divides evenly); positions in padding
// or holes are not candidates. The window's candidates are visited in
// row-major order: the first becomes the selected one, and each later one
// replaces it when select(selected, candidate) is false. The source value is
// then combined into the result at the selected position with
// scatter(result, source). A window without candidates scatters nothing.
//
// select and scatter are called through the ComputationRunner; a select
// that is one compare of its parameters (GE/GT/LE/LT, IEEE order) and a
// scatter that is add, multiply, ... (kernel_util::ClassifyCombiner) run
// natively.
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <optional>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/compare_by_direction.h"
#include "axle/eval/kernel_util.h"
#include "axle/eval/kernels.h"

namespace axle {
namespace {

using namespace kernel_util;  // NOLINT(google-build-using-namespace): the kernels' helpers

constexpr absl::string_view kOp = "select-and-scatter";

// A select computation that is `compare(p0, p1)` with an ordering direction
// and IEEE (or integer) comparison, as a direction; nullopt otherwise.
std::optional<ComparisonDirection> NativeSelect(const HloComputation& select, PrimitiveType type) {
  if (select.num_parameters() != 2 || primitive_util::IsComplexType(type)) return std::nullopt;
  const HloInstruction* root = select.root_instruction();
  const auto* compare = dyn_cast<HloCompareInstruction>(root);
  if (compare == nullptr || compare->operand(0) != select.parameter_instruction(0) ||
      compare->operand(1) != select.parameter_instruction(1)) {
    return std::nullopt;
  }
  Shape scalar = ShapeUtil::MakeScalarShape(type);
  if (!ShapeUtil::Compatible(compare->operand(0)->shape(), scalar) ||
      !ShapeUtil::Compatible(compare->operand(1)->shape(), scalar)) {
    return std::nullopt;
  }
  if (compare->type() == ComparisonType::kFloatTotalOrder) return std::nullopt;
  switch (compare->direction()) {
    case ComparisonDirection::kGe:
    case ComparisonDirection::kGt:
    case ComparisonDirection::kLe:
    case ComparisonDirection::kLt:
      return compare->direction();
    default:
      return std::nullopt;
  }
}

template <typename T>
bool CompareValues(ComparisonDirection direction, T a, T b) {
  if constexpr (is_complex_v<T>) {
    return false;
  } else {
    return CompareByDirection(direction, a, b);
  }
}

absl::Status CheckScalarResult(const Literal& value, PrimitiveType type, absl::string_view what) {
  if (!ShapeUtil::Compatible(value.shape(), ShapeUtil::MakeScalarShape(type))) {
    return InvalidArgument(kOp, ": ", what, " returned ", value.shape().ToString(), " where a ",
                           primitive_util::LowercasePrimitiveTypeName(type),
                           " scalar was expected");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvaluateSelectAndScatter(const HloWindowInstruction& select_and_scatter,
                                                 const Literal& operand, const Literal& source,
                                                 const Literal& init_value,
                                                 const ComputationRunner& run) {
  AXLE_RETURN_IF_ERROR(CheckArray(operand, kOp, "operand"));
  AXLE_RETURN_IF_ERROR(CheckArray(source, kOp, "source"));
  AXLE_RETURN_IF_ERROR(CheckArray(init_value, kOp, "init_value"));
  const Shape& os = operand.shape();
  const PrimitiveType type = os.element_type();
  if (source.shape().element_type() != type || init_value.shape().element_type() != type ||
      init_value.shape().rank() != 0) {
    return InvalidArgument(kOp, ": source ", source.shape().ToString(), " and init_value ",
                           init_value.shape().ToString(), " must have the operand's element type",
                           " (init_value a scalar)");
  }
  AXLE_RETURN_IF_ERROR(CheckResultDims(select_and_scatter.shape(), os.dimensions(), kOp));
  if (select_and_scatter.shape().element_type() != type) {
    return InvalidArgument(kOp, ": result ", select_and_scatter.shape().ToString(),
                           " must have the operand's element type");
  }
  if (select_and_scatter.called_computations().size() != 2) {
    return InvalidArgument(kOp, ": needs a select and a scatter computation");
  }
  const HloComputation& select = *select_and_scatter.called_computations()[0];
  const HloComputation& scatter = *select_and_scatter.called_computations()[1];
  const Window& window = select_and_scatter.window();
  if (window.dimensions_size() != os.rank()) {
    return InvalidArgument(kOp, ": window has ", window.dimensions_size(),
                           " dimensions but the operand has rank ", os.rank());
  }
  std::vector<int64_t> expected_source, window_sizes;
  for (int64_t d = 0; d < os.rank(); ++d) {
    const WindowDimension& w = window.dimensions(d);
    if (w.size() < 0 || w.stride() < 1 || w.base_dilation() < 1 || w.window_dilation() < 1) {
      return InvalidArgument(kOp, ": window dimension ", d, " has a negative size or a ",
                             "non-positive stride or dilation");
    }
    expected_source.push_back(WindowedOutputSize(os.dimensions(d), w));
    window_sizes.push_back(w.size());
  }
  if (source.shape().dimensions() != expected_source) {
    return InvalidArgument(kOp, ": source ", source.shape().ToString(), " must have dimensions ",
                           DimsToString(expected_source), " (the reduce-window output)");
  }

  Literal result(select_and_scatter.shape());
  const int64_t width = primitive_util::ByteWidth(type);
  for (int64_t i = 0; i < result.element_count(); ++i) {
    std::memcpy(static_cast<uint8_t*>(result.untyped_data()) + i * width, init_value.untyped_data(),
                width);
  }
  if (source.element_count() == 0 || Product(window_sizes) == 0) return result;

  std::optional<ComparisonDirection> native_select = NativeSelect(select, type);
  Combiner native_scatter = ClassifyCombiner(scatter, type);
  // select(a, b) and scatter(a, b) on elements of the operand/result and
  // source, natively or through the runner.
  auto select_first = [&](int64_t selected, int64_t candidate) -> absl::StatusOr<bool> {
    if (native_select.has_value()) {
      return PrimitiveTypeSwitch(
          [&]<typename T>() -> bool {
            absl::Span<const T> v = operand.data<T>();
            return CompareValues<T>(*native_select, v[selected], v[candidate]);
          },
          type);
    }
    Literal a = ScalarAt(operand, selected), b = ScalarAt(operand, candidate);
    const Literal* args[] = {&a, &b};
    AXLE_ASSIGN_OR_RETURN(Literal keep, run(select, args));
    AXLE_RETURN_IF_ERROR(CheckScalarResult(keep, PRED, "select"));
    return keep.GetFirstElement<bool>();
  };
  auto scatter_into = [&](int64_t target, int64_t source_index) -> absl::Status {
    if (native_scatter != Combiner::kGeneric) {
      PrimitiveTypeSwitch(
          [&]<typename T>() {
            absl::Span<T> out = result.data<T>();
            out[target] = Combine<T>(native_scatter, out[target], source.data<T>()[source_index]);
          },
          type);
      return absl::OkStatus();
    }
    Literal a = ScalarAt(result, target), b = ScalarAt(source, source_index);
    const Literal* args[] = {&a, &b};
    AXLE_ASSIGN_OR_RETURN(Literal combined, run(scatter, args));
    AXLE_RETURN_IF_ERROR(CheckScalarResult(combined, type, "scatter"));
    StoreScalar(combined, &result, target);
    return absl::OkStatus();
  };

  std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(os.dimensions());
  std::vector<int64_t> s(os.rank(), 0), k(os.rank(), 0);
  int64_t source_linear = 0;
  do {
    int64_t selected = -1;
    do {
      int64_t offset = 0;
      bool inside = true;
      for (int64_t d = 0; d < os.rank() && inside; ++d) {
        const WindowDimension& w = window.dimensions(d);
        int64_t p = s[d] * w.stride() - w.padding_low() + k[d] * w.window_dilation();
        if (p % w.base_dilation() != 0) {
          inside = false;
          break;
        }
        p /= w.base_dilation();
        inside = p >= 0 && p < os.dimensions(d);
        offset += p * strides[d];
      }
      if (!inside) continue;
      if (selected < 0) {
        selected = offset;
      } else {
        AXLE_ASSIGN_OR_RETURN(bool keep, select_first(selected, offset));
        if (!keep) selected = offset;
      }
    } while (NextIndex(window_sizes, absl::MakeSpan(k)));
    if (selected >= 0) AXLE_RETURN_IF_ERROR(scatter_into(selected, source_linear));
    ++source_linear;
  } while (NextIndex(source.shape().dimensions(), absl::MakeSpan(s)));
  return result;
}

}  // namespace axle
