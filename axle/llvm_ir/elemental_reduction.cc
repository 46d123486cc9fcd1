//===- elemental_reduction.cc - Ops that apply a computation, as LLVM IR ---===//
//
// map, reduce and reduce-window: the computations (scalar elementwise ops,
// constants, a tuple root for the variadic forms) are emitted inline.
// (select-and-scatter runs as a thunk: runtime/select_and_scatter_thunk.h.)
// reduce and reduce-window compute one output element with
// a loop nest over the reduced dimensions (the window) that folds the
// inputs in row-major order from the init values, as the interpreter does.
// Accumulators live in entry-block allocas in their storage type (SROA
// promotes them; an i1 accumulator sends LLVM 19 into seconds-long
// compiles). reduce-window skips window positions that fall on padding or
// on a base-dilation hole, as XLA's evaluator does.
//
// Reassociation: a single-input reduce whose combiner root is an f32/f64 add
// or multiply is marked `reassoc`, so the loop vectorizer splits the sum
// into vector lanes as XLA:CPU does (results differ from the in-order
// interpreter by rounding only). An f32/f64 max/min reduce (softmax's row
// max) folds with a compare and select flagged nnan/nsz beside a
// NaN-seen flag (a NaN result when any input was NaN, like XLA's max), and
// its loop over the contiguous input dimension is vectorized with as many
// lanes as the target's preferred vector holds (16 f32 or 8 f64 in 512
// bits); only the sign of a zero result (max of -0 and +0) and
// the NaN payload may differ from the in-order fold. Every other combiner
// folds in order.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"

namespace axle::llvm_ir {
namespace pu = primitive_util;

namespace {

// Whether the loop body (`body` and the blocks created after `exit`, which
// the body emitted) calls only functions the vectorizer widens: forcing a
// width onto a loop with a libm or runtime helper call fails, with a
// warning on stderr.
bool IsVectorizableBody(llvm::BasicBlock* body, llvm::BasicBlock* exit) {
  auto calls_only_vectorizable = [](llvm::BasicBlock& block) {
    for (llvm::Instruction& instruction : block) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
      if (call == nullptr) continue;
      const llvm::Function* callee = call->getCalledFunction();
      if (callee == nullptr || !llvm::isTriviallyVectorizable(callee->getIntrinsicID())) {
        return false;
      }
    }
    return true;
  };
  if (!calls_only_vectorizable(*body)) return false;
  for (auto it = std::next(exit->getIterator()); it != exit->getParent()->end(); ++it) {
    if (!calls_only_vectorizable(*it)) return false;
  }
  return true;
}

// The dimensions of the first result of `shape`.
const std::vector<int64_t>& ResultDimensions(const Shape& shape) {
  return shape.IsTuple() ? shape.tuple_shapes(0).dimensions() : shape.dimensions();
}

// Whether `hlo` (a reduce) folds one f32/f64 input by maximum or minimum of
// its two parameters.
bool IsFloatMinMaxCombiner(const HloInstruction& hlo) {
  if (hlo.operand_count() != 2 || !hlo.shape().IsArray()) return false;
  const PrimitiveType type = hlo.shape().element_type();
  const HloInstruction* root = hlo.to_apply()->root_instruction();
  return (type == F32 || type == F64) &&
         (root->opcode() == HloOpcode::kMaximum || root->opcode() == HloOpcode::kMinimum) &&
         root->operand(0)->opcode() == HloOpcode::kParameter &&
         root->operand(1)->opcode() == HloOpcode::kParameter &&
         root->operand(0) != root->operand(1);
}

// Where window position `i` of the window at output coordinate `out` lands
// in an input dimension of `size`: whether on a real element (not padding,
// not a base-dilation hole), and that element's coordinate (clamped into
// the dimension, so it can always be loaded).
std::pair<llvm::Value*, llvm::Value*> WindowInput(llvm::IRBuilderBase& b, const WindowDimension& w,
                                                  llvm::Value* out, llvm::Value* i, int64_t size) {
  auto c = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
  llvm::Value* p = b.CreateAdd(b.CreateSub(b.CreateMul(out, c(w.stride())), c(w.padding_low())),
                               b.CreateMul(i, c(w.window_dilation())));
  llvm::Value* q = p;
  llvm::Value* ok = b.CreateICmpSGE(p, c(0));
  if (w.base_dilation() > 1) {
    ok = b.CreateAnd(ok, b.CreateICmpEQ(b.CreateSRem(p, c(w.base_dilation())), c(0)));
    q = b.CreateSDiv(p, c(w.base_dilation()));
  }
  ok = b.CreateAnd(ok, b.CreateICmpSLT(q, c(size)));
  q = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, q, c(0));
  q = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, q, c(size - 1));
  return {ok, q};
}

absl::Status Invalid(const HloInstruction& hlo, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("codegen: ", HloOpcodeString(hlo.opcode()), " ", hlo.name(), ": ", why));
}

absl::Status CheckWindow(const HloInstruction& hlo, const Window& window, int64_t rank) {
  if (window.dimensions_size() != rank) {
    return Invalid(hlo, "the window needs one entry per input dimension");
  }
  for (const WindowDimension& w : window.dimensions()) {
    if (w.size() < 0 || w.stride() < 1 || w.window_dilation() < 1 || w.base_dilation() < 1) {
      return Invalid(hlo, "window sizes must be >= 0, strides and dilations >= 1");
    }
  }
  return absl::OkStatus();
}

// The init values of a reduce or reduce-window with `count` inputs (its
// operands from `count` on, scalars).
absl::StatusOr<std::vector<llvm::Value*>> InitValues(size_t count,
                                                     absl::Span<const ElementGenerator> operands) {
  std::vector<llvm::Value*> init;
  for (size_t k = 0; k < count; ++k) {
    AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[count + k](IrIndex{}));
    init.push_back(value);
  }
  return init;
}

// The result element types of a (variadic) reduce or reduce-window `hlo`
// with N inputs, N init values and N results: the array's type, or its
// tuple elements'.
absl::StatusOr<std::vector<PrimitiveType>> VariadicResultTypes(const HloInstruction& hlo) {
  std::vector<PrimitiveType> types;
  if (hlo.shape().IsTuple()) {
    for (const Shape& element : hlo.shape().tuple_shapes()) {
      types.push_back(element.element_type());
    }
  } else {
    types.push_back(hlo.shape().element_type());
  }
  const int64_t count = hlo.operand_count() / 2;
  if (count == 0 || hlo.operand_count() != 2 * count ||
      static_cast<int64_t>(types.size()) != count) {
    return Invalid(hlo, "needs N inputs, N init values and N results");
  }
  return types;
}

}  // namespace

// --- Loops and scopes ----------------------------------------------------------

absl::Status ElementalIrEmitter::EmitForLoop(llvm::Value* begin, llvm::Value* end,
                                             absl::string_view name,
                                             const std::function<absl::Status(llvm::Value*)>& body,
                                             int vector_width) {
  llvm::Function* function = b_.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = b_.getContext();
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  std::string prefix(name.data(), name.size());
  auto* header = llvm::BasicBlock::Create(context, prefix + ".header", function);
  auto* body_block = llvm::BasicBlock::Create(context, prefix + ".body", function);
  auto* exit = llvm::BasicBlock::Create(context, prefix + ".exit", function);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, prefix + ".i");
  i->addIncoming(begin, preheader);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), body_block, exit);
  b_.SetInsertPoint(body_block);
  scopes_.push_back(next_scope_++);
  absl::Status status = body(i);
  scopes_.pop_back();
  AXLE_RETURN_IF_ERROR(status);
  llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), prefix + ".next", /*HasNUW=*/true,
                                   /*HasNSW=*/true);
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateBr(header);
  if (vector_width > 1 && !IsVectorizableBody(body_block, exit)) vector_width = kVectorizeAuto;
  if (vector_width != kVectorizeAuto) {
    std::vector<llvm::Metadata*> properties = {nullptr};
    auto property = [&](const char* key, llvm::Constant* value) {
      llvm::Metadata* entry[] = {llvm::MDString::get(context, key),
                                 llvm::ConstantAsMetadata::get(value)};
      properties.push_back(llvm::MDNode::get(context, entry));
    };
    if (vector_width == kVectorizeNever) {
      property("llvm.loop.vectorize.enable", b_.getFalse());
      properties.push_back(
          llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.unroll.disable")}));
    } else {
      property("llvm.loop.vectorize.enable", b_.getTrue());
      property("llvm.loop.vectorize.width", b_.getInt32(vector_width));
    }
    llvm::MDNode* self = llvm::MDNode::getDistinct(context, properties);
    self->replaceOperandWith(0, self);
    latch->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

void ElementalIrEmitter::AddLoopProperty(llvm::BasicBlock* preheader, const char* property) {
  llvm::BasicBlock* header = preheader->getTerminator()->getSuccessor(0);
  llvm::LLVMContext& context = header->getContext();
  for (llvm::BasicBlock* latch : llvm::predecessors(header)) {
    if (latch == preheader) continue;
    std::vector<llvm::Metadata*> properties = {nullptr};
    if (llvm::MDNode* old = latch->getTerminator()->getMetadata(llvm::LLVMContext::MD_loop)) {
      for (unsigned i = 1; i < old->getNumOperands(); ++i) properties.push_back(old->getOperand(i));
    }
    properties.push_back(llvm::MDNode::get(context, {llvm::MDString::get(context, property)}));
    llvm::MDNode* self = llvm::MDNode::getDistinct(context, properties);
    self->replaceOperandWith(0, self);
    latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
}

bool ElementalIrEmitter::InScope(int64_t scope) const {
  return std::find(scopes_.begin(), scopes_.end(), scope) != scopes_.end();
}

// --- Inline computations -------------------------------------------------------

absl::StatusOr<std::vector<llvm::Value*>> ElementalIrEmitter::EmitScalarComputation(
    const HloComputation& computation, absl::Span<llvm::Value* const> arguments) {
  if (computation.num_parameters() != static_cast<int64_t>(arguments.size())) {
    return absl::InvalidArgumentError(absl::StrCat("codegen: computation ", computation.name(),
                                                   " takes ", computation.num_parameters(),
                                                   " parameters, given ", arguments.size()));
  }
  std::map<const HloInstruction*, llvm::Value*> values;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    values[computation.parameter_instruction(i)] = arguments[i];
  }
  const HloInstruction* root = computation.root_instruction();
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    if (instruction == root && instruction->opcode() == HloOpcode::kTuple) continue;
    if (!instruction->shape().IsArray() || instruction->shape().rank() != 0) {
      return absl::UnimplementedError(absl::StrCat("codegen: computation ", computation.name(),
                                                   " has a non-scalar ",
                                                   HloOpcodeString(instruction->opcode())));
    }
    std::vector<ElementGenerator> operands;
    for (const HloInstruction* operand : instruction->operands()) {
      llvm::Value* value = values.at(operand);
      operands.push_back([value](const IrIndex&) -> absl::StatusOr<llvm::Value*> { return value; });
    }
    AXLE_ASSIGN_OR_RETURN(values[instruction], EmitElement(*instruction, operands, IrIndex{}));
  }
  std::vector<llvm::Value*> results;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) results.push_back(values.at(operand));
  } else {
    results.push_back(values.at(root));
  }
  return results;
}

llvm::Value* ElementalIrEmitter::MakeStruct(absl::Span<llvm::Value* const> values) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* value : values) types.push_back(value->getType());
  llvm::Value* result = llvm::UndefValue::get(llvm::StructType::get(b_.getContext(), types));
  for (size_t i = 0; i < values.size(); ++i) {
    result = b_.CreateInsertValue(result, values[i], {static_cast<unsigned>(i)});
  }
  return result;
}

std::vector<llvm::AllocaInst*> ElementalIrEmitter::MakeAccumulators(
    absl::Span<const PrimitiveType> types, absl::Span<llvm::Value* const> init) {
  llvm::Function* function = b_.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  std::vector<llvm::AllocaInst*> accumulators;
  for (size_t k = 0; k < types.size(); ++k) {
    accumulators.push_back(entry.CreateAlloca(StorageType(types[k])));
    StoreElement(init[k], accumulators.back(), I64(0), types[k]);
  }
  return accumulators;
}

llvm::Value* ElementalIrEmitter::ReadAccumulators(absl::Span<llvm::AllocaInst* const> accumulators,
                                                  absl::Span<const PrimitiveType> types) {
  std::vector<llvm::Value*> values;
  for (size_t k = 0; k < types.size(); ++k) {
    values.push_back(LoadElement(accumulators[k], I64(0), types[k]));
  }
  return values.size() == 1 ? values[0] : MakeStruct(values);
}

absl::Status ElementalIrEmitter::Accumulate(const HloInstruction& hlo,
                                            absl::Span<llvm::AllocaInst* const> accumulators,
                                            absl::Span<const PrimitiveType> types,
                                            absl::Span<llvm::Value* const> values,
                                            llvm::Value* predicate, bool reassociate) {
  const HloComputation& combiner = *hlo.to_apply();
  std::vector<llvm::Value*> arguments;
  for (size_t k = 0; k < types.size(); ++k) {
    arguments.push_back(LoadElement(accumulators[k], I64(0), types[k]));
  }
  arguments.insert(arguments.end(), values.begin(), values.end());
  std::vector<llvm::Value*> results;
  if (reassociate && IsFloatMinMaxCombiner(hlo)) {
    // Order-free up to the sign of a zero result, so the vectorizer may
    // split it into lanes; NaNs are EmitReduce's business (nnan: a NaN in
    // makes this poison, which EmitReduce's final select never returns).
    const bool max = combiner.root_instruction()->opcode() == HloOpcode::kMaximum;
    llvm::FastMathFlags flags;
    flags.setNoNaNs();
    flags.setNoSignedZeros();
    llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
    b_.setFastMathFlags(flags);
    llvm::Value* accumulator = arguments[0];
    llvm::Value* value = arguments[1];
    llvm::Value* wins =
        max ? b_.CreateFCmpOGT(value, accumulator) : b_.CreateFCmpOLT(value, accumulator);
    results.push_back(b_.CreateSelect(wins, value, accumulator));
  } else {
    AXLE_ASSIGN_OR_RETURN(results, EmitScalarComputation(combiner, arguments));
  }
  if (results.size() != types.size()) {
    return Invalid(hlo, absl::StrCat("the computation returns ", results.size(), " values for ",
                                     types.size(), " accumulators"));
  }
  const HloOpcode root = combiner.root_instruction()->opcode();
  if (reassociate && types.size() == 1 && (types[0] == F32 || types[0] == F64) &&
      (root == HloOpcode::kAdd || root == HloOpcode::kMultiply)) {
    if (auto* instruction = llvm::dyn_cast<llvm::Instruction>(results[0])) {
      instruction->setHasAllowReassoc(true);
    }
  }
  for (size_t k = 0; k < types.size(); ++k) {
    llvm::Value* result = results[k];
    if (predicate != nullptr) result = b_.CreateSelect(predicate, result, arguments[k]);
    StoreElement(result, accumulators[k], I64(0), types[k]);
  }
  return absl::OkStatus();
}

// --- map -----------------------------------------------------------------------

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitMap(const HloInstruction& hlo,
                                                         Generators operands,
                                                         const IrIndex& index) {
  std::vector<llvm::Value*> arguments;
  for (int64_t i = 0; i < hlo.operand_count(); ++i) {
    if (hlo.operand(i)->shape().rank() != static_cast<int64_t>(index.size())) {
      return Invalid(hlo, "operands must have the result's dimensions");
    }
    AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[i](index));
    arguments.push_back(value);
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                        EmitScalarComputation(*hlo.to_apply(), arguments));
  if (results.size() != 1) return Invalid(hlo, "the computation must return one scalar");
  return results[0];
}

// --- reduce --------------------------------------------------------------------

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitReduce(const HloInstruction& hlo,
                                                            Generators operands,
                                                            const IrIndex& out_index) {
  AXLE_ASSIGN_OR_RETURN(const std::vector<PrimitiveType> types, VariadicResultTypes(hlo));
  const int64_t count = static_cast<int64_t>(types.size());
  const Shape& input_shape = hlo.operand(0)->shape();
  const int64_t rank = input_shape.rank();
  std::vector<bool> is_reduced(rank, false);
  for (int64_t d : cast<HloDimensionsInstruction>(&hlo)->dimensions()) {
    if (d < 0 || d >= rank) return Invalid(hlo, "a reduced dimension is out of range");
    is_reduced[d] = true;
  }
  AXLE_ASSIGN_OR_RETURN(const std::vector<llvm::Value*> init, InitValues(types.size(), operands));
  std::vector<llvm::AllocaInst*> accumulators = MakeAccumulators(types, init);
  // A float max/min folds with an ordered compare and select flagged
  // nnan/nsz (one vmaxps), and a second accumulator records whether any
  // input (or the init value) was a NaN; the result is a NaN then. The
  // flagged fold may produce poison once a NaN went in, which the final
  // select never picks. Three vector instructions per 16 elements instead
  // of llvm.maximum's six (sign and NaN fix-ups in every step).
  const bool min_max = IsFloatMinMaxCombiner(hlo);
  llvm::AllocaInst* nan_seen = nullptr;
  if (min_max) {
    llvm::Function* function = b_.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    nan_seen = entry.CreateAlloca(b_.getInt32Ty());
    b_.CreateStore(b_.CreateZExt(b_.CreateFCmpUNO(init[0], init[0]), b_.getInt32Ty()), nan_seen);
  }
  IrIndex input_index(rank);
  std::vector<int64_t> reduced;
  for (int64_t d = 0, kept = 0; d < rank; ++d) {
    if (is_reduced[d]) {
      reduced.push_back(d);
    } else {
      if (kept >= static_cast<int64_t>(out_index.size())) {
        return Invalid(hlo, "the result must have the kept input dimensions");
      }
      input_index[d] = out_index[kept++];
    }
  }
  // Pred reductions stay scalar and rolled: LLVM 19 spends seconds (SLP
  // vectorizer, then instruction selection) on unrolled i1 chains.
  const int vector_width =
      std::find(types.begin(), types.end(), PRED) == types.end() ? kVectorizeAuto : kVectorizeNever;
  // A float max/min over the contiguous input dimension gets the target's
  // preferred vector width whatever LLVM's cost model thinks.
  std::function<absl::Status(size_t)> emit_loop = [&](size_t r) -> absl::Status {
    if (r == reduced.size()) {
      std::vector<llvm::Value*> values;
      for (int64_t k = 0; k < count; ++k) {
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[k](input_index));
        values.push_back(value);
      }
      if (min_max) {
        llvm::Type* i32 = b_.getInt32Ty();
        b_.CreateStore(b_.CreateSelect(b_.CreateFCmpUNO(values[0], values[0]), b_.getInt32(1),
                                       b_.CreateLoad(i32, nan_seen)),
                       nan_seen);
      }
      return Accumulate(hlo, accumulators, types, values, /*predicate=*/nullptr,
                        /*reassociate=*/true);
    }
    const int64_t d = reduced[r];
    int width = vector_width;
    if (min_max && d == rank - 1) {
      width = hooks_->PreferredVectorBits() / pu::BitWidth(types[0]);
    }
    const int64_t size = input_shape.dimensions(d);
    auto inner = [&](llvm::Value* i) {
      input_index[d] = i;
      return emit_loop(r + 1);
    };
    RowReductionHook* hook = row_reduction_hook_;
    if (hook == nullptr || reduced.size() != 1 || d != rank - 1 ||
        (hook->columns >= 0 && hook->columns != size)) {
      return EmitForLoop(I64(0), I64(size), absl::StrCat("r", d), inner, width);
    }
    row_reduction_hook_ = nullptr;
    hook->taken = true;
    // The innermost loop [low, high), with the hook's per-column body and
    // loop property.
    auto hooked_loop = [&](llvm::Value* low, llvm::Value* high) -> absl::Status {
      llvm::BasicBlock* preheader = b_.GetInsertBlock();
      AXLE_RETURN_IF_ERROR(EmitForLoop(
          low, high, absl::StrCat("r", d),
          [&](llvm::Value* i) -> absl::Status {
            AXLE_RETURN_IF_ERROR(inner(i));
            return hook->per_column ? hook->per_column(i) : absl::OkStatus();
          },
          width));
      if (hook->loop_property != nullptr) AddLoopProperty(preheader, hook->loop_property);
      return absl::OkStatus();
    };
    const int64_t element_bytes = std::max<int64_t>(1, pu::ByteWidth(input_shape.element_type()));
    const int64_t chunk = std::max<int64_t>(1, kPrefetchChunkBytes / element_bytes);
    if (hook->prefetch_streams.empty() || size <= chunk) return hooked_loop(I64(0), I64(size));
    // for (c = 0; c < size; c += chunk) { prefetch; for (i = c; i < min(c + chunk, size); ++i) }
    return EmitForLoop(
        I64(0), I64((size + chunk - 1) / chunk), absl::StrCat("r", d, ".chunk"),
        [&](llvm::Value* c) {
          llvm::Value* low = b_.CreateMul(c, I64(chunk));
          llvm::Value* byte_offset = b_.CreateMul(low, I64(element_bytes));
          for (llvm::Value* stream : hook->prefetch_streams) {
            hooks_->EmitPrefetch(b_, stream, byte_offset, kPrefetchChunkBytes);
          }
          llvm::Value* high = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                                       b_.CreateAdd(low, I64(chunk)), I64(size));
          return hooked_loop(low, high);
        },
        kVectorizeNever);
  };
  AXLE_RETURN_IF_ERROR(emit_loop(0));
  llvm::Value* result = ReadAccumulators(accumulators, types);
  if (min_max) {
    llvm::Value* any_nan =
        b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), nan_seen), b_.getInt32(0));
    result = b_.CreateSelect(any_nan, llvm::ConstantFP::getNaN(result->getType()), result);
  }
  return result;
}

// --- reduce-window -------------------------------------------------------------

// Windows of at most this many elements are emitted without window loops.
constexpr int64_t kUnrolledWindowElements = 32;

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitReduceWindow(const HloInstruction& hlo,
                                                                  Generators operands,
                                                                  const IrIndex& out_index) {
  AXLE_ASSIGN_OR_RETURN(const std::vector<PrimitiveType> types, VariadicResultTypes(hlo));
  const int64_t count = static_cast<int64_t>(types.size());
  const Window& window = cast<HloWindowInstruction>(&hlo)->window();
  const Shape& input_shape = hlo.operand(0)->shape();
  const int64_t rank = input_shape.rank();
  if (static_cast<int64_t>(ResultDimensions(hlo.shape()).size()) != rank) {
    return Invalid(hlo, "the result needs the input's rank");
  }
  AXLE_RETURN_IF_ERROR(CheckWindow(hlo, window, rank));
  AXLE_ASSIGN_OR_RETURN(const std::vector<llvm::Value*> init, InitValues(types.size(), operands));
  std::vector<llvm::AllocaInst*> accumulators = MakeAccumulators(types, init);
  if (input_shape.num_elements() == 0) return ReadAccumulators(accumulators, types);
  const int vector_width =
      std::find(types.begin(), types.end(), PRED) == types.end() ? kVectorizeAuto : kVectorizeNever;
  // A small window (a pooling's 3x3) straight-line: the loop over the
  // output elements around it is then innermost, and LLVM vectorizes it
  // (channels-last pooling: along the channels).
  int64_t window_elements = 1;
  for (const WindowDimension& w : window.dimensions()) window_elements *= w.size();
  const bool unrolled = window_elements <= kUnrolledWindowElements;
  // A float max/min (a max pooling) folds as EmitReduce's does: one
  // ordered compare and select per element, a NaN among the window's real
  // elements (or the init value) recorded aside and returned at the end,
  // instead of the sign and NaN fix-ups of every step (six vector
  // instructions per element).
  const bool min_max = IsFloatMinMaxCombiner(hlo);
  llvm::AllocaInst* nan_seen = nullptr;
  if (min_max) {
    llvm::Function* function = b_.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    nan_seen = entry.CreateAlloca(b_.getInt1Ty());
    b_.CreateStore(b_.CreateFCmpUNO(init[0], init[0]), nan_seen);
  }
  IrIndex input_index(rank);
  std::vector<llvm::Value*> valid(rank);
  std::function<absl::Status(int64_t)> emit_loop = [&](int64_t d) -> absl::Status {
    if (d == rank) {
      llvm::Value* all_valid = b_.getTrue();
      for (llvm::Value* v : valid) all_valid = b_.CreateAnd(all_valid, v);
      std::vector<llvm::Value*> values;
      for (int64_t k = 0; k < count; ++k) {
        AXLE_ASSIGN_OR_RETURN(llvm::Value * value, operands[k](input_index));
        values.push_back(value);
      }
      if (min_max) {
        llvm::Value* nan = b_.CreateAnd(all_valid, b_.CreateFCmpUNO(values[0], values[0]));
        b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), nan_seen), nan), nan_seen);
      }
      return Accumulate(hlo, accumulators, types, values, all_valid, /*reassociate=*/min_max);
    }
    const WindowDimension& w = window.dimensions(d);
    if (unrolled) {
      for (int64_t i = 0; i < w.size(); ++i) {
        std::tie(valid[d], input_index[d]) =
            WindowInput(b_, w, out_index[d], I64(i), input_shape.dimensions(d));
        AXLE_RETURN_IF_ERROR(emit_loop(d + 1));
      }
      return absl::OkStatus();
    }
    return EmitForLoop(
        I64(0), I64(w.size()), absl::StrCat("w", d),
        [&](llvm::Value* i) {
          std::tie(valid[d], input_index[d]) =
              WindowInput(b_, w, out_index[d], i, input_shape.dimensions(d));
          return emit_loop(d + 1);
        },
        vector_width);
  };
  AXLE_RETURN_IF_ERROR(emit_loop(0));
  llvm::Value* result = ReadAccumulators(accumulators, types);
  if (min_max) {
    result = b_.CreateSelect(b_.CreateLoad(b_.getInt1Ty(), nan_seen),
                             llvm::ConstantFP::getNaN(result->getType()), result);
  }
  return result;
}

}  // namespace axle::llvm_ir
