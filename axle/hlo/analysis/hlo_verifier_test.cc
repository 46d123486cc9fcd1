//===- hlo_verifier_test.cc - Verifier on modules built with the IR API ----===//
#include "axle/hlo/analysis/hlo_verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Shape S(PrimitiveType type, std::vector<int64_t> dims) { return ShapeUtil::MakeShape(type, dims); }

// Builds computations instruction by instruction.
class Builder {
 public:
  explicit Builder(std::string name) : computation_(std::make_unique<HloComputation>(name)) {}

  HloInstruction* Parameter(int64_t number, const Shape& shape, std::string name) {
    auto p = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, shape,
                                                       absl::Span<HloInstruction* const>{});
    p->mutable_attrs()->parameter_number = number;
    return Add(std::move(p), std::move(name));
  }
  HloInstruction* Op(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
                     std::string name) {
    return Add(HloInstruction::Create(opcode, shape, operands), std::move(name));
  }
  template <typename T>
  T* Typed(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
           std::string name) {
    auto instruction = std::make_unique<T>(opcode, shape, operands);
    T* raw = instruction.get();
    Add(std::move(instruction), std::move(name));
    return raw;
  }
  HloInstruction* Add(std::unique_ptr<HloInstruction> instruction, std::string name) {
    instruction->SetName(std::move(name));
    HloInstruction* raw = computation_->AddInstruction(std::move(instruction));
    computation_->set_root_instruction(raw);
    return raw;
  }
  std::unique_ptr<HloComputation> Build() { return std::move(computation_); }

 private:
  std::unique_ptr<HloComputation> computation_;
};

std::string Verify(const HloModule& module, HloVerifierOptions options = {}) {
  absl::Status status = VerifyHloModule(module, options);
  return status.ok() ? "OK" : std::string(status.message());
}

// ENTRY main (p0: f32[2], p1: f32[2]) -> f32[2] { add(p0, p1) }
std::unique_ptr<HloModule> AddModule(const Shape& result = S(F32, {2})) {
  auto module = std::make_unique<HloModule>("m");
  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, S(F32, {2}), "p0");
  HloInstruction* p1 = b.Parameter(1, S(F32, {2}), "p1");
  b.Op(HloOpcode::kAdd, result, {p0, p1}, "sum");
  module->AddEntryComputation(b.Build());
  return module;
}

TEST(HloVerifierTest, AcceptsWellFormedModule) {
  auto module = AddModule();
  EXPECT_EQ(Verify(*module), "OK");
  HloVerifier verifier;
  auto changed = verifier.Run(module.get());
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST(HloVerifierTest, RejectsWrongShape) {
  auto module = AddModule(S(F32, {3}));
  EXPECT_THAT(Verify(*module),
              AllOf(HasSubstr("%sum (add) in computation main"), HasSubstr("expected shape f32[2]"),
                    HasSubstr("the instruction's shape is f32[3]")));
}

TEST(HloVerifierTest, RejectsImplicitBroadcastAndMixedPrecision) {
  {
    auto module = std::make_unique<HloModule>("m");
    Builder b("main");
    HloInstruction* p0 = b.Parameter(0, S(F32, {2, 1}), "p0");
    HloInstruction* p1 = b.Parameter(1, S(F32, {2, 3}), "p1");
    b.Op(HloOpcode::kMultiply, S(F32, {2, 3}), {p0, p1}, "mul");
    module->AddEntryComputation(b.Build());
    EXPECT_THAT(Verify(*module), HasSubstr("implicit broadcast is not allowed"));
  }
  {
    auto module = std::make_unique<HloModule>("m");
    Builder b("main");
    HloInstruction* p0 = b.Parameter(0, S(BF16, {2}), "p0");
    HloInstruction* p1 = b.Parameter(1, S(F32, {2}), "p1");
    b.Op(HloOpcode::kAdd, S(F32, {2}), {p0, p1}, "add");
    module->AddEntryComputation(b.Build());
    EXPECT_THAT(Verify(*module), HasSubstr("mixed precision is disallowed"));
    HloVerifierOptions options;
    options.allow_mixed_precision = true;
    EXPECT_EQ(Verify(*module, options), "OK");
  }
}

TEST(HloVerifierTest, RejectsSparseParameterNumbers) {
  auto module = std::make_unique<HloModule>("m");
  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, S(F32, {2}), "p0");
  HloInstruction* p2 = b.Parameter(2, S(F32, {2}), "p2");
  b.Op(HloOpcode::kAdd, S(F32, {2}), {p0, p2}, "sum");
  module->AddEntryComputation(b.Build());
  EXPECT_THAT(Verify(*module),
              AllOf(HasSubstr("computation main"), HasSubstr("none is numbered 1")));
}

TEST(HloVerifierTest, RejectsDuplicateNames) {
  auto module = std::make_unique<HloModule>("m");
  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, S(F32, {2}), "x");
  b.Op(HloOpcode::kNegate, S(F32, {2}), {p0}, "x");
  module->AddEntryComputation(b.Build());
  EXPECT_THAT(Verify(*module), HasSubstr("the name is not unique"));
}

TEST(HloVerifierTest, RejectsBadGetTupleElementAndTranspose) {
  {
    auto module = std::make_unique<HloModule>("m");
    Builder b("main");
    HloInstruction* p0 = b.Parameter(0, ShapeUtil::MakeTupleShape({S(F32, {2}), S(S32, {})}), "p0");
    auto* gte = b.Typed<HloGetTupleElementInstruction>(HloOpcode::kGetTupleElement, S(F32, {2}),
                                                       {p0}, "gte");
    gte->mutable_attrs()->tuple_index = 2;
    module->AddEntryComputation(b.Build());
    EXPECT_THAT(Verify(*module), AllOf(HasSubstr("%gte (get-tuple-element)"),
                                       HasSubstr("index=2 is out of bounds")));
  }
  {
    auto module = std::make_unique<HloModule>("m");
    Builder b("main");
    HloInstruction* p0 = b.Parameter(0, S(F32, {2, 3}), "p0");
    auto* t = b.Typed<HloDimensionsInstruction>(HloOpcode::kTranspose, S(F32, {3, 2}), {p0}, "t");
    t->mutable_attrs()->dimensions = {1, 1};
    module->AddEntryComputation(b.Build());
    EXPECT_THAT(Verify(*module), HasSubstr("is not a permutation"));
  }
}

TEST(HloVerifierTest, RejectsWrongOperandCount) {
  auto module = std::make_unique<HloModule>("m");
  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, S(F32, {2}), "p0");
  b.Op(HloOpcode::kAdd, S(F32, {2}), {p0}, "sum");
  module->AddEntryComputation(b.Build());
  EXPECT_THAT(Verify(*module), HasSubstr("expected 2 operand(s), got 1"));
}

TEST(HloVerifierTest, RejectsControlCycle) {
  auto module = std::make_unique<HloModule>("m");
  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, S(F32, {2}), "p0");
  HloInstruction* a = b.Op(HloOpcode::kNegate, S(F32, {2}), {p0}, "a");
  HloInstruction* c = b.Op(HloOpcode::kNegate, S(F32, {2}), {a}, "c");
  c->AddControlDependencyTo(a);
  module->AddEntryComputation(b.Build());
  EXPECT_THAT(Verify(*module), HasSubstr("is part of a cycle"));
}

TEST(HloVerifierTest, ChecksReduceComputation) {
  auto module = std::make_unique<HloModule>("m");
  Builder add("add");
  HloInstruction* x = add.Parameter(0, S(F32, {}), "x");
  HloInstruction* y = add.Parameter(1, S(F32, {}), "y");
  add.Op(HloOpcode::kAdd, S(F32, {}), {x, y}, "xy");
  HloComputation* add_computation = module->AddEmbeddedComputation(add.Build());

  Builder b("main");
  HloInstruction* p0 = b.Parameter(0, S(F32, {4, 5}), "p0");
  HloInstruction* zero = b.Parameter(1, S(F32, {}), "zero");
  auto* reduce =
      b.Typed<HloDimensionsInstruction>(HloOpcode::kReduce, S(F32, {4}), {p0, zero}, "reduce");
  reduce->mutable_attrs()->dimensions = {1};
  reduce->AppendCalledComputation(add_computation);
  module->AddEntryComputation(b.Build());
  EXPECT_EQ(Verify(*module), "OK");
  reduce->mutable_attrs()->dimensions = {0};
  EXPECT_THAT(Verify(*module), HasSubstr("expected shape f32[5]"));
}

TEST(HloVerifierTest, ChecksInputOutputAliasAndDonors) {
  {
    auto module = AddModule();
    ASSERT_TRUE(module->input_output_alias_config().SetUpAlias({}, 0, {}).ok());
    EXPECT_EQ(Verify(*module), "OK");
  }
  {
    auto module = AddModule();
    ASSERT_TRUE(module->input_output_alias_config().SetUpAlias({}, 5, {}).ok());
    EXPECT_THAT(Verify(*module), HasSubstr("parameter 5 does not exist"));
  }
  {
    auto module = AddModule();
    ASSERT_TRUE(module->input_output_alias_config().SetUpAlias({0}, 0, {}).ok());
    EXPECT_THAT(Verify(*module), HasSubstr("output index {0} is not in the result shape f32[2]"));
  }
  {
    auto module = AddModule();
    ASSERT_TRUE(module->input_output_alias_config().SetUpAlias({}, 0, {}).ok());
    ASSERT_TRUE(module->buffer_donor_config().AddBufferDonor(0, {}).ok());
    EXPECT_THAT(Verify(*module), HasSubstr("also in input_output_alias"));
  }
  {
    auto module = AddModule();
    ASSERT_TRUE(module->buffer_donor_config().AddBufferDonor(1, {}).ok());
    EXPECT_EQ(Verify(*module), "OK");
  }
}

TEST(HloVerifierTest, ChecksEntryComputationLayout) {
  auto module = AddModule();
  ProgramShape layout;
  *layout.mutable_parameters() = {S(F32, {2}), S(F32, {2})};
  *layout.mutable_result() = S(F32, {2});
  module->mutable_config().entry_computation_layout = layout;
  EXPECT_EQ(Verify(*module), "OK");
  layout.mutable_parameters()->pop_back();
  module->mutable_config().entry_computation_layout = layout;
  EXPECT_THAT(Verify(*module), HasSubstr("entry_computation_layout has 1 parameters"));
}

}  // namespace
}  // namespace axle
