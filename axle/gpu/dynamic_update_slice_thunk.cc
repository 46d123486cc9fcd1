//===- dynamic_update_slice_thunk.cc - dynamic-update-slice in place -------===//
#include "axle/gpu/dynamic_update_slice_thunk.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/kernel_builder.h"
#include "axle/gpu/ptx_module.h"
#include "axle/gpu/ptx_thunk.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

struct SliceGeometry {
  std::vector<int64_t> operand_dims;
  std::vector<int64_t> update_dims;
  PrimitiveType type = F32;
  PrimitiveType start_type = S32;
  bool start_vector = false;
  int64_t element_bytes = 4;
  int64_t num_starts = 0;
};

// update_slice(update, starts..., output): output[start + i] = update[i].
absl::Status EmitKernel(const SliceGeometry& g, llvm::Module* module) {
  KernelBuilder kb(module);
  const int num_starts = static_cast<int>(g.num_starts);
  kb.BeginKernel("update_slice", 2 + num_starts, 0, kThreadsPerBlock);
  llvm::IRBuilder<>& b = kb.b();
  llvm_ir::ElementalIrEmitter& e = kb.elemental();
  const int64_t rank = static_cast<int64_t>(g.operand_dims.size());
  const std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(g.operand_dims);
  llvm::Value* linear = kb.GlobalThreadIndex();
  AXLE_RETURN_IF_ERROR(kb.If(
      b.CreateICmpULT(linear, kb.I64(ElementCount(g.update_dims))), "element",
      [&]() -> absl::Status {
        const llvm_ir::IrIndex index = kb.Delinearize(linear, g.update_dims);
        llvm::Value* at = kb.I64(0);
        const bool is_signed = pu::IsSignedIntegralType(g.start_type);
        for (int64_t d = 0; d < rank; ++d) {
          llvm::Value* start = g.start_vector ? kb.LoadIndex(kb.pointer(1), kb.I64(d), g.start_type)
                                              : kb.LoadIndex(kb.pointer(1 + static_cast<int>(d)),
                                                             kb.I64(0), g.start_type);
          llvm::Value* high = kb.I64(g.operand_dims[d] - g.update_dims[d]);
          // Clamped to [0, high]; unsigned starts are never below 0.
          if (is_signed) {
            start = b.CreateSelect(b.CreateICmpSLT(start, kb.I64(0)), kb.I64(0), start);
          }
          start = b.CreateSelect(b.CreateICmpUGT(start, high), high, start);
          at = b.CreateAdd(at, b.CreateMul(b.CreateAdd(start, index[d]), kb.I64(strides[d])));
        }
        llvm::Type* storage = e.StorageType(g.type);
        b.CreateStore(b.CreateLoad(storage, b.CreateInBoundsGEP(storage, kb.pointer(0), linear)),
                      b.CreateInBoundsGEP(storage, kb.pointer(1 + num_starts), at));
        return absl::OkStatus();
      }));
  kb.EndKernel();
  return absl::OkStatus();
}

class DynamicUpdateSliceThunk final : public PtxThunk {
 public:
  DynamicUpdateSliceThunk(std::string name, GpuThunkValues values, std::string ptx,
                          SliceGeometry geometry)
      : PtxThunk(std::move(name), std::move(values), std::move(ptx), {"update_slice"}),
        g_(std::move(geometry)) {}

  absl::Status Execute(const GpuThunkContext& context) const override {
    const GpuThunkValues& v = values();
    AXLE_RETURN_IF_ERROR(CopyUnlessSame(context.stream, context.buffer(v.operands[0]),
                                        context.buffer(v.outputs[0]),
                                        ElementCount(g_.operand_dims) * g_.element_bytes));
    const int64_t count = ElementCount(g_.update_dims);
    std::vector<Argument> arguments = {Argument::Pointer(context.address(v.operands[1]))};
    for (int64_t i = 0; i < g_.num_starts; ++i) {
      arguments.push_back(Argument::Pointer(context.address(v.operands[2 + i])));
    }
    arguments.push_back(Argument::Pointer(context.address(v.outputs[0])));
    return LaunchPerItem(context.stream, 0, count, arguments);
  }
  // The operand is read only while being copied into the result.
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override {
    return CopiedOperandPairs(1);
  }

 private:
  SliceGeometry g_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeDynamicUpdateSliceThunk(
    const HloInstruction& instruction, GpuThunkValues values, const PtxOptions& options) {
  if (instruction.opcode() != HloOpcode::kDynamicUpdateSlice || instruction.operand_count() < 3) {
    return InvalidKernelOp(instruction, "is not a dynamic-update-slice with start indices");
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& update = instruction.operand(1)->shape();
  if (!operand.IsArray() || !update.IsArray() || update.element_type() != operand.element_type() ||
      update.rank() != operand.rank() || !instruction.shape().IsArray() ||
      instruction.shape().dimensions() != operand.dimensions() ||
      instruction.shape().element_type() != operand.element_type()) {
    return InvalidKernelOp(
        instruction,
        absl::StrCat("operand ", operand.ToString(), ", update ", update.ToString(), " and result ",
                     instruction.shape().ToString(), " must be arrays of one type and rank"));
  }
  SliceGeometry g;
  g.operand_dims = operand.dimensions();
  g.update_dims = update.dimensions();
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (update.dimensions(d) > operand.dimensions(d)) {
      return InvalidKernelOp(
          instruction, absl::StrCat("the update is larger than the operand in dimension ", d));
    }
  }
  g.num_starts = instruction.operand_count() - 2;
  g.start_type = instruction.operand(2)->shape().element_type();
  g.start_vector = g.num_starts == 1 && instruction.operand(2)->shape().rank() == 1;
  if (!g.start_vector && g.num_starts != operand.rank()) {
    return InvalidKernelOp(instruction,
                           absl::StrCat(g.num_starts, " start indices for rank ", operand.rank()));
  }
  for (int64_t i = 2; i < instruction.operand_count(); ++i) {
    const Shape& start = instruction.operand(i)->shape();
    if (!start.IsArray() || start.element_type() != g.start_type ||
        !pu::IsIntegralType(g.start_type) || pu::IsSubByteType(g.start_type) ||
        (g.start_vector ? start.rank() != 1 || start.dimensions(0) != operand.rank()
                        : start.rank() != 0)) {
      return InvalidKernelOp(
          instruction,
          absl::StrCat("start index ", start.ToString(),
                       " is not an integer scalar (or one vector) of ", "the first start's type"));
    }
  }
  if (static_cast<int64_t>(values.operands.size()) != instruction.operand_count() ||
      values.outputs.size() != 1) {
    return InvalidKernelOp(instruction,
                           absl::StrCat("given ", values.operands.size(), " operand and ",
                                        values.outputs.size(), " result values"));
  }
  AXLE_RETURN_IF_ERROR(CheckKernelTypes(instruction, {}));
  g.type = operand.element_type();
  g.element_bytes = g.type == PRED || pu::IsSubByteType(g.type) ? 1 : pu::ByteWidth(g.type);

  llvm::LLVMContext context;
  const std::string module_name = absl::StrCat("dynamic_update_slice_", instruction.name());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                        NewNvptxModule(module_name, context, options));
  AXLE_RETURN_IF_ERROR(EmitKernel(g, module.get()));
  AXLE_ASSIGN_OR_RETURN(std::string ptx, CompileNvptxModule(module.get(), module_name, options));
  return std::make_unique<DynamicUpdateSliceThunk>(instruction.name(), std::move(values),
                                                   std::move(ptx), std::move(g));
}

}  // namespace axle::gpu
