//===- gemm_plan.cc - A dot as one (strided-batched) cuBLAS GEMM -----------===//
#include "axle/gpu/gemm_plan.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/tf32.h"
#include "axle/hlo/analysis/dot_dimensions.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

// One dimension group collapsed: its size and, per array, the stride of
// its innermost dim (0 when the size is 1).
struct Group {
  int64_t size = 1;
  std::vector<int64_t> strides;
};

// Collapses the group whose dims are `dims[a]` in array a (paired by
// position; the sizes are array 0's) when every array nests them in
// memory in one order.
std::optional<Group> Collapse(const std::vector<std::vector<int64_t>>& dims,
                              const std::vector<std::vector<int64_t>>& strides,
                              const std::vector<int64_t>& sizes) {
  const size_t arrays = dims.size();
  Group group;
  group.strides.assign(arrays, 0);
  std::vector<size_t> positions;
  for (size_t p = 0; p < sizes.size(); ++p) {
    if (sizes[p] != 1) positions.push_back(p);
    group.size *= sizes[p];
  }
  if (positions.empty()) return group;
  // Outermost first, by array 0's strides.
  std::stable_sort(positions.begin(), positions.end(), [&](size_t x, size_t y) {
    return strides[0][dims[0][x]] > strides[0][dims[0][y]];
  });
  for (size_t a = 0; a < arrays; ++a) {
    int64_t expected = -1;
    for (auto it = positions.rbegin(); it != positions.rend(); ++it) {
      const int64_t stride = strides[a][dims[a][*it]];
      if (expected == -1) {
        group.strides[a] = stride;
      } else if (stride != expected) {
        return std::nullopt;
      }
      expected = stride * sizes[*it];
    }
  }
  return group;
}

// A logical rows x cols matrix at (row_stride, col_stride) as a cuBLAS
// operand: whether it is read transposed, and its leading dimension.
struct Operand {
  bool transpose = false;
  int64_t ld = 1;
};
std::optional<Operand> AsOperand(int64_t rows, int64_t cols, int64_t row_stride,
                                 int64_t col_stride) {
  // Column major: X(i, j) at i + j * ld.
  if (rows == 1 || row_stride == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : col_stride;
    if (ld >= std::max<int64_t>(rows, 1)) return Operand{false, ld};
  }
  // Row major: stored as the col-major cols x rows X^T.
  if (cols == 1 || col_stride == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : row_stride;
    if (ld >= std::max<int64_t>(cols, 1)) return Operand{true, ld};
  }
  return std::nullopt;
}

std::vector<int64_t> Iota(int64_t from, int64_t count) {
  std::vector<int64_t> values(count);
  std::iota(values.begin(), values.end(), from);
  return values;
}

absl::Status Unsupported(const HloInstruction& dot, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("cuBLAS GEMM: ", why, " (dot %", dot.name(), ")"));
}

// The accumulation of a dot of these types, or nullopt.
std::optional<GemmCompute> ComputeOf(PrimitiveType lhs, PrimitiveType rhs, PrimitiveType out) {
  if (lhs != rhs) return std::nullopt;
  switch (lhs) {
    case F32:
      return out == F32 ? std::optional(GemmCompute::kF32) : std::nullopt;
    case F64:
      return out == F64 ? std::optional(GemmCompute::kF64) : std::nullopt;
    case F16:
    case BF16:
      return out == lhs || out == F32 ? std::optional(GemmCompute::kF32) : std::nullopt;
    case C64:
      return out == C64 ? std::optional(GemmCompute::kF32) : std::nullopt;
    case C128:
      return out == C128 ? std::optional(GemmCompute::kF64) : std::nullopt;
    case S8:
      return out == S32 ? std::optional(GemmCompute::kS32) : std::nullopt;
    default:
      return std::nullopt;
  }
}

const char* ComputeName(GemmCompute compute) {
  switch (compute) {
    case GemmCompute::kF32:
      return "f32";
    case GemmCompute::kTf32:
      return "tf32";
    case GemmCompute::kF64:
      return "f64";
    case GemmCompute::kS32:
      return "s32";
  }
  return "?";
}

}  // namespace

std::string GemmPlan::ToString() const {
  return absl::StrCat(
      swap_operands ? "C^T = rhs^T lhs^T: " : "C = lhs rhs: ", "transa=", transpose_a ? "T" : "N",
      " transb=", transpose_b ? "T" : "N", " m=", m, " n=", n, " k=", k, " batch=", batch,
      " lda=", lda, " ldb=", ldb, " ldc=", ldc, " strides=", stride_a, "/", stride_b, "/", stride_c,
      " ", primitive_util::LowercasePrimitiveTypeName(a_type), "->",
      primitive_util::LowercasePrimitiveTypeName(c_type), " accumulating ", ComputeName(compute));
}

absl::StatusOr<GemmPlan> MakeGemmPlan(const HloInstruction& dot) {
  return MakeGemmPlan(dot, Tf32Enabled());
}

bool GemmSupportsTypes(const HloInstruction& dot) {
  return dot.opcode() == HloOpcode::kDot && dot.operand_count() == 2 &&
         ComputeOf(dot.operand(0)->shape().element_type(), dot.operand(1)->shape().element_type(),
                   dot.shape().element_type())
             .has_value();
}

bool GemmSupports(const HloInstruction& dot) {
  return dot.opcode() == HloOpcode::kDot && MakeGemmPlan(dot, false).ok();
}

absl::StatusOr<GemmPlan> MakeGemmPlan(const HloInstruction& dot, bool allow_tf32) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2) {
    return Unsupported(dot, "not a dot of two operands");
  }
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  const Shape& out = dot.shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray() || !lhs.is_static() || !rhs.is_static() ||
      !out.is_static()) {
    return Unsupported(dot, "operands and result must be static arrays");
  }
  GemmPlan plan;
  std::optional<GemmCompute> compute =
      ComputeOf(lhs.element_type(), rhs.element_type(), out.element_type());
  if (!compute.has_value()) {
    return Unsupported(
        dot,
        absl::StrCat("no GEMM for ", primitive_util::LowercasePrimitiveTypeName(lhs.element_type()),
                     " x ", primitive_util::LowercasePrimitiveTypeName(rhs.element_type()), " -> ",
                     primitive_util::LowercasePrimitiveTypeName(out.element_type())));
  }
  plan.compute = *compute;
  // f32 and c64 (accumulating in f32) as XLA:GPU computes them (tf32.h).
  if (plan.compute == GemmCompute::kF32 && allow_tf32 && ComputesInTf32(dot)) {
    plan.compute = GemmCompute::kTf32;
  }

  const auto& numbers = cast<HloDotInstruction>(&dot)->dot_dimension_numbers();
  const std::vector<int64_t> lhs_batch(numbers.lhs_batch_dimensions().begin(),
                                       numbers.lhs_batch_dimensions().end());
  const std::vector<int64_t> rhs_batch(numbers.rhs_batch_dimensions().begin(),
                                       numbers.rhs_batch_dimensions().end());
  const std::vector<int64_t> lhs_contracting(numbers.lhs_contracting_dimensions().begin(),
                                             numbers.lhs_contracting_dimensions().end());
  const std::vector<int64_t> rhs_contracting(numbers.rhs_contracting_dimensions().begin(),
                                             numbers.rhs_contracting_dimensions().end());
  if (lhs_batch.size() != rhs_batch.size() || lhs_contracting.size() != rhs_contracting.size()) {
    return Unsupported(dot, "unpaired batch or contracting dimensions");
  }
  const std::vector<int64_t> lhs_free = DotFreeDimensions(lhs.rank(), lhs_batch, lhs_contracting);
  const std::vector<int64_t> rhs_free = DotFreeDimensions(rhs.rank(), rhs_batch, rhs_contracting);
  const auto batch_rank = static_cast<int64_t>(lhs_batch.size());
  const auto m_rank = static_cast<int64_t>(lhs_free.size());
  const auto n_rank = static_cast<int64_t>(rhs_free.size());
  if (out.rank() != batch_rank + m_rank + n_rank) {
    return Unsupported(dot, "result rank is not batch + lhs free + rhs free");
  }
  const std::vector<int64_t> lhs_strides = ShapeUtil::LayoutStrides(lhs);
  const std::vector<int64_t> rhs_strides = ShapeUtil::LayoutStrides(rhs);
  const std::vector<int64_t> out_strides = ShapeUtil::LayoutStrides(out);
  auto sizes_of = [](const Shape& shape, const std::vector<int64_t>& dims) {
    std::vector<int64_t> sizes;
    sizes.reserve(dims.size());
    for (int64_t d : dims) sizes.push_back(shape.dimensions(d));
    return sizes;
  };

  std::optional<Group> batch =
      Collapse({lhs_batch, rhs_batch, Iota(0, batch_rank)}, {lhs_strides, rhs_strides, out_strides},
               sizes_of(lhs, lhs_batch));
  std::optional<Group> m = Collapse({lhs_free, Iota(batch_rank, m_rank)},
                                    {lhs_strides, out_strides}, sizes_of(lhs, lhs_free));
  std::optional<Group> n = Collapse({rhs_free, Iota(batch_rank + m_rank, n_rank)},
                                    {rhs_strides, out_strides}, sizes_of(rhs, rhs_free));
  std::optional<Group> k = Collapse({lhs_contracting, rhs_contracting}, {lhs_strides, rhs_strides},
                                    sizes_of(lhs, lhs_contracting));
  if (!batch || !m || !n || !k) {
    return Unsupported(dot, absl::StrCat("the ",
                                         !batch ? "batch"
                                         : !m   ? "lhs free"
                                         : !n   ? "rhs free"
                                                : "contracting",
                                         " dimensions are not one strided dimension in every "
                                         "array (canonicalize the dot first)"));
  }
  plan.batch = batch->size;
  // Logical matrices: lhs M x K, rhs K x N, out M x N.
  const int64_t lhs_m = m->strides[0], out_m = m->strides[1];
  const int64_t rhs_n = n->strides[0], out_n = n->strides[1];
  const int64_t lhs_k = k->strides[0], rhs_k = k->strides[1];
  // Try the orientation the result's layout suggests first (row major:
  // swapped), then the other.
  const bool row_major_first = !(m->size == 1 || out_m == 1);
  bool found = false;
  for (bool swap : {row_major_first, !row_major_first}) {
    std::optional<Operand> c, a, b;
    if (!swap) {
      c = AsOperand(m->size, n->size, out_m, out_n);
      a = AsOperand(m->size, k->size, lhs_m, lhs_k);
      b = AsOperand(k->size, n->size, rhs_k, rhs_n);
    } else {
      c = AsOperand(n->size, m->size, out_n, out_m);
      a = AsOperand(n->size, k->size, rhs_n, rhs_k);
      b = AsOperand(k->size, m->size, lhs_k, lhs_m);
    }
    if (!c || c->transpose || !a || !b) continue;
    plan.swap_operands = swap;
    plan.m = swap ? n->size : m->size;
    plan.n = swap ? m->size : n->size;
    plan.k = k->size;
    plan.transpose_a = a->transpose;
    plan.transpose_b = b->transpose;
    plan.lda = a->ld;
    plan.ldb = b->ld;
    plan.ldc = c->ld;
    found = true;
    break;
  }
  if (!found) {
    if (batch->size * m->size * n->size * k->size != 0) {
      return Unsupported(dot, "an operand or the result has no dense matrix dimension");
    }
    // Empty operands: nothing to multiply (the thunk zeroes the result).
    plan.m = m->size;
    plan.n = n->size;
    plan.k = k->size;
  }
  if (plan.batch > 1) {
    plan.stride_a = batch->strides[plan.swap_operands ? 1 : 0];
    plan.stride_b = batch->strides[plan.swap_operands ? 0 : 1];
    plan.stride_c = batch->strides[2];
  }
  plan.a_type = plan.swap_operands ? rhs.element_type() : lhs.element_type();
  plan.b_type = plan.swap_operands ? lhs.element_type() : rhs.element_type();
  plan.c_type = out.element_type();
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  for (int64_t value : {plan.m, plan.n, plan.k, plan.lda, plan.ldb, plan.ldc, plan.batch}) {
    if (value > kMaxInt) {
      return Unsupported(dot, absl::StrCat("a GEMM dimension (", value, ") exceeds 32 bits"));
    }
  }
  if (plan.compute == GemmCompute::kS32) {
    for (int64_t value :
         {plan.lda, plan.ldb, plan.ldc, plan.stride_a, plan.stride_b, plan.stride_c}) {
      if (value % 4 != 0) {
        return Unsupported(dot, absl::StrCat("s8 GEMM with a leading dimension or batch stride (",
                                             value, ") that is not a multiple of 4"));
      }
    }
  }
  return plan;
}

}  // namespace axle::gpu
