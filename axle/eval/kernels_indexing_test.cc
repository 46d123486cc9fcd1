//===- kernels_indexing_test.cc - gather, scatter, select-and-scatter ------===//
//
// Hand-computed values for the index-heavy kernels. Combiner computations
// are tiny HloComputations run by MiniRunner below (a stand-in for the
// evaluator that handles parameters, binary arithmetic, compare and tuple).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "axle/eval/kernel_test_util.h"
#include "axle/eval/kernels.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing_util::R1;
using testing_util::Values;

// Evaluates computations of scalar parameters, add/subtract/multiply/
// maximum/compare and tuple, in double; counts its calls.
class MiniRunner {
 public:
  ComputationRunner AsRunner() {
    return [this](const HloComputation& c, absl::Span<const Literal* const> args) {
      ++calls_;
      return Run(c, args);
    };
  }
  int calls() const { return calls_; }

 private:
  absl::StatusOr<Literal> Run(const HloComputation& c, absl::Span<const Literal* const> args) {
    std::map<const HloInstruction*, Literal> values;
    for (HloInstruction* i : c.MakeInstructionPostOrder()) {
      Literal v;
      if (auto* p = dyn_cast<HloParameterInstruction>(i)) {
        v = args.at(p->parameter_number())->Clone();
      } else if (i->opcode() == HloOpcode::kTuple) {
        std::vector<Literal> elements;
        for (const HloInstruction* o : i->operands()) elements.push_back(values[o].Clone());
        v = Literal::MakeTuple(std::move(elements));
      } else {
        double a = values[i->operand(0)].GetAsDouble(0);
        double b = values[i->operand(1)].GetAsDouble(0);
        double r = 0;
        switch (i->opcode()) {
          case HloOpcode::kAdd:
            r = a + b;
            break;
          case HloOpcode::kSubtract:
            r = a - b;
            break;
          case HloOpcode::kMultiply:
            r = a * b;
            break;
          case HloOpcode::kMaximum:
            r = std::max(a, b);
            break;
          case HloOpcode::kCompare: {
            switch (cast<HloCompareInstruction>(i)->direction()) {
              case ComparisonDirection::kGe:
                r = a >= b;
                break;
              case ComparisonDirection::kGt:
                r = a > b;
                break;
              case ComparisonDirection::kLe:
                r = a <= b;
                break;
              case ComparisonDirection::kLt:
                r = a < b;
                break;
              default:
                return absl::UnimplementedError("MiniRunner: compare direction");
            }
            break;
          }
          default:
            return absl::UnimplementedError("MiniRunner: opcode");
        }
        v = Literal(i->shape());
        v.SetFromDouble(0, r);
      }
      values[i] = std::move(v);
    }
    return std::move(values[c.root_instruction()]);
  }
  int calls_ = 0;
};

// Owns computations built for the tests.
class Computations {
 public:
  // op(p0, p1) on scalars of `type` (compare: with `direction`, type
  // `compare_type`, result pred).
  HloComputation* Binary(HloOpcode opcode, PrimitiveType type,
                         ComparisonDirection direction = ComparisonDirection::kGe,
                         ComparisonType compare_type = ComparisonType::kDefault,
                         bool swap = false) {
    auto c = std::make_unique<HloComputation>("binary");
    Shape scalar = ShapeUtil::MakeScalarShape(type);
    HloInstruction* p0 = AddParameter(c.get(), 0, scalar);
    HloInstruction* p1 = AddParameter(c.get(), 1, scalar);
    if (swap) std::swap(p0, p1);
    HloInstruction* root;
    if (opcode == HloOpcode::kCompare) {
      auto compare = std::make_unique<HloCompareInstruction>(
          opcode, ShapeUtil::MakeScalarShape(PRED), std::vector<HloInstruction*>{p0, p1});
      compare->mutable_attrs()->direction = direction;
      compare->mutable_attrs()->type = compare_type;
      root = c->AddInstruction(std::move(compare));
    } else {
      root = c->AddInstruction(
          HloInstruction::Create(opcode, scalar, std::vector<HloInstruction*>{p0, p1}));
    }
    c->set_root_instruction(root);
    owned_.push_back(std::move(c));
    return owned_.back().get();
  }

  // (a0 + b0, max(a1, b1)) for variadic scatter: parameters a0, a1, b0, b1.
  HloComputation* AddAndMax(PrimitiveType t0, PrimitiveType t1) {
    auto c = std::make_unique<HloComputation>("add_and_max");
    HloInstruction* a0 = AddParameter(c.get(), 0, ShapeUtil::MakeScalarShape(t0));
    HloInstruction* a1 = AddParameter(c.get(), 1, ShapeUtil::MakeScalarShape(t1));
    HloInstruction* b0 = AddParameter(c.get(), 2, ShapeUtil::MakeScalarShape(t0));
    HloInstruction* b1 = AddParameter(c.get(), 3, ShapeUtil::MakeScalarShape(t1));
    HloInstruction* sum = c->AddInstruction(HloInstruction::Create(
        HloOpcode::kAdd, ShapeUtil::MakeScalarShape(t0), std::vector<HloInstruction*>{a0, b0}));
    HloInstruction* max = c->AddInstruction(HloInstruction::Create(
        HloOpcode::kMaximum, ShapeUtil::MakeScalarShape(t1), std::vector<HloInstruction*>{a1, b1}));
    HloInstruction* tuple = c->AddInstruction(HloInstruction::Create(
        HloOpcode::kTuple,
        ShapeUtil::MakeTupleShape({ShapeUtil::MakeScalarShape(t0), ShapeUtil::MakeScalarShape(t1)}),
        std::vector<HloInstruction*>{sum, max}));
    c->set_root_instruction(tuple);
    owned_.push_back(std::move(c));
    return owned_.back().get();
  }

  // Returns update: root is parameter 1.
  HloComputation* TakeUpdate(PrimitiveType type) {
    auto c = std::make_unique<HloComputation>("take_update");
    AddParameter(c.get(), 0, ShapeUtil::MakeScalarShape(type));
    c->set_root_instruction(AddParameter(c.get(), 1, ShapeUtil::MakeScalarShape(type)));
    owned_.push_back(std::move(c));
    return owned_.back().get();
  }

 private:
  static HloInstruction* AddParameter(HloComputation* c, int64_t number, const Shape& shape) {
    auto p = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, shape,
                                                       absl::Span<HloInstruction* const>());
    p->mutable_attrs()->parameter_number = number;
    return c->AddInstruction(std::move(p));
  }
  std::vector<std::unique_ptr<HloComputation>> owned_;
};

// --- gather -------------------------------------------------------------------------

struct GatherSpec {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  int64_t index_vector_dim;
  std::vector<int64_t> slice_sizes;
  std::vector<int64_t> operand_batching_dims = {}, start_indices_batching_dims = {};
};

Literal Gather(const Shape& shape, const GatherSpec& spec, const Literal& operand,
               const Literal& indices) {
  HloGatherInstruction gather(HloOpcode::kGather, shape, {});
  GatherDimensionNumbers& dn = gather.mutable_attrs()->gather_dimension_numbers;
  *dn.mutable_offset_dims() = spec.offset_dims;
  *dn.mutable_collapsed_slice_dims() = spec.collapsed_slice_dims;
  *dn.mutable_start_index_map() = spec.start_index_map;
  dn.set_index_vector_dim(spec.index_vector_dim);
  *dn.mutable_operand_batching_dims() = spec.operand_batching_dims;
  *dn.mutable_start_indices_batching_dims() = spec.start_indices_batching_dims;
  gather.mutable_attrs()->slice_sizes = spec.slice_sizes;
  absl::StatusOr<Literal> result = EvaluateGather(gather, operand, indices);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : Literal();
}

Literal Matrix3x3() { return LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}); }

TEST(GatherTest, GatherRows) {
  // XLA's TensorFlowGatherV2 example: rows 0 and 2.
  GatherSpec spec{.offset_dims = {1},
                  .collapsed_slice_dims = {0},
                  .start_index_map = {0},
                  .index_vector_dim = 1,
                  .slice_sizes = {1, 3}};
  EXPECT_EQ(Gather(ShapeUtil::MakeShape(S32, {2, 3}), spec, Matrix3x3(), R1<int32_t>({0, 2})),
            LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {7, 8, 9}}));
}

TEST(GatherTest, GatherColumns) {
  // Columns 0 and 2, laid out along output dimension 1.
  GatherSpec spec{.offset_dims = {0},
                  .collapsed_slice_dims = {1},
                  .start_index_map = {1},
                  .index_vector_dim = 1,
                  .slice_sizes = {3, 1}};
  EXPECT_EQ(Gather(ShapeUtil::MakeShape(S32, {3, 2}), spec, Matrix3x3(), R1<int32_t>({0, 2})),
            LiteralUtil::CreateR2<int32_t>({{1, 3}, {4, 6}, {7, 9}}));
}

TEST(GatherTest, GatherNd) {
  // tf.gather_nd: index vectors (row, col) pick single elements: (1,1) -> 5, (2,0) -> 7.
  GatherSpec spec{.offset_dims = {},
                  .collapsed_slice_dims = {0, 1},
                  .start_index_map = {0, 1},
                  .index_vector_dim = 1,
                  .slice_sizes = {1, 1}};
  EXPECT_EQ(Gather(ShapeUtil::MakeShape(S32, {2}), spec, Matrix3x3(),
                   LiteralUtil::CreateR2<int64_t>({{1, 1}, {2, 0}})),
            R1<int32_t>({5, 7}));
}

TEST(GatherTest, BatchDynamicSliceWithClamping) {
  // operand[r][c] = 5r + c (4x5). Slices of 2x2 at (1,2): {7,8,12,13}; at
  // (3,3) the start is clamped to (2,3): {13,14,18,19}; at (-4, 1) to (0,1):
  // {1,2,6,7}.
  std::vector<int32_t> values(20);
  for (int i = 0; i < 20; ++i) values[i] = i;
  GatherSpec spec{.offset_dims = {1, 2},
                  .collapsed_slice_dims = {},
                  .start_index_map = {0, 1},
                  .index_vector_dim = 1,
                  .slice_sizes = {2, 2}};
  EXPECT_EQ(Gather(ShapeUtil::MakeShape(S32, {3, 2, 2}), spec, Values<int32_t>({4, 5}, values),
                   LiteralUtil::CreateR2<int32_t>({{1, 2}, {3, 3}, {-4, 1}})),
            Values<int32_t>({3, 2, 2}, {7, 8, 12, 13, 13, 14, 18, 19, 1, 2, 6, 7}));
}

TEST(GatherTest, IndexVectorDimFirst) {
  // The same gather_nd with indices stored as [2 (vector), N]: column j is
  // the index vector of output j: (1,1) -> 5, (2,0) -> 7.
  GatherSpec spec{.offset_dims = {},
                  .collapsed_slice_dims = {0, 1},
                  .start_index_map = {0, 1},
                  .index_vector_dim = 0,
                  .slice_sizes = {1, 1}};
  EXPECT_EQ(Gather(ShapeUtil::MakeShape(S32, {2}), spec, Matrix3x3(),
                   LiteralUtil::CreateR2<int32_t>({{1, 2}, {1, 0}})),
            R1<int32_t>({5, 7}));
}

TEST(GatherTest, StartIndexMapPermuted) {
  // start_index_map {1, 0}: the vector (a, b) starts at row b, column a.
  // Vector (2, 0) -> row 0 col 2 -> 3.
  GatherSpec spec{.offset_dims = {},
                  .collapsed_slice_dims = {0, 1},
                  .start_index_map = {1, 0},
                  .index_vector_dim = 1,
                  .slice_sizes = {1, 1}};
  EXPECT_EQ(Gather(ShapeUtil::MakeShape(S32, {1}), spec, Matrix3x3(),
                   LiteralUtil::CreateR2<int32_t>({{2, 0}})),
            R1<int32_t>({3}));
}

TEST(GatherTest, BatchingDims) {
  // take_along_axis: out[b] = operand[b][idx[b]] with operand batching dim 0
  // matched to indices dim 0.
  GatherSpec spec{.offset_dims = {},
                  .collapsed_slice_dims = {1},
                  .start_index_map = {1},
                  .index_vector_dim = 1,
                  .slice_sizes = {1, 1},
                  .operand_batching_dims = {0},
                  .start_indices_batching_dims = {0}};
  EXPECT_EQ(Gather(ShapeUtil::MakeShape(F32, {2}), spec,
                   LiteralUtil::CreateR2<float>({{10, 11, 12}, {20, 21, 22}}), R1<int32_t>({2, 0})),
            R1<float>({12, 20}));
}

TEST(GatherTest, BatchingDimsWithSlices) {
  // operand [batch=2, 4]; per batch, a slice of 2 starting at idx[b]
  // (clamped to 2): b0 start 1 -> {1,2}; b1 start 3 -> clamped 2 -> {16,17}.
  GatherSpec spec{.offset_dims = {1},
                  .collapsed_slice_dims = {},
                  .start_index_map = {1},
                  .index_vector_dim = 1,
                  .slice_sizes = {1, 2},
                  .operand_batching_dims = {0},
                  .start_indices_batching_dims = {0}};
  EXPECT_EQ(
      Gather(ShapeUtil::MakeShape(S32, {2, 2}), spec,
             LiteralUtil::CreateR2<int32_t>({{0, 1, 2, 3}, {14, 15, 16, 17}}), R1<int32_t>({1, 3})),
      LiteralUtil::CreateR2<int32_t>({{1, 2}, {16, 17}}));
}

TEST(GatherTest, BadSliceSizesAreErrors) {
  HloGatherInstruction gather(HloOpcode::kGather, ShapeUtil::MakeShape(S32, {2, 4}), {});
  GatherDimensionNumbers& dn = gather.mutable_attrs()->gather_dimension_numbers;
  *dn.mutable_offset_dims() = {1};
  *dn.mutable_collapsed_slice_dims() = {0};
  *dn.mutable_start_index_map() = {0};
  dn.set_index_vector_dim(1);
  gather.mutable_attrs()->slice_sizes = {1, 4};  // larger than the operand's 3 columns
  EXPECT_EQ(EvaluateGather(gather, Matrix3x3(), R1<int32_t>({0, 2})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- scatter ------------------------------------------------------------------------

struct ScatterSpec {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim;
  std::vector<int64_t> input_batching_dims = {}, scatter_indices_batching_dims = {};
};

absl::StatusOr<Literal> Scatter(const Shape& shape, const ScatterSpec& spec,
                                HloComputation* combiner, std::vector<const Literal*> operands,
                                const Literal& indices, std::vector<const Literal*> updates,
                                MiniRunner* runner) {
  HloScatterInstruction scatter(HloOpcode::kScatter, shape, {});
  ScatterDimensionNumbers& dn = scatter.mutable_attrs()->scatter_dimension_numbers;
  *dn.mutable_update_window_dims() = spec.update_window_dims;
  *dn.mutable_inserted_window_dims() = spec.inserted_window_dims;
  *dn.mutable_scatter_dims_to_operand_dims() = spec.scatter_dims_to_operand_dims;
  dn.set_index_vector_dim(spec.index_vector_dim);
  *dn.mutable_input_batching_dims() = spec.input_batching_dims;
  *dn.mutable_scatter_indices_batching_dims() = spec.scatter_indices_batching_dims;
  scatter.set_to_apply(combiner);
  return EvaluateScatter(scatter, operands, indices, updates, runner->AsRunner());
}

const ScatterSpec kElementScatter{.update_window_dims = {},
                                  .inserted_window_dims = {0},
                                  .scatter_dims_to_operand_dims = {0},
                                  .index_vector_dim = 1};

TEST(ScatterTest, AddWithDuplicateIndices) {
  // Index 1 receives 10 + 30, index 3 receives 20.
  Computations c;
  MiniRunner runner;
  Literal operand = R1<float>({1, 1, 1, 1, 1});
  Literal updates = R1<float>({10, 20, 30});
  absl::StatusOr<Literal> result =
      Scatter(ShapeUtil::MakeShape(F32, {5}), kElementScatter, c.Binary(HloOpcode::kAdd, F32),
              {&operand}, R1<int32_t>({1, 3, 1}), {&updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<float>({1, 41, 1, 21, 1}));
  EXPECT_EQ(runner.calls(), 0);  // add runs natively
}

TEST(ScatterTest, GenericCombinerGoesThroughTheRunnerInOrder) {
  // current - update, applied in index order: 100 - 10 - 30 at index 1.
  Computations c;
  MiniRunner runner;
  Literal operand = R1<int32_t>({100, 100, 100});
  Literal updates = R1<int32_t>({10, 20, 30});
  absl::StatusOr<Literal> result =
      Scatter(ShapeUtil::MakeShape(S32, {3}), kElementScatter, c.Binary(HloOpcode::kSubtract, S32),
              {&operand}, R1<int32_t>({1, 2, 1}), {&updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<int32_t>({100, 60, 80}));
  EXPECT_EQ(runner.calls(), 3);
}

TEST(ScatterTest, OutOfBoundsUpdatesAreSkipped) {
  // Indices -1 and 5 are outside [0, 5): only index 2 is updated.
  Computations c;
  MiniRunner runner;
  Literal operand = R1<int32_t>({0, 0, 0, 0, 0});
  Literal updates = R1<int32_t>({1, 2, 3});
  absl::StatusOr<Literal> result =
      Scatter(ShapeUtil::MakeShape(S32, {5}), kElementScatter, c.Binary(HloOpcode::kAdd, S32),
              {&operand}, R1<int32_t>({-1, 5, 2}), {&updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<int32_t>({0, 0, 3, 0, 0}));
}

TEST(ScatterTest, PartlyOutOfBoundsWindowIsSkippedWhole) {
  // Windows of 2 elements: start 3 would cover {3, 4} of a 4-element
  // operand, so it is skipped entirely; start 1 adds {5, 6} to {1, 2}.
  Computations c;
  MiniRunner runner;
  Literal operand = R1<int32_t>({0, 0, 0, 0});
  Literal updates = LiteralUtil::CreateR2<int32_t>({{1, 2}, {5, 6}});
  ScatterSpec spec{.update_window_dims = {1},
                   .inserted_window_dims = {},
                   .scatter_dims_to_operand_dims = {0},
                   .index_vector_dim = 1};
  absl::StatusOr<Literal> result =
      Scatter(ShapeUtil::MakeShape(S32, {4}), spec, c.Binary(HloOpcode::kAdd, S32), {&operand},
              LiteralUtil::CreateR2<int32_t>({{3}, {1}}), {&updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<int32_t>({0, 5, 6, 0}));
}

TEST(ScatterTest, ReplaceRows) {
  // XLA's TensorFlowScatterV1_Update: rows 0 and 2 replaced.
  Computations c;
  MiniRunner runner;
  Literal operand = Matrix3x3();
  Literal updates = LiteralUtil::CreateR2<int32_t>({{10, 20, 30}, {70, 80, 90}});
  ScatterSpec spec{.update_window_dims = {1},
                   .inserted_window_dims = {0},
                   .scatter_dims_to_operand_dims = {0},
                   .index_vector_dim = 1};
  absl::StatusOr<Literal> result =
      Scatter(ShapeUtil::MakeShape(S32, {3, 3}), spec, c.TakeUpdate(S32), {&operand},
              R1<int32_t>({0, 2}), {&updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<int32_t>({{10, 20, 30}, {4, 5, 6}, {70, 80, 90}}));
}

TEST(ScatterTest, ScatterNdIntoMatrix) {
  // Index vectors (row, col): (0,2) += 100, (2,1) += 200.
  Computations c;
  MiniRunner runner;
  Literal operand = Matrix3x3();
  Literal updates = R1<int32_t>({100, 200});
  ScatterSpec spec{.update_window_dims = {},
                   .inserted_window_dims = {0, 1},
                   .scatter_dims_to_operand_dims = {0, 1},
                   .index_vector_dim = 1};
  absl::StatusOr<Literal> result =
      Scatter(ShapeUtil::MakeShape(S32, {3, 3}), spec, c.Binary(HloOpcode::kAdd, S32), {&operand},
              LiteralUtil::CreateR2<int32_t>({{0, 2}, {2, 1}}), {&updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<int32_t>({{1, 2, 103}, {4, 5, 6}, {7, 208, 9}}));
}

TEST(ScatterTest, BatchingDims) {
  // operand [batch=2, 3]; batch b's update goes to column idx[b].
  Computations c;
  MiniRunner runner;
  Literal operand = LiteralUtil::CreateR2<float>({{0, 0, 0}, {0, 0, 0}});
  Literal updates = R1<float>({5, 7});
  ScatterSpec spec{.update_window_dims = {},
                   .inserted_window_dims = {1},
                   .scatter_dims_to_operand_dims = {1},
                   .index_vector_dim = 1,
                   .input_batching_dims = {0},
                   .scatter_indices_batching_dims = {0}};
  absl::StatusOr<Literal> result =
      Scatter(ShapeUtil::MakeShape(F32, {2, 3}), spec, c.Binary(HloOpcode::kAdd, F32), {&operand},
              R1<int32_t>({2, 0}), {&updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<float>({{0, 0, 5}, {7, 0, 0}}));
}

TEST(ScatterTest, Variadic) {
  // Two operands combined by (sum, max): index 0 gets (1+2+3, max(5, 9, 4)).
  Computations c;
  MiniRunner runner;
  Literal sums = R1<int32_t>({1, 1});
  Literal maxes = R1<float>({5, 5});
  Literal add_updates = R1<int32_t>({2, 3, 10});
  Literal max_updates = R1<float>({9, 4, 1});
  Shape shape =
      ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(S32, {2}), ShapeUtil::MakeShape(F32, {2})});
  absl::StatusOr<Literal> result =
      Scatter(shape, kElementScatter, c.AddAndMax(S32, F32), {&sums, &maxes},
              R1<int32_t>({0, 0, 1}), {&add_updates, &max_updates}, &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->tuple_size(), 2);
  EXPECT_EQ(result->tuple_element(0), R1<int32_t>({6, 11}));
  EXPECT_EQ(result->tuple_element(1), R1<float>({9, 5}));
}

// --- select-and-scatter -------------------------------------------------------------

absl::StatusOr<Literal> SelectAndScatter(const Literal& operand, const Literal& source, float init,
                                         std::vector<WindowDimension> window,
                                         HloComputation* select, HloComputation* scatter,
                                         MiniRunner* runner) {
  HloWindowInstruction s(HloOpcode::kSelectAndScatter, operand.shape(), {});
  *s.mutable_attrs()->window.mutable_dimensions() = window;
  s.AppendCalledComputation(select);
  s.AppendCalledComputation(scatter);
  return EvaluateSelectAndScatter(s, operand, source, LiteralUtil::CreateR0<float>(init),
                                  runner->AsRunner());
}

WindowDimension Dim(int64_t size, int64_t stride, int64_t pad_low = 0, int64_t pad_high = 0) {
  WindowDimension d;
  d.set_size(size);
  d.set_stride(stride);
  d.set_padding_low(pad_low);
  d.set_padding_high(pad_high);
  return d;
}

TEST(SelectAndScatterTest, MaxPoolGradient) {
  // 2x2 windows, stride 2. Maxima: 8 at (1,1), 9 at (1,2), 6 at (3,1); the
  // last window holds 7 twice, and select(a, b) = a >= b keeps the first
  // one, (2,2). Each receives its window's source value.
  Computations c;
  MiniRunner runner;
  Literal operand =
      LiteralUtil::CreateR2<float>({{7, 2, 5, 3}, {3, 8, 9, 3}, {1, 5, 7, 5}, {0, 6, 2, 7}});
  Literal source = LiteralUtil::CreateR2<float>({{2, 6}, {3, 1}});
  absl::StatusOr<Literal> result =
      SelectAndScatter(operand, source, 0, {Dim(2, 2), Dim(2, 2)},
                       c.Binary(HloOpcode::kCompare, F32, ComparisonDirection::kGe),
                       c.Binary(HloOpcode::kAdd, F32), &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result,
            LiteralUtil::CreateR2<float>({{0, 0, 0, 0}, {0, 2, 6, 0}, {0, 0, 1, 0}, {0, 3, 0, 0}}));
  EXPECT_EQ(runner.calls(), 0);  // GE select and add scatter run natively
}

TEST(SelectAndScatterTest, OverlappingWindowsAccumulate) {
  // Windows {1,5} and {5,3} both select the 5: it receives 2 + 6.
  Computations c;
  MiniRunner runner;
  absl::StatusOr<Literal> result =
      SelectAndScatter(R1<float>({1, 5, 3}), R1<float>({2, 6}), 0, {Dim(2, 1)},
                       c.Binary(HloOpcode::kCompare, F32, ComparisonDirection::kGe),
                       c.Binary(HloOpcode::kAdd, F32), &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<float>({0, 8, 0}));
}

TEST(SelectAndScatterTest, PaddingIsNeverSelected) {
  // Window 3, stride 2, padding 1 on both sides: the windows cover
  // {pad, -3, -1} and {-1, -7, pad}. The padding is never a candidate, even
  // though every operand value is negative: both windows select the -1 at
  // index 1, which becomes init 100 + 10 + 20.
  Computations c;
  MiniRunner runner;
  absl::StatusOr<Literal> result =
      SelectAndScatter(R1<float>({-3, -1, -7}), R1<float>({10, 20}), 100, {Dim(3, 2, 1, 1)},
                       c.Binary(HloOpcode::kCompare, F32, ComparisonDirection::kGe),
                       c.Binary(HloOpcode::kAdd, F32), &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<float>({100, 130, 100}));
}

TEST(SelectAndScatterTest, GenericComputationsThroughTheRunner) {
  // select = compare(p1, p0, LE), which is p0 >= p1 written the other way
  // round (not recognized as native), so the maxima 5 and 9 are selected;
  // scatter = subtract, so they become init 0 minus the source value.
  Computations c;
  MiniRunner runner;
  absl::StatusOr<Literal> result = SelectAndScatter(
      R1<float>({1, 5, 9, 2}), R1<float>({10, 20}), 0, {Dim(2, 2)},
      c.Binary(HloOpcode::kCompare, F32, ComparisonDirection::kLe, ComparisonType::kDefault,
               /*swap=*/true),
      c.Binary(HloOpcode::kSubtract, F32), &runner);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<float>({0, -10, -20, 0}));
  EXPECT_EQ(runner.calls(), 4);  // two selects, two scatters
}

TEST(SelectAndScatterTest, WrongSourceShapeIsAnError) {
  Computations c;
  MiniRunner runner;
  absl::StatusOr<Literal> result =
      SelectAndScatter(R1<float>({1, 5, 9, 2}), R1<float>({10, 20, 30}), 0, {Dim(2, 2)},
                       c.Binary(HloOpcode::kCompare, F32), c.Binary(HloOpcode::kAdd, F32), &runner);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle
