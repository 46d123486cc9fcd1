//===- hlo_evaluator.cc - The interpreter's dispatcher ---------------------===//
//
// Walks a computation in post order keeping one literal per live
// instruction, and sends each instruction to its op family (evaluator_*.cc)
// or to a heavy kernel (kernels.h). Control flow (call, while, conditional,
// fusion, async wrappers), tuples, tokens, custom calls and the trivial
// single-device collectives are handled here.
//
//===----------------------------------------------------------------------===//
#include "axle/eval/hlo_evaluator.h"

#include <unistd.h>

#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "axle/base/status_macros.h"
#include "axle/collectives/communicator.h"
#include "axle/collectives/in_place_permute.h"
#include "axle/core/host_feed.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/kernels.h"
#include "axle/eval/lanewise_computation.h"
#include "axle/eval/rng_sampling.h"
#include "axle/hlo/ir/hlo_opcode_families.h"

namespace axle {

using eval_internal::Describe;
using eval_internal::InvalidInstruction;
using eval_internal::Lanes;

namespace eval_internal {

std::string Describe(const HloInstruction& instruction) {
  return absl::StrCat(instruction.name(), " (", HloOpcodeString(instruction.opcode()), ")");
}

absl::Status InvalidInstruction(const HloInstruction& instruction, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(Describe(instruction), ": ", message));
}

absl::Status ExpectArray(const HloInstruction& instruction, const Literal& literal,
                         absl::string_view what) {
  if (!literal.shape().IsArray()) {
    return InvalidInstruction(instruction, absl::StrCat(what, " must be an array, not ",
                                                        literal.shape().ToString(false)));
  }
  return absl::OkStatus();
}

}  // namespace eval_internal

namespace {

absl::Status Unimplemented(const HloInstruction& instruction, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("interpreter: ", Describe(instruction), ": ", why));
}

// Adds the instruction's name to errors from code that does not know it.
absl::Status Annotate(const absl::Status& status, const HloInstruction& instruction) {
  if (status.ok() || absl::StrContains(status.message(), instruction.name())) return status;
  return absl::Status(status.code(), absl::StrCat(Describe(instruction), ": ", status.message()));
}

absl::Status CheckArgumentCount(const HloComputation& computation,
                                absl::Span<const Literal* const> args) {
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(), " takes ",
                                                   computation.num_parameters(), " arguments, got ",
                                                   args.size()));
  }
  return absl::OkStatus();
}

Literal TupleOfClones(absl::Span<const Literal* const> operands) {
  std::vector<Literal> elements;
  for (const Literal* operand : operands) elements.push_back(operand->Clone());
  return Literal::MakeTuple(std::move(elements));
}

// Builds a literal of `shape` (a tuple) whose element `index` is `value`;
// the other elements are zero.
absl::StatusOr<Literal> TupleWithElement(const HloInstruction& instruction, Literal value,
                                         int64_t index, const Literal* element0 = nullptr) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() <= index ||
      !ShapeUtil::Compatible(shape.tuple_shapes(index), value.shape())) {
    return InvalidInstruction(instruction, "result shape does not fit the async wrapper");
  }
  Literal result(shape);
  result.mutable_tuple_element(index) = std::move(value);
  if (element0 != nullptr && index != 0 &&
      ShapeUtil::Compatible(shape.tuple_shapes(0), element0->shape())) {
    result.mutable_tuple_element(0) = element0->Clone();
  }
  return result;
}

}  // namespace

HloEvaluator::HloEvaluator(int64_t max_loop_iterations)
    : max_loop_iterations_(max_loop_iterations), engine_(0) {}

HloEvaluator::~HloEvaluator() = default;

void HloEvaluator::set_seed(uint64_t seed) {
  seed_ = seed;
  engine_.seed(seed);
}

absl::StatusOr<Literal> HloEvaluator::Evaluate(const HloModule& module,
                                               absl::Span<const Literal* const> args) {
  if (module.entry_computation() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("module ", module.name(), " has no entry computation"));
  }
  module_ = &module;
  send_executions_.clear();
  absl::StatusOr<Literal> result = Evaluate(*module.entry_computation(), args);
  module_ = nullptr;
  return result;
}

absl::StatusOr<Literal> HloEvaluator::Evaluate(const HloComputation& computation,
                                               absl::Span<const Literal* const> args) {
  AXLE_RETURN_IF_ERROR(CheckArgumentCount(computation, args));
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const Shape& expected = computation.parameter_instruction(i)->shape();
    if (args[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("argument for parameter ", i, " is null"));
    }
    if (!ShapeUtil::Compatible(args[i]->shape(), expected)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument for parameter ", i, " (", computation.parameter_instruction(i)->name(),
          ") has shape ", args[i]->shape().ToString(false), " but the parameter expects ",
          expected.ToString(false)));
    }
  }
  // Each top-level run starts from the seed: results depend on (seed,
  // program, arguments) only.
  lanewise_cache_.clear();
  plans_.clear();
  engine_.seed(seed_);
  rng_state_ = 0;
  return EvaluateComputation(computation, args);
}

// What EvaluateComputation needs to know about a computation, computed once
// per top-level Evaluate: the instructions the root needs in post order, and
// for each the positions of its operands and how often it is used.
struct HloEvaluator::ComputationPlan {
  std::vector<const HloInstruction*> order;    // needed instructions only
  std::vector<std::vector<int64_t>> operands;  // positions in `order`
  std::vector<int64_t> uses;                   // operand occurrences
  int64_t root = -1;
};

const HloEvaluator::ComputationPlan& HloEvaluator::GetPlan(const HloComputation& computation) {
  auto it = plans_.find(&computation);
  if (it != plans_.end()) return *it->second;
  auto plan = std::make_unique<ComputationPlan>();
  const HloInstruction* root = computation.root_instruction();
  std::vector<HloInstruction*> all = computation.MakeInstructionPostOrder();
  // Only what the root needs runs (plus control predecessors): an unused
  // side-effecting instruction is not evaluated.
  absl::flat_hash_set<const HloInstruction*> needed;
  std::vector<const HloInstruction*> stack;
  if (root != nullptr) {
    stack.push_back(root);
    needed.insert(root);
  }
  if (participant_ && participant_->communicator != nullptr) {
    // Among participants a send is a side effect another one waits for.
    for (const HloInstruction* instruction : all) {
      HloOpcode op = instruction->opcode();
      if ((op == HloOpcode::kSend || op == HloOpcode::kSendDone) &&
          needed.insert(instruction).second) {
        stack.push_back(instruction);
      }
    }
  }
  // Host I/O always runs: an outfeed's token is seldom used, and an infeed
  // consumes its queue's value whether or not the value is used.
  for (const HloInstruction* instruction : all) {
    HloOpcode op = instruction->opcode();
    if ((op == HloOpcode::kInfeed || op == HloOpcode::kOutfeed) &&
        needed.insert(instruction).second) {
      stack.push_back(instruction);
    }
  }
  while (!stack.empty()) {
    const HloInstruction* instruction = stack.back();
    stack.pop_back();
    for (const HloInstruction* operand : instruction->operands()) {
      if (needed.insert(operand).second) stack.push_back(operand);
    }
    for (const HloInstruction* pred : instruction->control_predecessors()) {
      if (needed.insert(pred).second) stack.push_back(pred);
    }
  }
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  for (const HloInstruction* instruction : all) {
    if (!needed.contains(instruction)) continue;
    position[instruction] = static_cast<int64_t>(plan->order.size());
    plan->order.push_back(instruction);
  }
  plan->uses.assign(plan->order.size(), 0);
  for (const HloInstruction* instruction : plan->order) {
    std::vector<int64_t> operand_positions;
    for (const HloInstruction* operand : instruction->operands()) {
      auto p = position.find(operand);
      operand_positions.push_back(p == position.end() ? -1 : p->second);
      if (p != position.end()) ++plan->uses[p->second];
    }
    plan->operands.push_back(std::move(operand_positions));
  }
  if (root != nullptr) plan->root = position[root];
  auto* result = plan.get();
  plans_[&computation] = std::move(plan);
  return *result;
}

namespace {

// Bytes of host storage a literal of `shape` takes.
int64_t LiteralBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) total += LiteralBytes(s);
    return total;
  }
  if (!shape.IsArray()) return 0;
  return ShapeUtil::ByteSizeOfElements(shape);
}

int64_t PhysicalMemoryBytes() {
  static const int64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : INT64_MAX;
  }();
  return bytes;
}

}  // namespace

absl::StatusOr<Literal> HloEvaluator::EvaluateComputation(const HloComputation& computation,
                                                          absl::Span<const Literal* const> args) {
  AXLE_RETURN_IF_ERROR(CheckArgumentCount(computation, args));
  if (computation.root_instruction() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), " has no root"));
  }
  const ComputationPlan& plan = GetPlan(computation);
  size_t count = plan.order.size();
  std::vector<int64_t> uses = plan.uses;
  std::vector<Literal> owned(count);
  std::vector<const Literal*> value(count, nullptr);
  std::vector<const Literal*> operands;
  for (size_t i = 0; i < count; ++i) {
    const HloInstruction& instruction = *plan.order[i];
    const std::vector<int64_t>& operand_positions = plan.operands[i];
    HloOpcode op = instruction.opcode();
    if (op == HloOpcode::kParameter) {
      int64_t number = cast<HloParameterInstruction>(&instruction)->parameter_number();
      if (number < 0 || number >= static_cast<int64_t>(args.size())) {
        return InvalidInstruction(instruction, "parameter number out of range");
      }
      value[i] = args[number];
      continue;
    }
    if (op == HloOpcode::kConstant) {
      value[i] = &cast<HloConstantInstruction>(&instruction)->literal();
      continue;
    }
    operands.clear();
    for (int64_t p : operand_positions) {
      if (p < 0 || value[p] == nullptr) {
        return absl::InternalError(absl::StrCat(Describe(instruction), ": operand not evaluated"));
      }
      operands.push_back(value[p]);
    }
    // An operand this instruction uses for the last time (and only once)
    // may be moved from instead of copied: tuples and get-tuple-element.
    auto movable = [&](size_t k) {
      int64_t p = operand_positions[k];
      return value[p] == &owned[p] && uses[p] == 1 && p != plan.root;
    };
    if (LiteralBytes(instruction.shape()) > PhysicalMemoryBytes()) {
      return absl::ResourceExhaustedError(absl::StrCat(Describe(instruction), ": result ",
                                                       instruction.shape().ToString(false),
                                                       " is larger than this machine's memory"));
    }
    if (op == HloOpcode::kTuple) {
      std::vector<Literal> elements;
      for (size_t k = 0; k < operands.size(); ++k) {
        elements.push_back(movable(k) ? std::move(owned[operand_positions[k]])
                                      : operands[k]->Clone());
      }
      owned[i] = Literal::MakeTuple(std::move(elements));
    } else if (op == HloOpcode::kGetTupleElement && movable(0) && operands[0]->shape().IsTuple()) {
      int64_t index = cast<HloGetTupleElementInstruction>(&instruction)->tuple_index();
      Literal& tuple = owned[operand_positions[0]];
      if (index < 0 || index >= tuple.tuple_size()) {
        return InvalidInstruction(
            instruction, absl::StrCat("no element ", index, " in ", tuple.shape().ToString(false)));
      }
      owned[i] = std::move(tuple.mutable_tuple_element(index));
    } else {
      absl::StatusOr<Literal> result = EvaluateInstruction(instruction, operands);
      if (!result.ok()) return Annotate(result.status(), instruction);
      owned[i] = *std::move(result);
    }
    value[i] = &owned[i];
    for (int64_t p : operand_positions) {
      if (--uses[p] == 0 && p != plan.root) {
        owned[p] = Literal();
        value[p] = nullptr;
      }
    }
  }
  int64_t root = plan.root;
  if (value[root] == &owned[root]) return std::move(owned[root]);
  return value[root]->Clone();
}

absl::StatusOr<Literal> HloEvaluator::EvaluateInstruction(
    const HloInstruction& instruction, absl::Span<const Literal* const> operands) {
  using namespace eval_internal;  // NOLINT: the op families
  HloOpcode op = instruction.opcode();
  auto expect_operands = [&](size_t n) -> absl::Status {
    if (operands.size() < n) {
      return InvalidInstruction(instruction,
                                absl::StrCat("needs ", n, " operands, has ", operands.size()));
    }
    return absl::OkStatus();
  };
  if (HloOpcodeArity(op) != kVariadic) AXLE_RETURN_IF_ERROR(expect_operands(HloOpcodeArity(op)));

  if (op == HloOpcode::kCopy && !instruction.shape().IsArray()) return operands[0]->Clone();

  // No default: a new opcode fails to compile until it is evaluated here.
  switch (op) {
    // clang-format off
    AXLE_HLO_COLLECTIVE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return EvaluateCollective(instruction, operands);
    // clang-format on
    case HloOpcode::kClamp:
    case HloOpcode::kCompare:
    case HloOpcode::kConvert:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kSelect:
    case HloOpcode::kStochasticConvert:
      AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return EvaluateElementwise(instruction, operands);
    case HloOpcode::kParameter:
      return InvalidInstruction(instruction, "a parameter has a value only inside its computation");
    case HloOpcode::kConstant:
      return cast<HloConstantInstruction>(&instruction)->literal().Clone();
    case HloOpcode::kBitcastConvert:
      return EvaluateBitcastConvert(instruction, *operands[0]);
    case HloOpcode::kIota:
      return EvaluateIota(instruction);
    case HloOpcode::kBroadcast:
      return EvaluateBroadcast(instruction, *operands[0]);
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return EvaluateReshape(instruction, *operands[0]);
    case HloOpcode::kDynamicReshape:
      AXLE_RETURN_IF_ERROR(expect_operands(1));
      if (!instruction.shape().is_static() &&
          operands[0]->element_count() != instruction.shape().num_elements()) {
        return Unimplemented(instruction, "dynamic shapes are not supported");
      }
      return EvaluateReshape(instruction, *operands[0]);
    case HloOpcode::kTranspose:
      return EvaluateTranspose(instruction, *operands[0]);
    case HloOpcode::kReverse:
      return EvaluateReverse(instruction, *operands[0]);
    case HloOpcode::kSlice:
      return EvaluateSlice(instruction, *operands[0]);
    case HloOpcode::kDynamicSlice:
      AXLE_RETURN_IF_ERROR(expect_operands(1));
      return EvaluateDynamicSlice(instruction, operands);
    case HloOpcode::kDynamicUpdateSlice:
      return EvaluateDynamicUpdateSlice(instruction, operands);
    case HloOpcode::kConcatenate:
      AXLE_RETURN_IF_ERROR(expect_operands(1));
      return EvaluateConcatenate(instruction, operands);
    case HloOpcode::kPad:
      return EvaluatePad(instruction, *operands[0], *operands[1]);
    case HloOpcode::kGetDimensionSize:
      return EvaluateGetDimensionSize(instruction, *operands[0]);
    case HloOpcode::kSetDimensionSize:
      // Shapes are static here: the size operand does not change the data.
      return operands[0]->Clone();

    case HloOpcode::kTuple:
      return TupleOfClones(operands);
    case HloOpcode::kGetTupleElement: {
      int64_t index = cast<HloGetTupleElementInstruction>(&instruction)->tuple_index();
      if (!operands[0]->shape().IsTuple() || index < 0 || index >= operands[0]->tuple_size()) {
        return InvalidInstruction(instruction, absl::StrCat("no element ", index, " in ",
                                                            operands[0]->shape().ToString(false)));
      }
      return operands[0]->tuple_element(index).Clone();
    }
    case HloOpcode::kAfterAll:
      return LiteralUtil::CreateToken();
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return operands[0]->Clone();
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId: {
      Literal id(instruction.shape());  // device 0 of 1 unless a participant
      if (participant_ && id.shape().IsArray() && id.shape().element_type() == U32 &&
          id.element_count() == 1) {
        id.data<uint32_t>()[0] = static_cast<uint32_t>(
            op == HloOpcode::kReplicaId ? participant_->replica_id : participant_->partition_id);
      }
      return id;
    }

    case HloOpcode::kCall:
      return EvaluateComputation(*instruction.to_apply(), operands);
    case HloOpcode::kFusion:
      return EvaluateComputation(
          *cast<HloFusionInstruction>(&instruction)->fused_instructions_computation(), operands);
    case HloOpcode::kWhile:
      return EvaluateWhile(instruction, *operands[0]);
    case HloOpcode::kConditional:
      AXLE_RETURN_IF_ERROR(expect_operands(1));
      return EvaluateConditional(instruction, operands);
    case HloOpcode::kAsyncStart: {
      const auto& async = *cast<HloAsyncInstruction>(&instruction);
      AXLE_ASSIGN_OR_RETURN(Literal result,
                            EvaluateComputation(*async.async_wrapped_computation(), operands));
      Literal operand_tuple = TupleOfClones(operands);
      return TupleWithElement(instruction, std::move(result), 1, &operand_tuple);
    }
    case HloOpcode::kAsyncUpdate:
      return operands[0]->Clone();
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyDone:
      if (!operands[0]->shape().IsTuple() || operands[0]->tuple_size() < 2) {
        return InvalidInstruction(instruction, "its operand must be the tuple of an async start");
      }
      return operands[0]->tuple_element(1).Clone();
    case HloOpcode::kCopyStart:
      return TupleWithElement(instruction, operands[0]->Clone(), 1, operands[0]);

    case HloOpcode::kMap:
      return EvaluateMap(*this, instruction, operands);
    case HloOpcode::kReduce:
      return EvaluateReduce(*this, instruction, operands);
    case HloOpcode::kReduceWindow:
      return EvaluateReduceWindow(*this, instruction, operands);
    case HloOpcode::kScan:
      return EvaluateScan(*this, instruction, operands);
    case HloOpcode::kSort:
      return EvaluateSort(*this, instruction, operands);
    case HloOpcode::kTopK:
      return EvaluateTopK(instruction, *operands[0]);

    case HloOpcode::kRng:
      return EvaluateRng(*this, instruction, operands);
    case HloOpcode::kRngBitGenerator:
      return EvaluateRngBitGenerator(instruction, *operands[0]);
    case HloOpcode::kRngGetAndUpdateState: {
      // A counter starting at the seed, advanced by `delta` per use.
      const RawAttribute* attribute = instruction.FindRawAttribute("delta");
      absl::StatusOr<int64_t> delta =
          RngStateDelta(instruction.shape(), attribute != nullptr ? &attribute->value : nullptr);
      if (!delta.ok()) return InvalidInstruction(instruction, delta.status().message());
      Literal result(instruction.shape());
      result.data<uint64_t>()[0] = seed_ + rng_state_;
      rng_state_ += static_cast<uint64_t>(*delta);
      return result;
    }

    case HloOpcode::kCustomCall:
      return EvaluateCustomCall(instruction, operands);

    case HloOpcode::kSend:
    case HloOpcode::kRecv:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecvDone:
      if (participant_ && participant_->communicator != nullptr) {
        return eval_internal::EvaluateSendRecvAmongParticipants(
            instruction, operands, *participant_, received_, send_executions_);
      }
      return Unimplemented(instruction,
                           "needs several devices/host I/O, which the interpreter does not have");
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed: {
      // The device's queues (core/host_feed.h): the participant's
      // flattened id, else device 0.
      int64_t device = 0;
      if (participant_) {
        device =
            participant_->replica_id * participant_->partition_count + participant_->partition_id;
      }
      const HostFeed::Direction direction =
          op == HloOpcode::kInfeed ? HostFeed::Direction::kInfeed : HostFeed::Direction::kOutfeed;
      HostFeed& feed = HostFeed::Get(direction, "Interpreter", device);
      if (op == HloOpcode::kOutfeed) {
        if (operands.empty()) return InvalidInstruction(instruction, "has no value to outfeed");
        feed.Push(operands[0]->Clone());
        return Literal(instruction.shape());
      }
      const Shape& shape = instruction.shape();
      if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) {
        return InvalidInstruction(instruction, "must produce (data, token)");
      }
      absl::StatusOr<Literal> data = feed.Pop(FeedTimeoutFromEnvironment(), &shape.tuple_shapes(0));
      if (!data.ok()) {
        return absl::Status(data.status().code(),
                            absl::StrCat(Describe(instruction), ": ", data.status().message()));
      }
      Literal result(shape);
      result.mutable_tuple_element(0) = *std::move(data);
      return result;
    }

    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kFft:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return EvaluateKernel(instruction, operands);
  }
  return Unimplemented(instruction, "this op is not supported");
}

absl::StatusOr<Literal> HloEvaluator::EvaluateWhile(const HloInstruction& instruction,
                                                    const Literal& init) {
  const HloComputation& condition = *instruction.while_condition();
  const HloComputation& body = *instruction.while_body();
  Literal state = init.Clone();
  for (int64_t iteration = 0;; ++iteration) {
    const Literal* arg = &state;
    AXLE_ASSIGN_OR_RETURN(Literal keep_going,
                          EvaluateComputation(condition, absl::MakeConstSpan(&arg, 1)));
    if (!keep_going.shape().IsArray() || keep_going.shape().element_type() != PRED ||
        keep_going.element_count() != 1) {
      return InvalidInstruction(instruction, "the condition must return pred[]");
    }
    if (!keep_going.data<bool>()[0]) break;
    if (max_loop_iterations_ >= 0 && iteration >= max_loop_iterations_) {
      return absl::ResourceExhaustedError(absl::StrCat(Describe(instruction), ": loop exceeded ",
                                                       max_loop_iterations_, " iterations"));
    }
    AXLE_ASSIGN_OR_RETURN(state, EvaluateComputation(body, absl::MakeConstSpan(&arg, 1)));
  }
  return state;
}

absl::StatusOr<Literal> HloEvaluator::EvaluateConditional(
    const HloInstruction& instruction, absl::Span<const Literal* const> operands) {
  const std::vector<HloComputation*>& branches = instruction.branch_computations();
  const Literal& selector = *operands[0];
  if (!selector.shape().IsArray() || selector.element_count() != 1) {
    return InvalidInstruction(instruction, "the branch selector must be a scalar");
  }
  int64_t branch;
  if (selector.shape().element_type() == PRED) {
    // pred: true runs the first branch, false the second.
    branch = selector.data<bool>()[0] ? 0 : 1;
  } else if (selector.shape().element_type() == S32) {
    branch = selector.data<int32_t>()[0];
    // An index out of range runs the last branch.
    if (branch < 0 || branch >= static_cast<int64_t>(branches.size())) branch = branches.size() - 1;
  } else {
    return InvalidInstruction(instruction, "the branch selector must be pred or s32");
  }
  if (branch >= static_cast<int64_t>(branches.size()) ||
      branch + 1 >= static_cast<int64_t>(operands.size())) {
    return InvalidInstruction(instruction, "no operand for the selected branch");
  }
  const Literal* arg = operands[branch + 1];
  return EvaluateComputation(*branches[branch], absl::MakeConstSpan(&arg, 1));
}

absl::StatusOr<Literal> HloEvaluator::EvaluateCollective(
    const HloInstruction& instruction, absl::Span<const Literal* const> operands) {
  HloOpcode op = instruction.opcode();
  // *-done: the result is the start's result element. (Checked before the
  // cast: a done op carries no collective attributes.)
  if (HloOpcodeIsAsyncDone(op)) {
    if (operands.size() != 1) return InvalidInstruction(instruction, "takes one operand");
    if (operands[0]->shape().IsTuple() && operands[0]->tuple_size() >= 2 &&
        ShapeUtil::Compatible(operands[0]->tuple_element(1).shape(), instruction.shape())) {
      return operands[0]->tuple_element(1).Clone();
    }
    return operands[0]->Clone();
  }
  const auto& collective = *cast<HloCollectiveInstruction>(&instruction);
  if (participant_ && participant_->communicator != nullptr) {
    // send_executions_ counts the collective-permutes' executions too.
    return eval_internal::EvaluateCollectiveAmongParticipants(*this, collective, operands,
                                                              *participant_, send_executions_);
  }
  int64_t devices = 1;
  if (module_ != nullptr)
    devices = module_->config().replica_count * module_->config().num_partitions;
  if (IsInPlacePermute(collective) && devices == 1) {
    // One device: its own pairs ({0,0}) copy slices within it.
    std::vector<std::unique_ptr<Communicator>> alone =
        MakeInProcessCommunicators(1, CollectiveTimeoutFromEnvironment());
    return eval_internal::EvaluateInPlacePermute(collective, operands, *alone[0], 1, 1, 0);
  }
  bool groups_of_one = !collective.replica_groups().empty();
  for (const ReplicaGroup& group : collective.replica_groups()) {
    groups_of_one = groups_of_one && group.replica_ids_size() == 1;
  }
  if (collective.attrs().iota_replica_groups) {
    groups_of_one = collective.attrs().iota_replica_groups->group_size == 1;
  }
  if (devices > 1 && !groups_of_one) {
    return Unimplemented(instruction, absl::StrCat("needs several devices/host I/O (", devices,
                                                   " devices), the interpreter runs one"));
  }
  if (op == HloOpcode::kRaggedAllToAll) {
    // One participant unless a replica group says otherwise.
    int64_t participants = groups_of_one ? 1 : devices;
    if (!collective.replica_groups().empty()) {
      participants = collective.replica_groups()[0].replica_ids_size();
    } else if (collective.attrs().iota_replica_groups) {
      participants = collective.attrs().iota_replica_groups->group_size;
    }
    if (participants > 1) {
      return Unimplemented(instruction, absl::StrCat("needs several devices (", participants,
                                                     " participants), the interpreter runs one"));
    }
    return eval_internal::EvaluateRaggedAllToAll(instruction, operands);
  }
  // With one participant every collective gives back its operand(s) (a
  // collective-permute without a 0 -> 0 pair gives zeros).
  Shape result_shape = instruction.shape();
  bool wrap_in_start_tuple = false;
  if (HloOpcodeIsAsyncStart(op) && result_shape.IsTuple() &&
      result_shape.tuple_shapes_size() >= 2 && op != HloOpcode::kAllReduceStart) {
    result_shape = result_shape.tuple_shapes(1);
    wrap_in_start_tuple = true;
  }
  Literal value = operands.size() == 1 ? operands[0]->Clone() : TupleOfClones(operands);
  if (op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart) {
    bool self_pair = false;
    for (const auto& [source, target] : collective.attrs().source_target_pairs) {
      self_pair = self_pair || (source == 0 && target == 0);
    }
    if (!self_pair) value = Literal(result_shape);
  }
  if (!ShapeUtil::Compatible(value.shape(), result_shape)) {
    if (value.shape().IsArray() && result_shape.IsArray() &&
        value.element_count() == result_shape.num_elements() &&
        value.shape().element_type() == result_shape.element_type()) {
      AXLE_ASSIGN_OR_RETURN(value, value.Reshape(result_shape.dimensions()));
    } else {
      // The shapes say the op gathers from or scatters to several
      // participants, though the module declares one device.
      return Unimplemented(instruction, absl::StrCat("needs several devices/host I/O: the result ",
                                                     result_shape.ToString(false), " and operand ",
                                                     value.shape().ToString(false),
                                                     " imply more than one participant"));
    }
  }
  if (wrap_in_start_tuple) return TupleWithElement(instruction, std::move(value), 1, operands[0]);
  return value;
}

absl::StatusOr<Literal> HloEvaluator::EvaluateCustomCall(
    const HloInstruction& instruction, absl::Span<const Literal* const> operands) {
  const auto& custom_call = *cast<HloCustomCallInstruction>(&instruction);
  if (!custom_call_handler_) {
    return absl::NotFoundError(absl::StrCat(
        "custom-call target '", custom_call.custom_call_target(),
        "' is not registered for platform \"Host\" (interpreter; ", custom_call.name(), ")"));
  }
  AXLE_ASSIGN_OR_RETURN(Literal result, custom_call_handler_(custom_call, operands));
  if (!ShapeUtil::Compatible(result.shape(), instruction.shape())) {
    return InvalidInstruction(
        instruction, absl::StrCat("the custom call returned ", result.shape().ToString(false),
                                  " instead of ", instruction.shape().ToString(false)));
  }
  return result;
}

absl::StatusOr<Literal> HloEvaluator::EvaluateKernel(const HloInstruction& instruction,
                                                     absl::Span<const Literal* const> operands) {
  ComputationRunner run = [this](const HloComputation& computation,
                                 absl::Span<const Literal* const> args) {
    return EvaluateComputation(computation, args);
  };
  auto need = [&](size_t n) -> absl::Status {
    if (operands.size() != n) {
      return InvalidInstruction(instruction,
                                absl::StrCat("needs ", n, " operands, has ", operands.size()));
    }
    return absl::OkStatus();
  };
  switch (instruction.opcode()) {
    case HloOpcode::kDot: {
      AXLE_RETURN_IF_ERROR(need(2));
      return EvaluateDot(*cast<HloDotInstruction>(&instruction), *operands[0], *operands[1]);
    }
    case HloOpcode::kRaggedDot:
      AXLE_RETURN_IF_ERROR(need(3));
      return EvaluateRaggedDot(*cast<HloDotInstruction>(&instruction), *operands[0], *operands[1],
                               *operands[2]);
    case HloOpcode::kScaledDot:
      AXLE_RETURN_IF_ERROR(need(4));
      return EvaluateScaledDot(*cast<HloDotInstruction>(&instruction), *operands[0], *operands[1],
                               *operands[2], *operands[3]);
    case HloOpcode::kConvolution:
      AXLE_RETURN_IF_ERROR(need(2));
      return EvaluateConvolution(*cast<HloConvolutionInstruction>(&instruction), *operands[0],
                                 *operands[1]);
    case HloOpcode::kGather:
      AXLE_RETURN_IF_ERROR(need(2));
      return EvaluateGather(*cast<HloGatherInstruction>(&instruction), *operands[0], *operands[1]);
    case HloOpcode::kScatter: {
      if (operands.size() < 3 || operands.size() % 2 != 1) {
        return InvalidInstruction(instruction, "needs operands, indices and as many updates");
      }
      size_t count = operands.size() / 2;
      return EvaluateScatter(*cast<HloScatterInstruction>(&instruction), operands.subspan(0, count),
                             *operands[count], operands.subspan(count + 1), run);
    }
    case HloOpcode::kSelectAndScatter:
      AXLE_RETURN_IF_ERROR(need(3));
      return EvaluateSelectAndScatter(*cast<HloWindowInstruction>(&instruction), *operands[0],
                                      *operands[1], *operands[2], run);
    case HloOpcode::kFft:
      AXLE_RETURN_IF_ERROR(need(1));
      return EvaluateFft(*cast<HloFftInstruction>(&instruction), *operands[0]);
    case HloOpcode::kCholesky:
      AXLE_RETURN_IF_ERROR(need(1));
      return EvaluateCholesky(*cast<HloCholeskyInstruction>(&instruction), *operands[0]);
    case HloOpcode::kTriangularSolve:
      AXLE_RETURN_IF_ERROR(need(2));
      return EvaluateTriangularSolve(*cast<HloTriangularSolveInstruction>(&instruction),
                                     *operands[0], *operands[1]);
    case HloOpcode::kBatchNormTraining:
      AXLE_RETURN_IF_ERROR(need(3));
      return EvaluateBatchNormTraining(*cast<HloBatchNormInstruction>(&instruction), *operands[0],
                                       *operands[1], *operands[2]);
    case HloOpcode::kBatchNormInference:
      AXLE_RETURN_IF_ERROR(need(5));
      return EvaluateBatchNormInference(*cast<HloBatchNormInstruction>(&instruction), *operands[0],
                                        *operands[1], *operands[2], *operands[3], *operands[4]);
    case HloOpcode::kBatchNormGrad:
      AXLE_RETURN_IF_ERROR(need(5));
      return EvaluateBatchNormGrad(*cast<HloBatchNormInstruction>(&instruction), *operands[0],
                                   *operands[1], *operands[2], *operands[3], *operands[4]);
    default:
      return Unimplemented(instruction, "no kernel");
  }
}

eval_internal::LanewiseComputation* HloEvaluator::GetLanewise(const HloComputation& computation) {
  auto it = lanewise_cache_.find(&computation);
  if (it != lanewise_cache_.end()) return it->second.get();
  auto compiled = eval_internal::LanewiseComputation::Compile(computation);
  auto* result = compiled.get();
  lanewise_cache_[&computation] = std::move(compiled);
  return result;
}

absl::Status HloEvaluator::RunLanewise(const HloComputation& computation,
                                       absl::Span<const Lanes> args,
                                       absl::Span<void* const> results, int64_t n) {
  if (eval_internal::LanewiseComputation* lanewise = GetLanewise(computation)) {
    return lanewise->Run(args, results, n);
  }
  // Not lane-wise: evaluate the computation once per lane on scalars.
  const Shape& root_shape = computation.root_instruction()->shape();
  std::vector<Shape> leaves;
  if (root_shape.IsTuple()) {
    for (const Shape& s : root_shape.tuple_shapes()) leaves.push_back(s);
  } else {
    leaves.push_back(root_shape);
  }
  if (leaves.size() != results.size()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(), " returns ",
                                                   leaves.size(), " values where ", results.size(),
                                                   " are expected"));
  }
  for (const Shape& s : leaves) {
    if (!s.IsArray() || s.rank() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation ", computation.name(), " must return scalars"));
    }
  }
  std::vector<Literal> scalars;
  for (const Lanes& arg : args) scalars.emplace_back(ShapeUtil::MakeShape(arg.type, {}));
  std::vector<const Literal*> pointers;
  pointers.reserve(scalars.size());
  for (const Literal& s : scalars) pointers.push_back(&s);
  for (int64_t lane = 0; lane < n; ++lane) {
    for (size_t i = 0; i < args.size(); ++i) {
      int width = primitive_util::ByteWidth(args[i].type);
      std::memcpy(
          scalars[i].untyped_data(),
          static_cast<const uint8_t*>(args[i].data) + (args[i].broadcast ? 0 : lane) * width,
          width);
    }
    AXLE_ASSIGN_OR_RETURN(Literal result, EvaluateComputation(computation, pointers));
    for (size_t j = 0; j < results.size(); ++j) {
      const Literal& leaf = root_shape.IsTuple() ? result.tuple_element(j) : result;
      int width = primitive_util::ByteWidth(leaf.shape().element_type());
      std::memcpy(static_cast<uint8_t*>(results[j]) + lane * width, leaf.untyped_data(), width);
    }
  }
  return absl::OkStatus();
}

}  // namespace axle
