//===- select_and_scatter_thunk.cc - select-and-scatter as GPU kernels ----===//
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/kernel_builder.h"
#include "axle/gpu/ptx_module.h"
#include "axle/gpu/ptx_thunk.h"
#include "axle/gpu/scatter_thunk.h"
#include "axle/hlo/analysis/select_and_scatter_shapes.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

struct WindowGeometry {
  std::vector<int64_t> operand_dims;
  std::vector<int64_t> source_dims;
  std::vector<int64_t> window_sizes;
  Window window;
  PrimitiveType type = F32;
  int64_t element_bytes = 4;
};

// fill(init, output): output[i] = *init.
// select_and_scatter(operand, source, output): a thread per source element.
absl::Status EmitKernels(const WindowGeometry& g, const HloComputation& select,
                         const HloComputation& scatter, llvm::Module* module) {
  KernelBuilder kb(module);
  llvm::IRBuilder<>& b = kb.b();
  llvm_ir::ElementalIrEmitter& e = kb.elemental();
  const int64_t count = ElementCount(g.operand_dims);
  llvm::Type* storage = e.StorageType(g.type);

  kb.BeginKernel("fill", 2, 0, kThreadsPerBlock);
  llvm::Value* i = kb.GlobalThreadIndex();
  AXLE_RETURN_IF_ERROR(kb.If(b.CreateICmpULT(i, kb.I64(count)), "element", [&]() -> absl::Status {
    b.CreateStore(b.CreateLoad(storage, kb.pointer(0)),
                  b.CreateInBoundsGEP(storage, kb.pointer(1), i));
    return absl::OkStatus();
  }));
  kb.EndKernel();

  kb.BeginKernel("select_and_scatter", 3, 0, kThreadsPerBlock);
  const int64_t rank = static_cast<int64_t>(g.operand_dims.size());
  const std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(g.operand_dims);
  bool base_dilated = false;
  for (int64_t d = 0; d < rank; ++d) base_dilated |= g.window.dimensions(d).base_dilation() != 1;
  llvm::Value* linear = kb.GlobalThreadIndex();
  AXLE_RETURN_IF_ERROR(kb.If(
      b.CreateICmpULT(linear, kb.I64(ElementCount(g.source_dims))), "source",
      [&]() -> absl::Status {
        const llvm_ir::IrIndex s = kb.Delinearize(linear, g.source_dims);
        llvm::AllocaInst* selected = kb.Variable(b.getInt64Ty(), kb.I64(-1), "selected");
        llvm::AllocaInst* selected_value =
            kb.Variable(e.ValueType(g.type), llvm::Constant::getNullValue(e.ValueType(g.type)),
                        "selected_value");
        AXLE_RETURN_IF_ERROR(kb.For(
            kb.I64(0), kb.I64(ElementCount(g.window_sizes)), kb.I64(1), "window",
            [&](llvm::Value* w) -> absl::Status {
              const llvm_ir::IrIndex k = kb.Delinearize(w, g.window_sizes);
              llvm::Value* inside = b.getTrue();
              llvm::Value* offset = kb.I64(0);
              for (int64_t d = 0; d < rank; ++d) {
                const WindowDimension& wd = g.window.dimensions(d);
                // Position in the padded, base-dilated operand.
                llvm::Value* p = b.CreateAdd(
                    b.CreateSub(b.CreateMul(s[d], kb.I64(wd.stride())), kb.I64(wd.padding_low())),
                    b.CreateMul(k[d], kb.I64(wd.window_dilation())));
                if (base_dilated && wd.base_dilation() != 1) {
                  inside = b.CreateAnd(
                      inside,
                      b.CreateICmpEQ(b.CreateSRem(p, kb.I64(wd.base_dilation())), kb.I64(0)));
                  p = b.CreateSDiv(p, kb.I64(wd.base_dilation()));
                }
                inside = b.CreateAnd(inside, b.CreateICmpSGE(p, kb.I64(0)));
                inside = b.CreateAnd(inside, b.CreateICmpSLT(p, kb.I64(g.operand_dims[d])));
                offset = b.CreateAdd(offset, b.CreateMul(p, kb.I64(strides[d])));
              }
              return kb.If(inside, "inside", [&]() -> absl::Status {
                llvm::Value* candidate = e.LoadElement(kb.pointer(0), offset, g.type);
                llvm::Value* current = b.CreateLoad(b.getInt64Ty(), selected);
                llvm::Value* current_value = b.CreateLoad(e.ValueType(g.type), selected_value);
                AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> keep,
                                      e.EmitScalarComputation(select, {current_value, candidate}));
                // The first element inside, or one the selected does not
                // keep its place against.
                llvm::Value* take =
                    b.CreateOr(b.CreateICmpSLT(current, kb.I64(0)), b.CreateNot(keep[0]));
                b.CreateStore(b.CreateSelect(take, offset, current), selected);
                b.CreateStore(b.CreateSelect(take, candidate, current_value), selected_value);
                return absl::OkStatus();
              });
            }));
        llvm::Value* chosen = b.CreateLoad(b.getInt64Ty(), selected);
        return kb.If(b.CreateICmpSGE(chosen, kb.I64(0)), "scatter", [&]() -> absl::Status {
          llvm::Value* value = e.LoadElement(kb.pointer(1), linear, g.type);
          return kb.EmitCombine(scatter, g.type, kb.pointer(2), chosen, value,
                                CombineMode::kAtomic);
        });
      }));
  kb.EndKernel();
  return absl::OkStatus();
}

class SelectAndScatterThunk final : public PtxThunk {
 public:
  SelectAndScatterThunk(std::string name, GpuThunkValues values, std::string ptx,
                        WindowGeometry geometry)
      : PtxThunk(std::move(name), std::move(values), std::move(ptx),
                 {"fill", "select_and_scatter"}),
        g_(std::move(geometry)) {}

  absl::Status Execute(const GpuThunkContext& context) const override;

 private:
  WindowGeometry g_;
};

absl::Status SelectAndScatterThunk::Execute(const GpuThunkContext& context) const {
  const GpuThunkValues& v = values();
  const CUdeviceptr output = context.address(v.outputs[0]);
  if (output == context.address(v.operands[0]) || output == context.address(v.operands[1])) {
    return absl::InternalError(
        absl::StrCat("CUDA: select-and-scatter ", name(),
                     ": the result shares a buffer with the operand or the source (it must not)"));
  }
  const int64_t count = ElementCount(g_.operand_dims);
  AXLE_RETURN_IF_ERROR(LaunchPerItem(
      context.stream, 0, count,
      {Argument::Pointer(context.address(v.operands[2])), Argument::Pointer(output)}));
  const int64_t sources = ElementCount(g_.source_dims);
  if (count == 0 || sources == 0 || ElementCount(g_.window_sizes) == 0) return absl::OkStatus();
  return LaunchPerItem(
      context.stream, 1, sources,
      {Argument::Pointer(context.address(v.operands[0])),
       Argument::Pointer(context.address(v.operands[1])), Argument::Pointer(output)});
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeSelectAndScatterThunk(
    const HloInstruction& instruction, GpuThunkValues values, const PtxOptions& options) {
  absl::StatusOr<SelectAndScatterShapes> shapes = AnalyzeSelectAndScatter(instruction);
  if (!shapes.ok()) return InvalidKernelOp(instruction, shapes.status().message());
  AXLE_RETURN_IF_ERROR(CheckThunkValues(instruction, values, 3, 1));
  if (shapes->window_reversal) {
    return absl::UnimplementedError(absl::StrCat("CUDA: select-and-scatter ", instruction.name(),
                                                 ": window reversal is not supported"));
  }
  const HloComputation* select = shapes->select;
  const HloComputation* scatter = shapes->scatter;
  const PrimitiveType type = shapes->type;
  WindowGeometry g;
  g.source_dims = shapes->source_dims;
  for (const WindowDimension& w : shapes->window.dimensions()) g.window_sizes.push_back(w.size());
  AXLE_RETURN_IF_ERROR(CheckKernelTypes(instruction, {select, scatter}));
  g.operand_dims = shapes->operand_dims;
  g.window = shapes->window;
  g.type = type;
  g.element_bytes = type == PRED || pu::IsSubByteType(type) ? 1 : pu::ByteWidth(type);
  const AtomicOp op = AtomicOpOf(*scatter, type);
  if (g.element_bytes > 8 && op != AtomicOp::kAdd && op != AtomicOp::kAssign) {
    return absl::UnimplementedError(
        absl::StrCat("CUDA: select-and-scatter ", instruction.name(), ": combining ",
                     pu::LowercasePrimitiveTypeName(type), " elements by ", scatter->name(),
                     " atomically (16-byte elements combine only by add or assignment)"));
  }

  llvm::LLVMContext context;
  const std::string module_name = absl::StrCat("select_and_scatter_", instruction.name());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                        NewNvptxModule(module_name, context, options));
  AXLE_RETURN_IF_ERROR(EmitKernels(g, *select, *scatter, module.get()));
  AXLE_ASSIGN_OR_RETURN(std::string ptx, CompileNvptxModule(module.get(), module_name, options));
  return std::make_unique<SelectAndScatterThunk>(instruction.name(), std::move(values),
                                                 std::move(ptx), std::move(g));
}

}  // namespace axle::gpu
