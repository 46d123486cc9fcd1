//===- conv_chain.cc - A depthwise convolution and its 1x1 neighbours ------===//
//
// See conv_chain.h: which convolutions chain (from the HLO) and how the
// chain is emitted; the thunk is conv_chain_thunk.cc's.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/conv_chain.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/concat_in_place.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/convolution_thunk.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/epilogue_plan.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

using conv::ConvPlan;
using conv::DnnlConvolutionThunk;

// --- Which convolutions chain ---

std::vector<const Literal*> ConstantOperands(const HloInstruction& instruction) {
  std::vector<const Literal*> constants;
  for (const HloInstruction* operand : instruction.operands()) {
    const auto* constant = dyn_cast<HloConstantInstruction>(operand);
    constants.push_back(constant != nullptr ? &constant->literal() : nullptr);
  }
  return constants;
}

// The plan of `instruction` when it may be a stage of a chain: a
// convolution (fusion) the oneDNN thunk runs, f32, two spatial dims,
// batch 1, constant weights, a dense result that is not the computation's
// and does not write a concatenation's slice.
std::optional<ConvPlan> StagePlan(const HloInstruction& instruction) {
  if (FindThunkEmitter(instruction) != &EmitConvolutionThunk || instruction.parent() == nullptr ||
      instruction.parent()->root_instruction() == &instruction || !instruction.shape().IsArray() ||
      instruction.shape().element_type() != F32 ||
      !ShapeUtil::HasDescendingLayout(instruction.shape()) || ConcatSliceOf(instruction)) {
    return std::nullopt;
  }
  absl::StatusOr<ConvPlan> plan = conv::MakePlan(instruction, ConstantOperands(instruction));
  if (!plan.ok() || !conv::DnnlTakes(*plan) || plan->lhs.type() != F32 || plan->rhs.type() != F32 ||
      plan->output_type != F32 || plan->spatial != 2 || plan->out_dims[0] != 1 ||
      plan->rhs.literal == nullptr || plan->lhs.operand < 0 || !plan->output_strides.empty() ||
      plan->batch_groups != 1) {
    return std::nullopt;
  }
  for (const WindowDimension& w : plan->window) {
    if (w.base_dilation() != 1 || w.window_dilation() != 1 || w.window_reversal() ||
        w.padding_low() < 0 || w.padding_high() < 0) {
      return std::nullopt;
    }
  }
  return *std::move(plan);
}

// A 1x1 convolution at stride 1 without padding or groups.
bool Pointwise(const ConvPlan& plan) {
  if (plan.feature_groups != 1 || plan.rhs_dims[2] != 1 || plan.rhs_dims[3] != 1) return false;
  for (const WindowDimension& w : plan.window) {
    if (w.stride() != 1 || w.padding_low() != 0 || w.padding_high() != 0) return false;
  }
  return true;
}

// One group per feature, as many outputs as inputs.
bool Depthwise(const ConvPlan& plan) {
  return plan.feature_groups > 1 && plan.feature_groups == plan.lhs_dims[1] &&
         plan.out_dims[1] == plan.lhs_dims[1] && plan.rhs_dims[1] == 1;
}

int64_t Uses(const HloInstruction& user, const HloInstruction* operand) {
  int64_t uses = 0;
  for (const HloInstruction* o : user.operands()) uses += o == operand ? 1 : 0;
  return uses;
}

// The instruction a stage reads as its input.
const HloInstruction* InputOf(const HloInstruction& stage, const ConvPlan& plan) {
  return stage.operand(plan.lhs.operand);
}

// Whether a depthwise stage reads `instruction` as its input (it is then
// an expand, not a project).
bool FeedsDepthwise(const HloInstruction& instruction) {
  for (const HloInstruction* user : instruction.users()) {
    std::optional<ConvPlan> plan = StagePlan(*user);
    if (plan && Depthwise(*plan) && InputOf(*user, *plan) == &instruction) return true;
  }
  return false;
}

struct Chain {
  const HloInstruction* expand = nullptr;
  const HloInstruction* depthwise = nullptr;
  const HloInstruction* project = nullptr;

  std::vector<const HloInstruction*> Stages() const {
    std::vector<const HloInstruction*> stages;
    for (const HloInstruction* stage : {expand, depthwise, project}) {
      if (stage != nullptr) stages.push_back(stage);
    }
    return stages;
  }
};

// The chain around `depthwise` when it is a depthwise stage with an
// expand before it or a project after it.
std::optional<Chain> ChainAround(const HloInstruction& depthwise) {
  // On one thread the bands' primitives cost more than their locality
  // saves (mobilenet_v2, one thread: 7.7-8.4 ms chained against 7.4-7.6
  // ms; on two, 5.0-5.7 against 6.0-6.1 in the same minutes).
  if (!EnvironmentOptions::Read().cpu_conv_chain.value_or(true) ||
      ThreadPool::DefaultNumThreads() < 2) {
    return std::nullopt;
  }
  std::optional<ConvPlan> plan = StagePlan(depthwise);
  if (!plan || !Depthwise(*plan) || plan->addend) return std::nullopt;
  Chain chain;
  chain.depthwise = &depthwise;
  const HloInstruction* input = InputOf(depthwise, *plan);
  if (input->user_count() == 1 && Uses(depthwise, input) == 1) {
    std::optional<ConvPlan> expand = StagePlan(*input);
    if (expand && Pointwise(*expand) && !expand->addend) chain.expand = input;
  }
  if (depthwise.user_count() == 1) {
    const HloInstruction* user = depthwise.users().front();
    std::optional<ConvPlan> project = StagePlan(*user);
    if (project && Pointwise(*project) && InputOf(*user, *project) == &depthwise &&
        Uses(*user, &depthwise) == 1 && !FeedsDepthwise(*user)) {
      chain.project = user;
    }
  }
  if (chain.expand == nullptr && chain.project == nullptr) return std::nullopt;
  return chain;
}

// The chain's thunk: each stage's oneDNN thunk (a stage's input from the
// stage before, -1 in `values`, stands for the chain's output value there,
// which a stage never reads: its rows come from the chain), then the bands.
absl::StatusOr<std::unique_ptr<Thunk>> BuildChain(const std::vector<const HloInstruction*>& stages,
                                                  std::vector<std::vector<int64_t>> values,
                                                  std::vector<int64_t> chain_values, int64_t output,
                                                  ProgramBuilder& builder) {
  std::vector<std::unique_ptr<DnnlConvolutionThunk>> thunks;
  for (size_t s = 0; s < stages.size(); ++s) {
    for (int64_t& value : values[s]) value = value < 0 ? output : value;
    AXLE_ASSIGN_OR_RETURN(ConvPlan plan,
                          conv::MakePlan(*stages[s], builder.ConstantsOf(values[s])));
    auto thunk = std::make_unique<DnnlConvolutionThunk>(stages[s]->name(), values[s], output);
    AXLE_RETURN_IF_ERROR(thunk->Build(std::move(plan)));
    thunks.push_back(std::move(thunk));
  }
  std::optional<ConvPlan> first = StagePlan(*stages.front());
  const bool has_expand = first && !Depthwise(*first);
  return MakeConvChainThunk(absl::StrCat(stages.back()->name(), ".chain"), std::move(chain_values),
                            output, std::move(thunks), has_expand);
}

}  // namespace

bool ConvChainDefers(const HloInstruction& instruction) {
  if (std::optional<Chain> chain = ChainAround(instruction)) return chain->project != nullptr;
  if (instruction.user_count() != 1) return false;
  std::optional<Chain> chain = ChainAround(*instruction.users().front());
  return chain && chain->expand == &instruction;
}

std::vector<const HloInstruction*> ConvChainEndingAt(const HloInstruction& instruction) {
  if (std::optional<Chain> chain = ChainAround(instruction)) {
    if (chain->project == nullptr) return chain->Stages();
    return {};
  }
  std::optional<ConvPlan> plan = StagePlan(instruction);
  if (!plan || !Pointwise(*plan)) return {};
  std::optional<Chain> chain = ChainAround(*InputOf(instruction, *plan));
  if (chain && chain->project == &instruction) return chain->Stages();
  return {};
}

absl::Status EmitConvChain(const std::vector<const HloInstruction*>& stages,
                           ProgramBuilder& builder) {
  const HloInstruction& last = *stages.back();
  // The stages' operands' values; a stage's input from the stage before
  // has none (-1 until the output is defined).
  std::vector<std::vector<int64_t>> values(stages.size());
  std::vector<int64_t> chain_values;
  for (size_t s = 0; s < stages.size(); ++s) {
    for (const HloInstruction* operand : stages[s]->operands()) {
      if (s > 0 && operand == stages[s - 1]) {
        values[s].push_back(-1);
        continue;
      }
      AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(operand));
      values[s].push_back(value);
      if (std::find(chain_values.begin(), chain_values.end(), value) == chain_values.end()) {
        chain_values.push_back(value);
      }
    }
  }
  const int64_t output = builder.DefineTemporary(&last, {}, last.shape());
  absl::StatusOr<std::unique_ptr<Thunk>> chain =
      BuildChain(stages, std::move(values), std::move(chain_values), output, builder);
  if (chain.ok()) {
    builder.AddThunk(*std::move(chain));
    return absl::OkStatus();
  }
  // One thunk per stage; the last one's value is defined already.
  for (size_t s = 0; s + 1 < stages.size(); ++s) {
    AXLE_RETURN_IF_ERROR(
        EmitEpilogueThunk(*stages[s], builder, &CreateConvolutionThunk, "convolution_loop"));
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> operand_values, builder.OperandValues(last));
  const std::vector<const Literal*> constants = builder.ConstantsOf(operand_values);
  AXLE_ASSIGN_OR_RETURN(
      std::unique_ptr<Thunk> thunk,
      CreateConvolutionThunk(last, std::move(operand_values), constants, output, builder.kernels(),
                             builder.UniqueName("convolution_loop")));
  builder.AddThunk(std::move(thunk));
  return absl::OkStatus();
}

}  // namespace axle::cpu
