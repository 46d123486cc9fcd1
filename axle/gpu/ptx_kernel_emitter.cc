//===- ptx_kernel_emitter.cc - A loop fusion as an NVPTX kernel function ---===//
#include "axle/gpu/ptx_kernel_emitter.h"

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/nvptx_target_hooks.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

absl::Status CheckShape(const HloInstruction& hlo, const Shape& shape) {
  absl::Status status;
  ShapeUtil::ForEachSubshape(shape, [&](const Shape& subshape, const ShapeIndex&) {
    if (!status.ok() || !subshape.IsArray()) return;
    const PrimitiveType type = subshape.element_type();
    if (pu::IsComplexType(type) || pu::IsF8Type(type)) {
      status = absl::UnimplementedError(
          absl::StrCat("CUDA codegen: ", pu::LowercasePrimitiveTypeName(type), " elements (",
                       hlo.name(), ") are not supported yet"));
      return;
    }
    if (subshape.has_layout() &&
        subshape.layout().minor_to_major() !=
            ShapeUtil::MakeDescendingLayout(subshape.rank()).minor_to_major()) {
      status = absl::UnimplementedError(absl::StrCat(
          "CUDA codegen: ", hlo.name(), " has a non-default layout ", subshape.ToString(true)));
    }
  });
  return status;
}

absl::Status CheckComputation(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    AXLE_RETURN_IF_ERROR(CheckShape(*instruction, instruction->shape()));
    for (const HloComputation* called : instruction->called_computations()) {
      AXLE_RETURN_IF_ERROR(CheckComputation(*called));
    }
  }
  return absl::OkStatus();
}

// One element of each instruction at an index, emitted once per index (and
// scope: a value emitted inside a reduce's loop is not reused outside it).
class KernelEmitter {
 public:
  KernelEmitter(const HloComputation& fusion, llvm::Module* module)
      : fusion_(fusion),
        module_(module),
        b_(module->getContext()),
        elemental_(module, &b_, NvptxTargetHooks()) {}

  absl::StatusOr<llvm::Function*> Emit(absl::string_view name, int block_size,
                                       const std::vector<const HloInstruction*>& outputs);

 private:
  absl::StatusOr<llvm::Value*> Generate(const HloInstruction* hlo, const llvm_ir::IrIndex& index);

  struct Cached {
    llvm_ir::IrIndex index;
    llvm::Value* value;
    int64_t scope;
  };

  const HloComputation& fusion_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalIrEmitter elemental_;
  std::vector<llvm::Value*> parameters_;
  std::map<const HloInstruction*, std::vector<Cached>> cache_;
};

absl::StatusOr<llvm::Value*> KernelEmitter::Generate(const HloInstruction* hlo,
                                                     const llvm_ir::IrIndex& index) {
  for (const Cached& cached : cache_[hlo]) {
    if (cached.index == index && elemental_.InScope(cached.scope)) return cached.value;
  }
  const int64_t scope = elemental_.scope();
  llvm::Value* value = nullptr;
  if (hlo->opcode() == HloOpcode::kParameter) {
    const int64_t number = cast<HloParameterInstruction>(hlo)->parameter_number();
    value = elemental_.LoadElement(parameters_[number],
                                   elemental_.Linearize(index, hlo->shape().dimensions()),
                                   hlo->shape().element_type());
  } else {
    std::vector<llvm_ir::ElementGenerator> operands;
    operands.reserve(hlo->operand_count());
    for (const HloInstruction* operand : hlo->operands()) {
      operands.push_back(
          [this, operand](const llvm_ir::IrIndex& at) { return Generate(operand, at); });
    }
    AXLE_ASSIGN_OR_RETURN(value, elemental_.EmitElement(*hlo, operands, index));
  }
  cache_[hlo].push_back(Cached{index, value, scope});
  return value;
}

absl::StatusOr<llvm::Function*> KernelEmitter::Emit(
    absl::string_view name, int block_size, const std::vector<const HloInstruction*>& outputs) {
  llvm::Module* module = module_;
  llvm::LLVMContext& context = module->getContext();
  const int64_t num_parameters = fusion_.num_parameters();
  const size_t num_buffers = static_cast<size_t>(num_parameters) + outputs.size();
  auto* type = llvm::FunctionType::get(b_.getVoidTy(),
                                       std::vector<llvm::Type*>(num_buffers, b_.getPtrTy()), false);
  llvm::Function* kernel = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                                  llvm::Twine(std::string(name)), module);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  // Buffers: distinct, 16-byte aligned (device buffers are 64), and
  // dereferenceable for their whole size.
  for (size_t i = 0; i < num_buffers; ++i) {
    const Shape& shape = i < static_cast<size_t>(num_parameters)
                             ? fusion_.parameter_instruction(static_cast<int64_t>(i))->shape()
                             : outputs[i - num_parameters]->shape();
    llvm::Argument* argument = kernel->getArg(static_cast<unsigned>(i));
    argument->setName(i < static_cast<size_t>(num_parameters)
                          ? absl::StrCat("p", i)
                          : absl::StrCat("out", i - num_parameters));
    argument->addAttr(llvm::Attribute::NoAlias);
    argument->addAttr(llvm::Attribute::getWithAlignment(context, llvm::Align(16)));
    const int64_t bytes = ShapeUtil::ByteSizeOfElements(shape);
    if (bytes > 0) {
      argument->addAttr(llvm::Attribute::getWithDereferenceableBytes(context, bytes));
    }
    if (i < static_cast<size_t>(num_parameters)) {
      argument->addAttr(llvm::Attribute::ReadOnly);
      parameters_.push_back(argument);
    }
  }
  // Marked as a kernel, with the block size it is launched with.
  llvm::NamedMDNode* annotations = module->getOrInsertNamedMetadata("nvvm.annotations");
  for (const auto& [key, value] : {std::pair<const char*, int>{"kernel", 1},
                                   std::pair<const char*, int>{"maxntidx", block_size}}) {
    annotations->addOperand(llvm::MDNode::get(
        context, {llvm::ValueAsMetadata::get(kernel), llvm::MDString::get(context, key),
                  llvm::ConstantAsMetadata::get(b_.getInt32(value))}));
  }

  auto* entry = llvm::BasicBlock::Create(context, "entry", kernel);
  auto* body = llvm::BasicBlock::Create(context, "element", kernel);
  auto* exit = llvm::BasicBlock::Create(context, "exit", kernel);
  b_.SetInsertPoint(entry);
  auto special = [&](llvm::Intrinsic::ID id, const char* what) {
    return b_.CreateZExt(b_.CreateIntrinsic(b_.getInt32Ty(), id, {}), b_.getInt64Ty(), what);
  };
  llvm::Value* linear = b_.CreateAdd(
      b_.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "block"),
                   special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, "block_size"), "", true,
                   true),
      special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, "thread"), "linear", true, true);
  const Shape& shape = outputs[0]->shape();
  b_.CreateCondBr(b_.CreateICmpULT(linear, b_.getInt64(shape.num_elements())), body, exit);

  b_.SetInsertPoint(body);
  // Row-major: the last dimension varies fastest.
  const std::vector<int64_t>& dims = shape.dimensions();
  llvm_ir::IrIndex index(dims.size());
  llvm::Value* rest = linear;
  for (size_t d = dims.size(); d-- > 0;) {
    if (d == 0) {
      index[d] = rest;
    } else {
      index[d] = b_.CreateURem(rest, b_.getInt64(dims[d]));
      rest = b_.CreateUDiv(rest, b_.getInt64(dims[d]));
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    AXLE_ASSIGN_OR_RETURN(llvm::Value * value, Generate(outputs[i], index));
    elemental_.StoreElement(value, kernel->getArg(static_cast<unsigned>(num_parameters + i)),
                            linear, outputs[i]->shape().element_type());
  }
  b_.CreateBr(exit);
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
  return kernel;
}

}  // namespace

absl::StatusOr<std::vector<const HloInstruction*>> LoopFusionOutputs(const HloComputation& fusion) {
  const HloInstruction* root = fusion.root_instruction();
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) outputs.push_back(operand);
  } else {
    outputs.push_back(root);
  }
  if (outputs.empty()) {
    return absl::InvalidArgumentError("loop fusion: the root is an empty tuple");
  }
  for (const HloInstruction* output : outputs) {
    if (!output->shape().IsArray() ||
        output->shape().dimensions() != outputs[0]->shape().dimensions()) {
      return absl::InvalidArgumentError(
          absl::StrCat("loop fusion: output ", output->name(), " of shape ",
                       output->shape().ToString(false), " is not an array of the shape of ",
                       outputs[0]->name(), " (", outputs[0]->shape().ToString(false), ")"));
    }
  }
  return outputs;
}

absl::Status CheckPtxSupported(const HloComputation& fusion) {
  for (const HloInstruction* parameter : fusion.parameter_instructions()) {
    if (!parameter->shape().IsArray()) {
      return absl::UnimplementedError(
          absl::StrCat("CUDA codegen: parameter ", parameter->name(), " is not an array"));
    }
  }
  return CheckComputation(fusion);
}

absl::StatusOr<llvm::Function*> EmitLoopFusionKernel(const HloComputation& fusion,
                                                     absl::string_view name, int block_size,
                                                     llvm::Module* module) {
  AXLE_RETURN_IF_ERROR(CheckPtxSupported(fusion));
  AXLE_ASSIGN_OR_RETURN(std::vector<const HloInstruction*> outputs, LoopFusionOutputs(fusion));
  KernelEmitter emitter(fusion, module);
  return emitter.Emit(name, block_size, outputs);
}

}  // namespace axle::gpu
