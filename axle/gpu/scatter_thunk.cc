//===- scatter_thunk.cc - scatter as Axle's own GPU kernel -----------------===//
#include "axle/gpu/scatter_thunk.h"

#include <algorithm>
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
#include "axle/hlo/analysis/scatter_indexing.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

// The shared indexing (scatter_indexing.h) and each operand's type.
struct ScatterGeometry : ScatterIndexing {
  std::vector<PrimitiveType> types;
  std::vector<int64_t> element_bytes;
};

enum class Combining { kPlain, kAtomic, kLocked };

absl::Status EmitScatterKernel(const ScatterGeometry& g, const HloComputation& combiner,
                               Combining combining, llvm::Module* module) {
  const int n = static_cast<int>(g.types.size());
  KernelBuilder kb(module);
  // scatter(indices, updates..., outputs..., locks)
  kb.BeginKernel("scatter", 2 * n + 2, 0, kThreadsPerBlock);
  llvm::IRBuilder<>& b = kb.b();
  llvm_ir::ElementalIrEmitter& e = kb.elemental();
  const int64_t operand_rank = static_cast<int64_t>(g.operand_dims.size());
  const ScatterWalk walk = ScatterWalkOf(g);
  const std::vector<int64_t>& operand_strides = walk.operand_strides;
  const int64_t vector_size = walk.vector_size;
  const int64_t vector_stride = walk.vector_stride;
  const std::vector<int64_t>& batch_strides = walk.batch_strides;
  const std::vector<int64_t>& window_extent = walk.window_extent;
  const int64_t update_count = ElementCount(g.update_dims);

  llvm::Value* linear = kb.GlobalThreadIndex();
  AXLE_RETURN_IF_ERROR(
      kb.If(b.CreateICmpULT(linear, kb.I64(update_count)), "update", [&]() -> absl::Status {
        const llvm_ir::IrIndex update = kb.Delinearize(linear, g.update_dims);
        llvm::Value* indices_base = kb.I64(0);
        for (size_t j = 0; j < g.update_scatter_dims.size(); ++j) {
          indices_base = b.CreateAdd(indices_base, b.CreateMul(update[g.update_scatter_dims[j]],
                                                               kb.I64(batch_strides[j])));
        }
        std::vector<llvm::Value*> start(operand_rank, kb.I64(0));
        for (int64_t k = 0; k < vector_size; ++k) {
          start[g.scatter_dims_to_operand_dims[k]] = kb.LoadIndex(
              kb.pointer(0), b.CreateAdd(indices_base, kb.I64(k * vector_stride)), g.indices_type);
        }
        for (size_t i = 0; i < g.input_batching_dims.size(); ++i) {
          start[g.input_batching_dims[i]] = update[g.update_scatter_dims[g.batch_positions[i]]];
        }
        // The whole window inside the operand (unsigned: negative starts
        // are out of bounds too).
        llvm::Value* in_bounds = b.getTrue();
        for (int64_t d = 0; d < operand_rank; ++d) {
          const int64_t limit = g.operand_dims[d] - window_extent[d];
          in_bounds = b.CreateAnd(
              in_bounds, limit < 0 ? b.getFalse() : b.CreateICmpULE(start[d], kb.I64(limit)));
        }
        return kb.If(in_bounds, "in_bounds", [&]() -> absl::Status {
          std::vector<llvm::Value*> position = start;
          for (size_t k = 0; k < g.update_window_dims.size(); ++k) {
            const int64_t d = g.window_operand_dims[k];
            position[d] = b.CreateAdd(position[d], update[g.update_window_dims[k]]);
          }
          llvm::Value* at = kb.I64(0);
          for (int64_t d = 0; d < operand_rank; ++d) {
            at = b.CreateAdd(at, b.CreateMul(position[d], kb.I64(operand_strides[d])));
          }
          std::vector<llvm::Value*> updates;
          std::vector<llvm::Value*> outputs;
          for (int i = 0; i < n; ++i) {
            updates.push_back(e.LoadElement(kb.pointer(1 + i), linear, g.types[i]));
            outputs.push_back(kb.pointer(1 + n + i));
          }
          if (combining == Combining::kLocked) {
            llvm::Value* lock = b.CreateInBoundsGEP(b.getInt32Ty(), kb.pointer(2 * n + 1), at);
            return kb.EmitLockedCombine(combiner, g.types, outputs, at, updates, lock);
          }
          if (n == 1) {
            return kb.EmitCombine(
                combiner, g.types[0], outputs[0], at, updates[0],
                combining == Combining::kPlain ? CombineMode::kPlain : CombineMode::kAtomic);
          }
          // Several operands, unique indices: load, compute, store.
          std::vector<llvm::Value*> arguments;
          arguments.reserve(2 * static_cast<size_t>(n));
          for (int i = 0; i < n; ++i) {
            arguments.push_back(e.LoadElement(outputs[i], at, g.types[i]));
          }
          arguments.insert(arguments.end(), updates.begin(), updates.end());
          AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                                e.EmitScalarComputation(combiner, arguments));
          for (int i = 0; i < n; ++i) e.StoreElement(results[i], outputs[i], at, g.types[i]);
          return absl::OkStatus();
        });
      }));
  kb.EndKernel();
  return absl::OkStatus();
}

class ScatterThunk final : public PtxThunk {
 public:
  ScatterThunk(std::string name, GpuThunkValues values, std::string ptx, ScatterGeometry geometry,
               Combining combining)
      : PtxThunk(std::move(name), std::move(values), std::move(ptx), {"scatter"}),
        g_(std::move(geometry)),
        combining_(combining) {}

  absl::Status Execute(const GpuThunkContext& context) const override;
  int64_t scratch_bytes() const override {
    return combining_ == Combining::kLocked ? ElementCount(g_.operand_dims) * 4 : 0;
  }
  // The operands are read only while being copied into the outputs.
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override {
    return CopiedOperandPairs(static_cast<int64_t>(g_.types.size()));
  }

 private:
  ScatterGeometry g_;
  Combining combining_;
};

absl::Status ScatterThunk::Execute(const GpuThunkContext& context) const {
  const GpuThunkValues& v = values();
  const int64_t n = static_cast<int64_t>(g_.types.size());
  const int64_t operand_count = ElementCount(g_.operand_dims);
  for (int64_t i = 0; i < n; ++i) {
    AXLE_RETURN_IF_ERROR(CopyUnlessSame(context.stream, context.buffer(v.operands[i]),
                                        context.buffer(v.outputs[i]),
                                        operand_count * g_.element_bytes[i]));
  }
  const int64_t update_count = ElementCount(g_.update_dims);
  if (update_count == 0 || operand_count == 0) return absl::OkStatus();
  CUdeviceptr locks = 0;
  if (combining_ == Combining::kLocked) {
    if (context.scratch.size() < static_cast<uint64_t>(scratch_bytes())) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA: ", name(), ": ", context.scratch.size(),
                                                     " bytes of scratch memory, needs ",
                                                     scratch_bytes()));
    }
    se::DeviceMemoryBase scratch = context.scratch;
    AXLE_RETURN_IF_ERROR(
        context.stream->Memset8(&scratch, 0, static_cast<uint64_t>(scratch_bytes())));
    locks = DevicePointer(context.scratch);
  }
  std::vector<Argument> arguments = {Argument::Pointer(context.address(v.operands[n]))};
  for (int64_t i = 0; i < n; ++i) {
    arguments.push_back(Argument::Pointer(context.address(v.operands[n + 1 + i])));
  }
  for (int64_t i = 0; i < n; ++i) {
    arguments.push_back(Argument::Pointer(context.address(v.outputs[i])));
  }
  arguments.push_back(Argument::Pointer(locks));
  return LaunchPerItem(context.stream, 0, update_count, arguments);
}

bool IsIndexType(PrimitiveType type) {
  return pu::IsIntegralType(type) && !pu::IsSubByteType(type);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeScatterThunk(const HloInstruction& instruction,
                                                           GpuThunkValues values,
                                                           const PtxOptions& options) {
  absl::StatusOr<ScatterIndexing> indexing = AnalyzeScatter(instruction);
  if (!indexing.ok()) return InvalidKernelOp(instruction, indexing.status().message());
  const auto* scatter = cast<HloScatterInstruction>(&instruction);
  const int64_t n = scatter->scatter_operand_count();
  if (static_cast<int64_t>(values.operands.size()) != 2 * n + 1 ||
      static_cast<int64_t>(values.outputs.size()) != n) {
    return InvalidKernelOp(
        instruction,
        absl::StrCat("given ", values.operands.size(), " operand and ", values.outputs.size(),
                     " result values, expects ", 2 * n + 1, " and ", n));
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& indices = instruction.operand(n)->shape();
  const Shape& update = instruction.operand(n + 1)->shape();
  if (!IsIndexType(indices.element_type())) {
    return InvalidKernelOp(
        instruction,
        absl::StrCat("indices of type ", pu::LowercasePrimitiveTypeName(indices.element_type()),
                     " are not integers of 8 bits or more"));
  }
  ScatterGeometry g;
  static_cast<ScatterIndexing&>(g) = *std::move(indexing);
  for (size_t k = 0; k < g.update_window_dims.size(); ++k) {
    if (update.dimensions(g.update_window_dims[k]) > operand.dimensions(g.window_operand_dims[k])) {
      return InvalidKernelOp(
          instruction,
          absl::StrCat("update window dimension ", g.update_window_dims[k], " (",
                       update.dimensions(g.update_window_dims[k]),
                       ") is larger than operand dimension ", g.window_operand_dims[k]));
    }
  }

  const HloComputation* combiner = instruction.to_apply();
  for (int64_t i = 0; i < n; ++i) {
    const PrimitiveType type = instruction.operand(i)->shape().element_type();
    g.types.push_back(type);
    g.element_bytes.push_back(type == PRED || pu::IsSubByteType(type) ? 1 : pu::ByteWidth(type));
  }
  AXLE_RETURN_IF_ERROR(CheckKernelTypes(instruction, {combiner}));

  Combining combining = Combining::kAtomic;
  if (scatter->unique_indices()) {
    combining = Combining::kPlain;
  } else if (n > 1 ||
             (g.element_bytes[0] > 8 && AtomicOpOf(*combiner, g.types[0]) != AtomicOp::kAdd &&
              AtomicOpOf(*combiner, g.types[0]) != AtomicOp::kAssign)) {
    combining = Combining::kLocked;
  }
  llvm::LLVMContext context;
  const std::string module_name = absl::StrCat("scatter_", instruction.name());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                        NewNvptxModule(module_name, context, options));
  AXLE_RETURN_IF_ERROR(EmitScatterKernel(g, *combiner, combining, module.get()));
  AXLE_ASSIGN_OR_RETURN(std::string ptx, CompileNvptxModule(module.get(), module_name, options));
  return std::make_unique<ScatterThunk>(instruction.name(), std::move(values), std::move(ptx),
                                        std::move(g), combining);
}

}  // namespace axle::gpu
