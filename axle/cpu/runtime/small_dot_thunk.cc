//===- small_dot_thunk.cc - f32 dots with few rows -------------------------===//
//
// The small-dot path of the dot thunks: an f32 dot (or dot epilogue
// fusion) whose lhs has at most kSmallDotMaxRows rows per batch (or any
// rows when the dot is small: kSmallDotMaxMultiplyAdds, or a transposed
// rhs's: kMinTransposedColumns) and whose rhs columns (or rows, for a
// transposed rhs) are dense runs as SmallDotF32 (small_dot.h) across the
// intra-op pool, reading every operand in place, but for a constant rhs:
// that is packed into the kernel's panels when the thunk is made. A rhs
// that a while loop leaves unchanged (an RNN step's recurrent weight,
// carried through the loop state) is packed once per loop run instead
// (loop_run.h). On this 2-core Cascade Lake VM, 1 thread, a loop of 200
// [16, 192] x [192, 512] + bias took 15.4 us per step read in place, 15.3
// us packed (best of 4 runs, a loaded machine). On the Xeon of
// docs/PERFORMANCE.md's side-by-side runs lstm_scan's step dot took 19-21
// us read in place; packed, it is not yet measured there.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/cpu/runtime/dot_plan.h"
#include "axle/cpu/runtime/loop_run.h"
#include "axle/cpu/runtime/plan_serialization.h"
#include "axle/cpu/runtime/small_dot.h"

namespace axle::cpu::dot {
namespace {

// Rows per batch up to which the kernel beats oneDNN's matmul. Measured
// here (1 thread, whole runs, us, small-dot / oneDNN): [16, 192] x [192,
// 512] with bias 41 / 63, [10, 256] x [256, 512] 39 / 50, [32, 512] x
// [512, 512] 177 / 190, [64, 512] x [512, 512] 340 / 304, [128, 512] x
// [512, 512] 674 / 538.
constexpr int64_t kSmallDotMaxRows = 32;

// A dot of at most this many multiply-adds takes the kernel whatever its
// rows, when its output is wider than kNarrowColumns (one vector per row
// tile loads as much as it computes). At that size oneDNN's fixed costs
// match the arithmetic: 1 thread, bias + relu, best of 2000 calls (us,
// small-dot / oneDNN on a team of one): [48, 256] x [256, 17] 3.7 / 4.3,
// [64, 64] x [64, 128] 5.9 / 6.2, [64, 32] x [32, 64] 1.9 / 2.1,
// [128, 128] x [128, 128] 21.2 / 21.3, [64, 256] x [256, 256] 39.4 / 38.9;
// but [256, 512] x [512, 10] 26.4 / 21.7. And the kernel splits its blocks
// across the intra-op pool, whose workers spin through a run, where oneDNN
// would wake its OpenMP team (omp_team.h).
constexpr int64_t kSmallDotMaxMultiplyAdds = int64_t{1} << 21;
constexpr int64_t kNarrowColumns = 16;

// A transposed rhs ([n, k], k dense) with more than kSmallDotMaxRows rows
// runs as dot products of dense rows (2 x 8 tiles) when the output has at
// least kMinTransposedColumns columns and the contraction at least
// kMinTransposedDepth (below, the tiles' horizontal sums cost more than
// their multiply-adds), and the dot is small (the emitted loop, which
// reads such a rhs with gathers, would take it) or narrow (oneDNN pads n
// to its blocks). Zen 4, 1 thread, us per dot, small-dot / before: a
// classifier head [64, 128] x [10, 128]^T 3 / 12 (loop), [64, 64] x
// [32, 64]^T 5 / 11 (loop), [128, 32] x [8, 32]^T 1.8 / 2.4 (loop),
// [64, 256] x [10, 256]^T 5 / 7 (oneDNN), [512, 128] x [24, 128]^T 39 / 42
// (oneDNN); but [64, 16] x [16, 16]^T 1.4 / 1.2 and [256, 64] x [4, 64]^T
// 11 / 6.4 (loop), and a wide [64, 128] x [128, 128]^T 27 / 21 (oneDNN).
constexpr int64_t kMinTransposedColumns = 8;
constexpr int64_t kMinTransposedDepth = 32;

// Units per block on the pool: at least this many multiply-adds each.
constexpr int64_t kMinMultiplyAddsPerBlock = int64_t{1} << 16;

// Where a thunk reads one operand: a thunk operand or a literal's data.
struct Operand {
  int64_t value = -1;  // index into operand_values_, or -1
  const float* literal = nullptr;
};

class SmallDotThunk : public Thunk {
 public:
  SmallDotThunk(std::string name, std::vector<int64_t> operand_values, int64_t output_value,
                const DotPlan& plan, SmallDotShape shape)
      : Thunk(std::move(name)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value),
        shape_(shape),
        lhs_(OperandOf(plan.lhs)),
        rhs_(OperandOf(plan.rhs)),
        lhs_literal_(plan.lhs.literal),
        rhs_literal_(plan.rhs.literal),
        plan_(plan),
        plan_shape_(shape) {
    plan_.chain.clear();
    plan_.bias_add = nullptr;
    if (plan.bias) {
      bias_ = OperandOf(*plan.bias);
      bias_literal_ = plan.bias->literal;
    }
    // A constant rhs (a layer's weight) packed into panels once, here.
    if (rhs_.literal != nullptr) {
      packed_rhs_.resize(SmallDotPackedRhsSize(shape_) + kBufferAlignment / sizeof(float));
      packed_rhs_data_ = AlignUp(packed_rhs_.data());
      PackSmallDotRhs(shape_, rhs_.literal, packed_rhs_data_);
      shape_.rhs_packed = true;
    }
    packed_shape_ = shape_;
    packed_shape_.rhs_packed = true;
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  // A bias laid out as the output (a weight gradient summed over a loop's
  // steps, acc + x^T d, the accumulator a loop state leaf) may be the
  // output's memory (in_place_sharing.h): every output element is stored once,
  // after its own bias element was read (StoreSums), so the loop updates
  // its state in place instead of copying the sum into it on every step.
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override {
    const SmallDotShape& s = plan_shape_;
    const bool dense = (s.batch == 1 || s.bias_batch_stride == s.m * s.n) &&
                       (s.m == 1 || s.bias_row_stride == s.n) &&
                       (s.n == 1 || s.bias_column_stride == 1) &&
                       (s.inner_batch == 0 || s.bias_outer_stride == s.inner_batch * s.m * s.n);
    if (!bias_ || bias_->value < 0 || !dense) return {};
    // Not when the bias is the lhs or rhs too (h + h @ w): the dot still
    // reads it while it writes (in_place_sharing.h's rule 1 tells values apart,
    // not a thunk's operands that are one value).
    const int64_t bias = operand_values_[bias_->value];
    for (const Operand* operand : {&lhs_, &rhs_}) {
      if (operand->value >= 0 && operand_values_[operand->value] == bias) return {};
    }
    return {{bias, output_value_}};
  }

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kSmallDot, *this);
    writer.Ints(operand_values_);
    writer.Int(output_value_);
    WriteDotPlan(plan_, writer);
    const SmallDotShape& s = plan_shape_;
    for (int64_t field : {s.batch, s.m, s.n, s.k, s.lhs_batch_stride, s.lhs_row_stride,
                          s.lhs_k_stride, s.rhs_batch_stride, s.rhs_k_stride, s.bias_batch_stride,
                          s.bias_row_stride, s.bias_column_stride, s.inner_batch,
                          s.lhs_outer_stride, s.rhs_outer_stride, s.bias_outer_stride}) {
      writer.Int(field);
    }
    writer.Bool(s.rhs_transposed);
    WriteActivation(s.activation, writer);
    writer.Double(s.low);
    writer.Double(s.high);
    return absl::OkStatus();
  }

  absl::Status Execute(const ThunkContext& context) const override {
    auto pointer = [&](const Operand& operand) -> const float* {
      if (operand.literal != nullptr) return operand.literal;
      return static_cast<const float*>(context.address(operand_values_[operand.value]));
    };
    const float* lhs = pointer(lhs_);
    const float* rhs = shape_.rhs_packed ? packed_rhs_data_ : pointer(rhs_);
    const float* bias = bias_ ? pointer(*bias_) : nullptr;
    float* out = static_cast<float*>(context.address(output_value_));
    const SmallDotShape* shape = &shape_;
    auto pack = [&](void* data) { PackSmallDotRhs(shape_, rhs, static_cast<float*>(data)); };
    const LoopInvariantCache::Lease packed =
        shape_.rhs_packed
            ? LoopInvariantCache::Lease()
            : loop_packed_rhs_.Acquire(
                  context, operand_values_[rhs_.value],
                  SmallDotPackedRhsSize(packed_shape_) * int64_t{sizeof(float)}, pack);
    if (packed.data() != nullptr) {
      rhs = static_cast<const float*>(packed.data());
      shape = &packed_shape_;
    }
    const int64_t units = SmallDotUnits(*shape);
    const int64_t per_unit = shape->m * shape->k * SmallDotUnitColumns(*shape);
    auto run = [&](int64_t begin, int64_t end) {
      SmallDotF32(*shape, lhs, rhs, bias, out, begin, end);
    };
    // (Splitting only when a worker is already spinning, session 25, kept
    // the ONNX transformer's [64, 64] x [64, 128]-sized dots and
    // while_cg_solve's matrix-vector product inline between thunks: 6% and
    // 12% slower at 2 threads.)
    if (context.thread_pool == nullptr || units * per_unit < 2 * kMinMultiplyAddsPerBlock) {
      run(0, units);
    } else {
      // One block per thread.
      int threads = context.thread_pool->num_threads();
      if (context.max_threads > 0) threads = std::min(threads, context.max_threads);
      const int64_t min_block = std::max((kMinMultiplyAddsPerBlock + per_unit - 1) / per_unit,
                                         (units + threads - 1) / threads);
      context.thread_pool->ParallelFor(units, min_block, run, context.max_threads);
    }
    return absl::OkStatus();
  }

 private:
  static Operand OperandOf(const Source& source) {
    Operand operand;
    if (source.literal != nullptr) {
      operand.literal = static_cast<const float*>(source.literal->untyped_data());
    } else {
      operand.value = source.operand;
    }
    return operand;
  }

  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  SmallDotShape shape_;
  Operand lhs_, rhs_;
  std::optional<Operand> bias_;
  // PackSmallDotRhs of a constant rhs, at packed_rhs_data_: on a cache
  // line, so that each 64-byte load of a panel row reads one line. A
  // vector's own data lands 16, 32 or 48 bytes past a line as the heap's
  // history has it (7 of the taggers' 8 packed weights did), and then
  // every load spans two lines: lstm_tagger's recurrent dot ran 1.3x
  // slower whenever an unrelated change moved it off the line (run14's
  // allocator; onnx15's first try), gru_tagger ~15% slower in all.
  std::vector<float> packed_rhs_;
  float* packed_rhs_data_ = nullptr;
  // A rhs that is no constant, packed once per loop run that leaves it
  // unchanged, and the shape that reads it so.
  mutable LoopInvariantCache loop_packed_rhs_;
  SmallDotShape packed_shape_;
  // Keep the literals the operands point into alive.
  std::shared_ptr<const Literal> lhs_literal_, rhs_literal_, bias_literal_;
  // What the thunk was made from (Serialize), without HLO.
  DotPlan plan_;
  SmallDotShape plan_shape_;
};

// `groups` with only the batch dims from the `outer_dims`-th on.
std::vector<std::vector<int64_t>> InnerBatch(std::vector<std::vector<int64_t>> groups,
                                             int64_t outer_dims) {
  groups[0].erase(groups[0].begin(), groups[0].begin() + outer_dims);
  return groups;
}

// The stride of the first `outer_dims` batch dims of `source` as one run,
// nullopt when they are not one.
std::optional<int64_t> CollapsedOuterStride(const Source& source,
                                            const std::vector<std::vector<int64_t>>& groups,
                                            int64_t outer_dims) {
  std::vector<int64_t> outer(groups[0].begin(), groups[0].begin() + outer_dims);
  std::optional<View3> view = Collapse(source, {outer, {}, {}});
  if (!view) return std::nullopt;
  return view->strides[0];
}

int64_t OuterStride(const Source& source, const std::vector<std::vector<int64_t>>& groups,
                    int64_t outer_dims) {
  return *CollapsedOuterStride(source, groups, outer_dims);
}

// The lhs and rhs as [batch, rows, columns] views. Their batch dims are one
// run of strides or, when not (attention's scores q . K over a K cache
// [b, s, h, d] batched over (b, h): h's stride d, b's s * h * d), two:
// the first `outer_dims` batch dims and the rest (SmallDotShape::inner_batch).
struct BatchSplit {
  std::optional<View3> lhs, rhs;
  int64_t outer_dims = 0;
};
std::optional<BatchSplit> SplitBatch(const DotPlan& plan) {
  BatchSplit split;
  split.lhs = Collapse(plan.lhs, plan.lhs_groups);
  split.rhs = Collapse(plan.rhs, plan.rhs_groups);
  if (split.lhs && split.rhs) return split;
  const int64_t batch_dims = static_cast<int64_t>(plan.lhs_groups[0].size());
  for (int64_t outer = 1; outer < batch_dims; ++outer) {
    split.lhs = Collapse(plan.lhs, InnerBatch(plan.lhs_groups, outer));
    split.rhs = Collapse(plan.rhs, InnerBatch(plan.rhs_groups, outer));
    if (!split.lhs || !split.rhs || !CollapsedOuterStride(plan.lhs, plan.lhs_groups, outer) ||
        !CollapsedOuterStride(plan.rhs, plan.rhs_groups, outer)) {
      continue;
    }
    split.outer_dims = outer;
    return split;
  }
  return std::nullopt;
}

// A matrix-vector product with the matrix on the left (a conjugate
// gradient's A @ p, W @ h): [m, k] x [k, 1] with m above kSmallDotMaxRows
// has one output column, which oneDNN pads to a 64-column block on every
// call (512x512 x 512x1: 70 us, against 262K multiply-adds) and the emitted
// loop runs one column at a time. Its transpose, [1, k] x [k, m] with the
// matrix as a transposed rhs (rows dense along k), writes the same memory
// (the output's one column is its only row) and streams the matrix once.
// Nullopt when `plan` is not such a product.
std::optional<DotPlan> AsVectorTimesMatrix(const DotPlan& plan) {
  if (plan.n != 1 || plan.m <= kSmallDotMaxRows) return std::nullopt;
  DotPlan swapped = plan;
  swapped.lhs = plan.rhs;
  swapped.rhs = plan.lhs;
  swapped.lhs_groups = {plan.rhs_groups[0], plan.rhs_groups[2], plan.rhs_groups[1]};
  swapped.rhs_groups = {plan.lhs_groups[0], plan.lhs_groups[2], plan.lhs_groups[1]};
  swapped.m = plan.n;
  swapped.n = plan.m;
  // The output as batch, N (size 1), M: the same elements in the same order.
  const std::vector<std::vector<int64_t>> groups = OutputGroups(plan);
  std::vector<int64_t> order = groups[0];
  order.insert(order.end(), groups[2].begin(), groups[2].end());
  order.insert(order.end(), groups[1].begin(), groups[1].end());
  auto permuted = [&](const std::vector<int64_t>& values) {
    std::vector<int64_t> out;
    out.reserve(order.size());
    for (int64_t d : order) out.push_back(values[d]);
    return out;
  };
  swapped.output_dims = permuted(plan.output_dims);
  swapped.output_m_rank = static_cast<int64_t>(groups[2].size());
  if (plan.bias) {
    swapped.bias->dims = permuted(plan.bias->dims);
    swapped.bias->strides = permuted(plan.bias->strides);
  }
  return swapped;
}

}  // namespace

}  // namespace axle::cpu::dot

namespace axle::cpu {

std::unique_ptr<Thunk> LoadSmallDotThunk(std::string name, ThunkReader& reader) {
  std::vector<int64_t> operand_values = reader.Values();
  const int64_t output_value = reader.Value();
  dot::DotPlan plan = ReadDotPlan(reader);
  SmallDotShape s;
  for (int64_t* field :
       {&s.batch, &s.m, &s.n, &s.k, &s.lhs_batch_stride, &s.lhs_row_stride, &s.lhs_k_stride,
        &s.rhs_batch_stride, &s.rhs_k_stride, &s.bias_batch_stride, &s.bias_row_stride,
        &s.bias_column_stride, &s.inner_batch, &s.lhs_outer_stride, &s.rhs_outer_stride,
        &s.bias_outer_stride}) {
    *field = reader.Int();
  }
  s.rhs_transposed = reader.Bool();
  s.activation = ReadActivation(reader);
  s.low = static_cast<float>(reader.Double());
  s.high = static_cast<float>(reader.Double());
  if (!reader.ok()) return nullptr;
  if (!DotPlanOperandsIn(plan, operand_values.size()) || plan.lhs.type != F32 ||
      plan.rhs.type != F32 || (plan.bias && plan.bias->type != F32)) {
    reader.Fail(absl::StrCat("small dot %", name, ": operands that do not match its plan"));
    return nullptr;
  }
  if (!SmallDotAvailable()) {
    reader.Fail(absl::StrCat("small dot %", name, " needs AVX-512F, which this CPU lacks"));
    return nullptr;
  }
  return std::make_unique<dot::SmallDotThunk>(std::move(name), std::move(operand_values),
                                              output_value, plan, s);
}

}  // namespace axle::cpu

namespace axle::cpu::dot {

std::unique_ptr<Thunk> CreateSmallDotThunk(const HloInstruction& instruction, const DotPlan& plan,
                                           std::vector<int64_t> operand_values,
                                           int64_t output_value) {
  if (std::optional<DotPlan> swapped = AsVectorTimesMatrix(plan)) {
    if (std::unique_ptr<Thunk> thunk =
            CreateSmallDotThunk(instruction, *swapped, operand_values, output_value)) {
      return thunk;
    }
  }
  const int64_t multiply_adds = plan.batch * plan.m * plan.n * plan.k;
  if (!SmallDotAvailable() || plan.packed_nibble) return nullptr;
  const bool few_rows = plan.m <= kSmallDotMaxRows;
  const bool small = multiply_adds <= kSmallDotMaxMultiplyAdds && plan.n > kNarrowColumns;
  if (plan.lhs.type != F32 || plan.rhs.type != F32 || plan.output_type != F32) return nullptr;
  if (plan.bias && plan.bias->type != F32) return nullptr;
  std::optional<BatchSplit> split = SplitBatch(plan);
  if (!split) return nullptr;
  const std::optional<View3>& lhs = split->lhs;
  const std::optional<View3>& rhs = split->rhs;
  // The rhs's columns dense (a single column may have any stride), or its
  // rows: a transposed rhs ([n, k], k dense) with dense lhs rows, which the
  // emitted loop reads with gathers, so it comes here whatever its size.
  const bool columns_dense = plan.n == 1 || rhs->strides[2] == 1;
  const bool transposed = !columns_dense && (plan.k == 1 || rhs->strides[1] == 1) &&
                          (plan.k == 1 || lhs->strides[2] == 1);
  if (!columns_dense && !transposed) return nullptr;
  // A batch of two runs comes here only for a transposed rhs, which the
  // emitted loop reads with gathers (attention's q . K over a [b, s, h, d]
  // cache, 48 decode steps: 7.0 -> 1.5 us per dot); dense columns it reads
  // well at any strides ([1, 64] x [64, 32] over 8 batches: 0.7 us, here
  // 2.2).
  if (split->outer_dims > 0 && !transposed) return nullptr;
  // More rows: a small dot whose rhs the tiles read (dense columns, or a
  // constant packed into panels), or a transposed rhs's dot products where
  // they beat the alternatives (kMinTransposedColumns).
  const bool transposed_products =
      transposed && plan.n >= kMinTransposedColumns && plan.k >= kMinTransposedDepth &&
      multiply_adds <= kSmallDotMaxMultiplyAdds &&
      (multiply_adds <= kMaxLoopDotMultiplyAdds || plan.n <= kNarrowColumns);
  if (!few_rows && !transposed_products &&
      !(small && (columns_dense || plan.rhs.literal != nullptr))) {
    return nullptr;
  }
  // A small dot with dense rhs columns: the emitted loop when the output
  // is narrow (a batch of attention's [8, 8] x [8, 8]: 0.3-0.4 us against
  // the tiles' 0.5-0.7), else the tiles (Zen 4, 1 thread, us per dot,
  // tiles / loop: [64, 10] x [10, 128] 2 / 6, [10, 64]^T x [64, 128] 2 / 6,
  // [32, 32] x [32, 32] 0.8 / 2.0, [64, 8] x [8, 64] 1.1 / 2.9).
  if (!transposed && multiply_adds <= kMaxLoopDotMultiplyAdds && plan.n <= kNarrowColumns) {
    return nullptr;
  }
  SmallDotShape shape;
  shape.rhs_transposed = transposed;
  shape.batch = plan.batch;
  shape.m = plan.m;
  shape.n = plan.n;
  shape.k = plan.k;
  shape.lhs_batch_stride = lhs->strides[0];
  shape.lhs_row_stride = lhs->strides[1];
  shape.lhs_k_stride = lhs->strides[2];
  shape.rhs_batch_stride = rhs->strides[0];
  shape.rhs_k_stride = transposed ? rhs->strides[2] : rhs->strides[1];
  if (split->outer_dims > 0) {
    shape.inner_batch = lhs->dims[0];
    shape.lhs_outer_stride = OuterStride(plan.lhs, plan.lhs_groups, split->outer_dims);
    shape.rhs_outer_stride = OuterStride(plan.rhs, plan.rhs_groups, split->outer_dims);
  }
  if (plan.bias) {
    const std::vector<std::vector<int64_t>> groups = OutputGroups(plan);
    std::optional<View3> bias = Collapse(*plan.bias, InnerBatch(groups, split->outer_dims));
    if (!bias) return nullptr;
    shape.bias_batch_stride = bias->strides[0];
    shape.bias_row_stride = bias->strides[1];
    shape.bias_column_stride = bias->strides[2];
    if (split->outer_dims > 0) {
      std::optional<int64_t> outer = CollapsedOuterStride(*plan.bias, groups, split->outer_dims);
      if (!outer) return nullptr;
      shape.bias_outer_stride = *outer;
    }
  }
  shape.activation = plan.activation;
  shape.low = static_cast<float>(plan.low);
  shape.high = static_cast<float>(plan.high);
  return std::make_unique<SmallDotThunk>(instruction.name(), std::move(operand_values),
                                         output_value, plan, shape);
}

}  // namespace axle::cpu::dot
