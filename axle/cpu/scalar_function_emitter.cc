//===- scalar_function_emitter.cc - A computation of scalars as a function -===//
//
// The parameters are loaded from their pointers, every instruction in post
// order becomes the elemental emitter's IR for the element at the empty
// index, and the root's leaves are stored through the result pointers.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/scalar_function_emitter.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/cpu_target_hooks.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {
namespace {

bool IsScalarArray(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

absl::Status NotScalar(const HloComputation& computation, const HloInstruction& instruction) {
  return absl::UnimplementedError(
      absl::StrCat("CPU codegen: computation ", computation.name(),
                   " is not a function of scalars: ", HloOpcodeString(instruction.opcode()), " ",
                   instruction.name(), " has shape ", instruction.shape().ToString()));
}

absl::Status EmitBody(const HloComputation& computation, llvm::Function* function,
                      llvm::IRBuilder<>& b, llvm_ir::ElementalIrEmitter& elemental) {
  llvm::Type* ptr = b.getPtrTy();
  llvm::Value* parameters = function->getArg(0);
  llvm::Value* results = function->getArg(1);
  std::map<const HloInstruction*, llvm::Value*> values;
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    const bool root_tuple =
        instruction == computation.root_instruction() && instruction->opcode() == HloOpcode::kTuple;
    if (root_tuple) {
      for (const HloInstruction* operand : instruction->operands()) {
        if (!IsScalarArray(operand->shape())) return NotScalar(computation, *operand);
      }
      continue;
    }
    if (!IsScalarArray(instruction->shape())) return NotScalar(computation, *instruction);
    AXLE_RETURN_IF_ERROR(llvm_ir::ElementalIrEmitter::CheckSupportedType(
        instruction->shape().element_type(), *instruction));
    if (instruction->opcode() == HloOpcode::kParameter) {
      const int64_t number = cast<HloParameterInstruction>(instruction)->parameter_number();
      llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, parameters, number);
      llvm::Value* address = b.CreateLoad(ptr, slot);
      values[instruction] =
          elemental.LoadElement(address, b.getInt64(0), instruction->shape().element_type());
      continue;
    }
    std::vector<llvm_ir::ElementGenerator> operands;
    for (const HloInstruction* operand : instruction->operands()) {
      llvm::Value* value = values.at(operand);
      operands.push_back(
          [value](const llvm_ir::IrIndex&) -> absl::StatusOr<llvm::Value*> { return value; });
    }
    AXLE_ASSIGN_OR_RETURN(values[instruction],
                          elemental.EmitElement(*instruction, operands, llvm_ir::IrIndex{}));
  }
  const HloInstruction* root = computation.root_instruction();
  std::vector<const HloInstruction*> leaves;
  if (root->opcode() == HloOpcode::kTuple) {
    leaves.assign(root->operands().begin(), root->operands().end());
  } else {
    leaves.push_back(root);
  }
  for (size_t j = 0; j < leaves.size(); ++j) {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, results, j);
    llvm::Value* address = b.CreateLoad(ptr, slot);
    elemental.StoreElement(values.at(leaves[j]), address, b.getInt64(0),
                           leaves[j]->shape().element_type());
  }
  b.CreateRetVoid();
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckScalarFunction(const HloComputation& computation) {
  for (const HloInstruction* parameter : computation.parameter_instructions()) {
    if (!IsScalarArray(parameter->shape())) return NotScalar(computation, *parameter);
  }
  if (computation.root_instruction() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("CPU codegen: computation ", computation.name(), " has no root"));
  }
  return absl::OkStatus();
}

absl::Status EmitScalarFunction(const HloComputation& computation, absl::string_view name,
                                llvm::Module* module) {
  AXLE_RETURN_IF_ERROR(CheckScalarFunction(computation));
  llvm::LLVMContext& context = module->getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* ptr = b.getPtrTy();
  auto* function = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr}, false),
                                          llvm::GlobalValue::ExternalLinkage,
                                          llvm::StringRef(name.data(), name.size()), module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
  llvm_ir::ElementalIrEmitter elemental(module, &b, CpuTargetHooks());
  absl::Status emitted = EmitBody(computation, function, b, elemental);
  // Leave no half-emitted function behind.
  if (!emitted.ok()) function->eraseFromParent();
  return emitted;
}

}  // namespace axle::cpu
