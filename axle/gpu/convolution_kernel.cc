//===- convolution_kernel.cc - Any HLO convolution as one PTX kernel -------===//
//
// The plan (MakeConvPlan), its host evaluation (RunConvPlanOnHost) and its
// NVPTX kernel (CompileConvolutionToPtx), which follow the same loops: the
// window's dimensions outermost (a position outside the input or between
// base-dilation holes skips the inner loops), the group's input features
// innermost. Loop counters and the accumulator are allocas that O3 promotes
// to registers.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/convolution_kernel.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/nvptx_target_hooks.h"
#include "axle/gpu/ptx_module.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

std::vector<int64_t> MinorToMajor(const Shape& shape) {
  if (shape.has_layout() &&
      static_cast<int64_t>(shape.layout().minor_to_major().size()) == shape.rank()) {
    return shape.layout().minor_to_major();
  }
  std::vector<int64_t> order;
  for (int64_t d = shape.rank(); d-- > 0;) order.push_back(d);
  return order;
}

int64_t WindowedSize(int64_t input, const WindowDimension& w) {
  auto dilated = [](int64_t bound, int64_t dilation) {
    return bound == 0 ? 0 : (bound - 1) * dilation + 1;
  };
  const int64_t padded = dilated(input, w.base_dilation()) + w.padding_low() + w.padding_high();
  const int64_t window = dilated(w.size(), w.window_dilation());
  if (padded <= 0 || window > padded) return 0;
  return (padded - window) / w.stride() + 1;
}

bool TakesType(PrimitiveType type) {
  return type == PRED || type == F16 || type == BF16 || type == F32 || type == F64 ||
         (pu::IsIntegralType(type) && !pu::IsSubByteType(type));
}

absl::Status CheckDims(const std::vector<int64_t>& dims, int64_t rank, const std::string& name,
                       const char* what) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA convolution ", name, ": ", what,
                                                     " dimension numbers are not a permutation of ",
                                                     rank, " dimensions"));
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvPlan> MakeConvPlan(const HloInstruction& instruction) {
  const auto* conv = dyn_cast<HloConvolutionInstruction>(&instruction);
  if (conv == nullptr || instruction.operand_count() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA convolution: ", instruction.name(),
                                                   " is not a convolution of two operands"));
  }
  const std::string& name = instruction.name();
  const Shape& lhs = instruction.operand(0)->shape();
  const Shape& rhs = instruction.operand(1)->shape();
  const Shape& out = instruction.shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA convolution ", name, ": operands and result must be arrays"));
  }
  for (PrimitiveType type : {lhs.element_type(), rhs.element_type(), out.element_type()}) {
    if (!TakesType(type)) {
      return absl::UnimplementedError(
          absl::StrCat("CUDA convolution ", name, ": ", pu::LowercasePrimitiveTypeName(type),
                       " elements are not supported (pred, f16, bf16, f32, f64 and integers are)"));
    }
  }
  const ConvolutionDimensionNumbers& dn = conv->convolution_dimension_numbers();
  const Window& window = conv->window();
  const int64_t num_spatial = dn.input_spatial_dimensions_size();
  if (dn.kernel_spatial_dimensions_size() != num_spatial ||
      dn.output_spatial_dimensions_size() != num_spatial ||
      window.dimensions_size() != num_spatial) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA convolution ", name, ": input, kernel, output and window disagree on ",
                     "the number of spatial dimensions"));
  }
  for (const Shape* shape : {&lhs, &rhs, &out}) {
    if (shape->rank() != num_spatial + 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CUDA convolution ", name, ": ", shape->ToString(), " must have rank ", num_spatial + 2));
    }
  }
  std::vector<int64_t> in_dims = {dn.input_batch_dimension(), dn.input_feature_dimension()};
  std::vector<int64_t> k_dims = {dn.kernel_output_feature_dimension(),
                                 dn.kernel_input_feature_dimension()};
  std::vector<int64_t> o_dims = {dn.output_batch_dimension(), dn.output_feature_dimension()};
  for (int64_t i = 0; i < num_spatial; ++i) {
    in_dims.push_back(dn.input_spatial_dimensions(i));
    k_dims.push_back(dn.kernel_spatial_dimensions(i));
    o_dims.push_back(dn.output_spatial_dimensions(i));
  }
  AXLE_RETURN_IF_ERROR(CheckDims(in_dims, lhs.rank(), name, "input"));
  AXLE_RETURN_IF_ERROR(CheckDims(k_dims, rhs.rank(), name, "kernel"));
  AXLE_RETURN_IF_ERROR(CheckDims(o_dims, out.rank(), name, "output"));

  const int64_t fgc = conv->feature_group_count();
  const int64_t bgc = conv->batch_group_count();
  const int64_t in_batch = lhs.dimensions(dn.input_batch_dimension());
  const int64_t in_features = lhs.dimensions(dn.input_feature_dimension());
  const int64_t k_in_features = rhs.dimensions(dn.kernel_input_feature_dimension());
  const int64_t out_features = rhs.dimensions(dn.kernel_output_feature_dimension());
  if (fgc < 1 || bgc < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA convolution ", name, ": feature_group_count ", fgc,
                     " and batch_group_count ", bgc, " must be positive"));
  }
  if (in_features != k_in_features * fgc || out_features % fgc != 0 || out_features % bgc != 0 ||
      in_batch % bgc != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA convolution ", name, ": input features ", in_features, ", kernel input features ",
        k_in_features, ", output features ", out_features, " and input batch ", in_batch,
        " do not fit feature_group_count ", fgc, " and batch_group_count ", bgc));
  }

  ConvPlan plan;
  plan.instruction = name;
  plan.lhs_type = lhs.element_type();
  plan.rhs_type = rhs.element_type();
  plan.result_type = out.element_type();
  const PrimitiveType result = out.element_type();
  plan.accumulator_type = result == F64                      ? F64
                          : pu::IsFloatingPointType(result)  ? F32
                          : pu::IsSignedIntegralType(result) ? S64
                                                             : U64;
  plan.out_elements = out.num_elements();
  plan.lhs_elements = lhs.num_elements();
  plan.rhs_elements = rhs.num_elements();
  const std::vector<int64_t> in_strides = ShapeUtil::LayoutStrides(lhs);
  const std::vector<int64_t> k_strides = ShapeUtil::LayoutStrides(rhs);
  const std::vector<int64_t> out_strides = ShapeUtil::LayoutStrides(out);
  plan.out_batch = out.dimensions(dn.output_batch_dimension());
  plan.out_batch_stride = out_strides[dn.output_batch_dimension()];
  plan.out_features = out.dimensions(dn.output_feature_dimension());
  plan.out_feature_stride = out_strides[dn.output_feature_dimension()];
  if (plan.out_batch != in_batch / bgc || plan.out_features != out_features) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA convolution ", name, ": result ", out.ToString(), " has batch ",
                     plan.out_batch, " and features ", plan.out_features, " where ", in_batch / bgc,
                     " and ", out_features, " are expected"));
  }
  plan.in_batch_stride = in_strides[dn.input_batch_dimension()];
  plan.in_feature_stride = in_strides[dn.input_feature_dimension()];
  plan.kernel_in_feature_stride = k_strides[dn.kernel_input_feature_dimension()];
  plan.kernel_out_feature_stride = k_strides[dn.kernel_output_feature_dimension()];
  plan.input_features_per_group = k_in_features;
  plan.output_features_per_feature_group = std::max<int64_t>(1, out_features / fgc);
  plan.output_features_per_batch_group = std::max<int64_t>(1, out_features / bgc);
  plan.batch_group_size = in_batch / bgc;
  for (int64_t i = 0; i < num_spatial; ++i) {
    const WindowDimension& w = window.dimensions(i);
    ConvSpatialPlan s;
    s.in_size = lhs.dimensions(dn.input_spatial_dimensions(i));
    s.in_stride = in_strides[dn.input_spatial_dimensions(i)];
    s.out_size = out.dimensions(dn.output_spatial_dimensions(i));
    s.out_stride = out_strides[dn.output_spatial_dimensions(i)];
    s.window_size = rhs.dimensions(dn.kernel_spatial_dimensions(i));
    s.kernel_stride = k_strides[dn.kernel_spatial_dimensions(i)];
    s.stride = w.stride();
    s.padding_low = w.padding_low();
    s.padding_high = w.padding_high();
    s.base_dilation = w.base_dilation();
    s.window_dilation = w.window_dilation();
    s.reversal = w.window_reversal();
    if (w.size() != s.window_size) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA convolution ", name, ": window size ",
                                                     w.size(), " in spatial dimension ", i,
                                                     " differs from the kernel's ", s.window_size));
    }
    if (s.stride < 1 || s.base_dilation < 1 || s.window_dilation < 1) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA convolution ", name,
                                                     ": window stride and dilations must be ",
                                                     "positive in spatial dimension ", i));
    }
    if (WindowedSize(s.in_size, w) != s.out_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CUDA convolution ", name, ": result ", out.ToString(), " has size ", s.out_size,
          " in spatial dimension ", i, " where the window gives ", WindowedSize(s.in_size, w)));
    }
    plan.spatial.push_back(s);
  }
  for (int64_t d : MinorToMajor(out)) {
    int role = d == dn.output_batch_dimension()     ? ConvPlan::kBatch
               : d == dn.output_feature_dimension() ? ConvPlan::kFeature
                                                    : -3;
    for (int64_t i = 0; i < num_spatial && role == -3; ++i) {
      if (dn.output_spatial_dimensions(i) == d) role = static_cast<int>(i);
    }
    plan.out_minor_to_major.push_back(role);
  }
  return plan;
}

std::vector<double> RunConvPlanOnHost(const ConvPlan& plan, absl::Span<const double> lhs,
                                      absl::Span<const double> rhs) {
  std::vector<double> out(plan.out_elements, 0.0);
  const size_t num_spatial = plan.spatial.size();
  std::vector<int64_t> o(num_spatial, 0);
  for (int64_t linear = 0; linear < plan.out_elements; ++linear) {
    int64_t rest = linear;
    int64_t b = 0;
    int64_t f = 0;
    for (int role : plan.out_minor_to_major) {
      const int64_t size = plan.OutSize(role);
      const int64_t value = rest % size;
      rest /= size;
      if (role == ConvPlan::kBatch) {
        b = value;
      } else if (role == ConvPlan::kFeature) {
        f = value;
      } else {
        o[role] = value;
      }
    }
    const int64_t in_base =
        (b + (f / plan.output_features_per_batch_group) * plan.batch_group_size) *
            plan.in_batch_stride +
        (f / plan.output_features_per_feature_group) * plan.input_features_per_group *
            plan.in_feature_stride;
    const int64_t k_base = f * plan.kernel_out_feature_stride;
    double sum = 0;
    // The window's dimensions, outermost first.
    std::function<void(size_t, int64_t, int64_t)> window = [&](size_t i, int64_t in_offset,
                                                               int64_t k_offset) {
      if (i == num_spatial) {
        for (int64_t iz = 0; iz < plan.input_features_per_group; ++iz) {
          sum += lhs[in_offset + iz * plan.in_feature_stride] *
                 rhs[k_offset + iz * plan.kernel_in_feature_stride];
        }
        return;
      }
      const ConvSpatialPlan& s = plan.spatial[i];
      for (int64_t k = 0; k < s.window_size; ++k) {
        const int64_t dilated = o[i] * s.stride - s.padding_low + k * s.window_dilation;
        if (dilated % s.base_dilation != 0) continue;
        const int64_t position = dilated / s.base_dilation;
        if (position < 0 || position >= s.in_size) continue;
        const int64_t kk = s.reversal ? s.window_size - 1 - k : k;
        window(i + 1, in_offset + position * s.in_stride, k_offset + kk * s.kernel_stride);
      }
    };
    window(0, in_base, k_base);
    // pred: an or of ands (any product true).
    out[linear] = plan.result_type == PRED ? static_cast<double>(sum != 0) : sum;
  }
  return out;
}

namespace {

class ConvKernelEmitter {
 public:
  ConvKernelEmitter(const ConvPlan& plan, llvm::Module* module)
      : plan_(plan),
        module_(module),
        b_(module->getContext()),
        elemental_(module, &b_, NvptxTargetHooks()) {}

  // `block_size` threads per output element (a block each, summing one
  // output's window together) when `block_per_output`, else a thread each.
  absl::StatusOr<llvm::Function*> Emit(absl::string_view name, int block_size,
                                       bool block_per_output);

 private:
  llvm::Value* I64(int64_t value) { return b_.getInt64(value); }
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, const char* name) {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    return entry.CreateAlloca(type, nullptr, name);
  }
  // for (i = 0; i < trip; ++i) body(i); body leaves the builder where the
  // iteration ends.
  absl::Status ForLoop(int64_t trip, const char* name,
                       const std::function<absl::Status(llvm::Value*)>& body);
  absl::Status EmitWindow(size_t dim, llvm::Value* in_offset, llvm::Value* k_offset);
  // Adds lhs[in_offset] * rhs[k_offset] to the accumulator.
  absl::Status EmitProduct(llvm::Value* in_offset, llvm::Value* k_offset);
  // The block-per-output form: thread t sums the products r = t, t + block,
  // ... of the output's window flattened (EmitWindowElement), then the
  // block adds its threads' sums in shared memory, in a fixed order.
  absl::Status EmitBlockWindow(llvm::Value* in_base, llvm::Value* k_base, int block_size);
  absl::Status EmitWindowElement(llvm::Value* r, llvm::Value* in_base, llvm::Value* k_base);
  // An operand element converted to the result type, then the accumulator's.
  absl::StatusOr<llvm::Value*> LoadOperand(llvm::Value* base, llvm::Value* offset,
                                           PrimitiveType type);

  const ConvPlan& plan_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalIrEmitter elemental_;
  llvm::Function* function_ = nullptr;
  llvm::AllocaInst* accumulator_ = nullptr;
  std::vector<llvm::Value*> out_position_;
};

absl::Status ConvKernelEmitter::ForLoop(int64_t trip, const char* name,
                                        const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::LLVMContext& context = module_->getContext();
  llvm::AllocaInst* counter = EntryAlloca(b_.getInt64Ty(), name);
  b_.CreateStore(I64(0), counter);
  auto* header = llvm::BasicBlock::Create(context, absl::StrCat(name, ".header"), function_);
  auto* loop_body = llvm::BasicBlock::Create(context, absl::StrCat(name, ".body"), function_);
  auto* exit = llvm::BasicBlock::Create(context, absl::StrCat(name, ".exit"), function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::Value* i = b_.CreateLoad(b_.getInt64Ty(), counter, name);
  b_.CreateCondBr(b_.CreateICmpSLT(i, I64(trip)), loop_body, exit);
  b_.SetInsertPoint(loop_body);
  AXLE_RETURN_IF_ERROR(body(i));
  b_.CreateStore(b_.CreateAdd(i, I64(1), "", true, true), counter);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::StatusOr<llvm::Value*> ConvKernelEmitter::LoadOperand(llvm::Value* base, llvm::Value* offset,
                                                            PrimitiveType type) {
  llvm::Value* value = elemental_.LoadElement(base, offset, type);
  AXLE_ASSIGN_OR_RETURN(value, elemental_.EmitConvert(value, type, plan_.result_type));
  return elemental_.EmitConvert(value, plan_.result_type, plan_.accumulator_type);
}

absl::Status ConvKernelEmitter::EmitWindow(size_t dim, llvm::Value* in_offset,
                                           llvm::Value* k_offset) {
  if (dim == plan_.spatial.size()) {
    return ForLoop(plan_.input_features_per_group, "iz", [&](llvm::Value* iz) -> absl::Status {
      return EmitProduct(
          b_.CreateAdd(in_offset, b_.CreateMul(iz, I64(plan_.in_feature_stride))),
          b_.CreateAdd(k_offset, b_.CreateMul(iz, I64(plan_.kernel_in_feature_stride))));
    });
  }
  const ConvSpatialPlan& s = plan_.spatial[dim];
  const std::string name = absl::StrCat("k", dim);
  return ForLoop(s.window_size, name.c_str(), [&](llvm::Value* k) -> absl::Status {
    llvm::Value* dilated = b_.CreateAdd(
        b_.CreateSub(b_.CreateMul(out_position_[dim], I64(s.stride)), I64(s.padding_low)),
        b_.CreateMul(k, I64(s.window_dilation)));
    llvm::Value* position = dilated;
    llvm::Value* inside = b_.getTrue();
    if (s.base_dilation != 1) {
      inside = b_.CreateICmpEQ(b_.CreateSRem(dilated, I64(s.base_dilation)), I64(0));
      position = b_.CreateSDiv(dilated, I64(s.base_dilation));
    }
    // Unsigned: a negative position is out of range too.
    inside = b_.CreateAnd(inside, b_.CreateICmpULT(position, I64(s.in_size)));
    llvm::Value* kk = s.reversal ? b_.CreateSub(I64(s.window_size - 1), k) : k;
    auto* then = llvm::BasicBlock::Create(module_->getContext(), name + ".inside", function_);
    auto* next = llvm::BasicBlock::Create(module_->getContext(), name + ".next", function_);
    b_.CreateCondBr(inside, then, next);
    b_.SetInsertPoint(then);
    AXLE_RETURN_IF_ERROR(
        EmitWindow(dim + 1, b_.CreateAdd(in_offset, b_.CreateMul(position, I64(s.in_stride))),
                   b_.CreateAdd(k_offset, b_.CreateMul(kk, I64(s.kernel_stride)))));
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
    return absl::OkStatus();
  });
}

absl::Status ConvKernelEmitter::EmitProduct(llvm::Value* in_offset, llvm::Value* k_offset) {
  AXLE_ASSIGN_OR_RETURN(llvm::Value * x,
                        LoadOperand(function_->getArg(0), in_offset, plan_.lhs_type));
  AXLE_ASSIGN_OR_RETURN(llvm::Value * y,
                        LoadOperand(function_->getArg(1), k_offset, plan_.rhs_type));
  llvm::Type* type = accumulator_->getAllocatedType();
  llvm::Value* sum = b_.CreateLoad(type, accumulator_);
  if (pu::IsFloatingPointType(plan_.accumulator_type)) {
    sum = b_.CreateFAdd(sum, b_.CreateFMul(x, y));
  } else {
    sum = b_.CreateAdd(sum, b_.CreateMul(x, y));
  }
  b_.CreateStore(sum, accumulator_);
  return absl::OkStatus();
}

absl::Status ConvKernelEmitter::EmitWindowElement(llvm::Value* r, llvm::Value* in_base,
                                                  llvm::Value* k_base) {
  // Component 0 is the input feature, 1 + d the window's dimension d;
  // decoded from r fastest first: the one whose step moves least in the
  // input (neighbouring threads read neighbouring elements where they can).
  const size_t rank = plan_.spatial.size();
  std::vector<size_t> order(rank + 1);
  for (size_t i = 0; i <= rank; ++i) order[i] = i;
  auto input_step = [&](size_t component) {
    if (component == 0) return plan_.in_feature_stride;
    const ConvSpatialPlan& s = plan_.spatial[component - 1];
    return s.in_stride * std::max<int64_t>(1, s.window_dilation / s.base_dilation);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return input_step(a) < input_step(b); });
  std::vector<llvm::Value*> value(rank + 1, nullptr);
  llvm::Value* rest = r;
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t component = order[i];
    const int64_t size =
        component == 0 ? plan_.input_features_per_group : plan_.spatial[component - 1].window_size;
    if (i + 1 < order.size()) {
      value[component] = b_.CreateURem(rest, I64(size));
      rest = b_.CreateUDiv(rest, I64(size));
    } else {
      value[component] = rest;
    }
  }
  llvm::Value* in_offset =
      b_.CreateAdd(in_base, b_.CreateMul(value[0], I64(plan_.in_feature_stride)));
  llvm::Value* k_offset =
      b_.CreateAdd(k_base, b_.CreateMul(value[0], I64(plan_.kernel_in_feature_stride)));
  llvm::Value* inside = b_.getTrue();
  for (size_t d = 0; d < rank; ++d) {
    const ConvSpatialPlan& s = plan_.spatial[d];
    llvm::Value* k = value[d + 1];
    llvm::Value* dilated = b_.CreateAdd(
        b_.CreateSub(b_.CreateMul(out_position_[d], I64(s.stride)), I64(s.padding_low)),
        b_.CreateMul(k, I64(s.window_dilation)));
    llvm::Value* position = dilated;
    if (s.base_dilation != 1) {
      inside = b_.CreateAnd(inside,
                            b_.CreateICmpEQ(b_.CreateSRem(dilated, I64(s.base_dilation)), I64(0)));
      position = b_.CreateSDiv(dilated, I64(s.base_dilation));
    }
    // Unsigned: a negative position is out of range too.
    inside = b_.CreateAnd(inside, b_.CreateICmpULT(position, I64(s.in_size)));
    llvm::Value* kk = s.reversal ? b_.CreateSub(I64(s.window_size - 1), k) : k;
    in_offset = b_.CreateAdd(in_offset, b_.CreateMul(position, I64(s.in_stride)));
    k_offset = b_.CreateAdd(k_offset, b_.CreateMul(kk, I64(s.kernel_stride)));
  }
  auto* then = llvm::BasicBlock::Create(module_->getContext(), "window.inside", function_);
  auto* next = llvm::BasicBlock::Create(module_->getContext(), "window.next", function_);
  b_.CreateCondBr(inside, then, next);
  b_.SetInsertPoint(then);
  AXLE_RETURN_IF_ERROR(EmitProduct(in_offset, k_offset));
  b_.CreateBr(next);
  b_.SetInsertPoint(next);
  return absl::OkStatus();
}

absl::Status ConvKernelEmitter::EmitBlockWindow(llvm::Value* in_base, llvm::Value* k_base,
                                                int block_size) {
  llvm::LLVMContext& context = module_->getContext();
  const int64_t length = ConvWindowLength(plan_);
  llvm::Value* thread = b_.CreateZExt(
      b_.CreateIntrinsic(b_.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}),
      b_.getInt64Ty(), "thread");
  // for (r = thread; r < length; r += block_size)
  llvm::AllocaInst* counter = EntryAlloca(b_.getInt64Ty(), "r");
  b_.CreateStore(thread, counter);
  auto* header = llvm::BasicBlock::Create(context, "r.header", function_);
  auto* body = llvm::BasicBlock::Create(context, "r.body", function_);
  auto* done = llvm::BasicBlock::Create(context, "r.exit", function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::Value* r = b_.CreateLoad(b_.getInt64Ty(), counter, "r");
  b_.CreateCondBr(b_.CreateICmpULT(r, I64(length)), body, done);
  b_.SetInsertPoint(body);
  AXLE_RETURN_IF_ERROR(EmitWindowElement(r, in_base, k_base));
  b_.CreateStore(b_.CreateAdd(r, I64(block_size), "", true, true), counter);
  b_.CreateBr(header);
  b_.SetInsertPoint(done);

  // The threads' sums through shared memory: halves added pairwise.
  llvm::Type* type = accumulator_->getAllocatedType();
  auto* array_type = llvm::ArrayType::get(type, static_cast<uint64_t>(block_size));
  auto* shared = new llvm::GlobalVariable(
      *module_, array_type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
      llvm::PoisonValue::get(array_type), "partial_sums", nullptr,
      llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/3);
  shared->setAlignment(llvm::Align(16));
  auto slot = [&](llvm::Value* index) {
    return b_.CreateInBoundsGEP(array_type, shared, {I64(0), index});
  };
  b_.CreateStore(b_.CreateLoad(type, accumulator_), slot(thread));
  for (int half = block_size / 2; half > 0; half /= 2) {
    b_.CreateIntrinsic(b_.getVoidTy(), llvm::Intrinsic::nvvm_barrier0, {});
    auto* add = llvm::BasicBlock::Create(context, absl::StrCat("sum", half), function_);
    auto* after = llvm::BasicBlock::Create(context, absl::StrCat("sum", half, ".done"), function_);
    b_.CreateCondBr(b_.CreateICmpULT(thread, I64(half)), add, after);
    b_.SetInsertPoint(add);
    llvm::Value* mine = b_.CreateLoad(type, slot(thread));
    llvm::Value* other = b_.CreateLoad(type, slot(b_.CreateAdd(thread, I64(half))));
    b_.CreateStore(pu::IsFloatingPointType(plan_.accumulator_type) ? b_.CreateFAdd(mine, other)
                                                                   : b_.CreateAdd(mine, other),
                   slot(thread));
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }
  // Thread 0 holds the block's sum; the others leave.
  auto* first = llvm::BasicBlock::Create(context, "first_thread", function_);
  auto* others = llvm::BasicBlock::Create(context, "other_threads", function_);
  b_.CreateCondBr(b_.CreateICmpEQ(thread, I64(0)), first, others);
  b_.SetInsertPoint(others);
  b_.CreateRetVoid();
  b_.SetInsertPoint(first);
  b_.CreateStore(b_.CreateLoad(type, slot(I64(0))), accumulator_);
  return absl::OkStatus();
}

absl::StatusOr<llvm::Function*> ConvKernelEmitter::Emit(absl::string_view name, int block_size,
                                                        bool block_per_output) {
  llvm::LLVMContext& context = module_->getContext();
  auto* type =
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy()}, false);
  function_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                     llvm::Twine(std::string(name)), module_);
  function_->addFnAttr(llvm::Attribute::NoUnwind);
  const int64_t bytes[] = {plan_.lhs_elements * pu::ByteWidth(plan_.lhs_type),
                           plan_.rhs_elements * pu::ByteWidth(plan_.rhs_type),
                           plan_.out_elements * pu::ByteWidth(plan_.result_type)};
  const char* names[] = {"lhs", "rhs", "out"};
  for (unsigned i = 0; i < 3; ++i) {
    llvm::Argument* argument = function_->getArg(i);
    argument->setName(names[i]);
    argument->addAttr(llvm::Attribute::NoAlias);
    argument->addAttr(llvm::Attribute::getWithAlignment(context, llvm::Align(16)));
    if (bytes[i] > 0) {
      argument->addAttr(llvm::Attribute::getWithDereferenceableBytes(context, bytes[i]));
    }
    if (i < 2) argument->addAttr(llvm::Attribute::ReadOnly);
  }
  MarkKernel(function_, block_size);
  llvm::Value* linear = nullptr;
  llvm::BasicBlock* exit = nullptr;
  if (block_per_output) {
    // A block per output element: the grid is exactly the output.
    b_.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function_));
    linear = b_.CreateZExt(
        b_.CreateIntrinsic(b_.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}),
        b_.getInt64Ty(), "linear");
  } else {
    const ElementKernelStart start =
        StartElementKernel(b_, function_, plan_.out_elements, /*no_wrap=*/true);
    linear = start.index;
    exit = start.exit;
  }
  // The output index, delinearized in the output's layout.
  out_position_.assign(plan_.spatial.size(), nullptr);
  llvm::Value* batch = I64(0);
  llvm::Value* feature = I64(0);
  llvm::Value* rest = linear;
  for (size_t i = 0; i < plan_.out_minor_to_major.size(); ++i) {
    const int role = plan_.out_minor_to_major[i];
    llvm::Value* value = rest;
    if (i + 1 < plan_.out_minor_to_major.size()) {
      value = b_.CreateURem(rest, I64(plan_.OutSize(role)));
      rest = b_.CreateUDiv(rest, I64(plan_.OutSize(role)));
    }
    if (role == ConvPlan::kBatch) {
      batch = value;
    } else if (role == ConvPlan::kFeature) {
      feature = value;
    } else {
      out_position_[role] = value;
    }
  }
  llvm::Value* batch_group = b_.CreateUDiv(feature, I64(plan_.output_features_per_batch_group));
  llvm::Value* feature_group = b_.CreateUDiv(feature, I64(plan_.output_features_per_feature_group));
  llvm::Value* in_base = b_.CreateAdd(
      b_.CreateMul(b_.CreateAdd(batch, b_.CreateMul(batch_group, I64(plan_.batch_group_size))),
                   I64(plan_.in_batch_stride)),
      b_.CreateMul(feature_group, I64(plan_.input_features_per_group * plan_.in_feature_stride)));
  llvm::Value* k_base = b_.CreateMul(feature, I64(plan_.kernel_out_feature_stride));

  llvm::Type* accumulator_type = elemental_.ValueType(plan_.accumulator_type);
  accumulator_ = EntryAlloca(accumulator_type, "acc");
  b_.CreateStore(llvm::Constant::getNullValue(accumulator_type), accumulator_);
  if (block_per_output) {
    AXLE_RETURN_IF_ERROR(EmitBlockWindow(in_base, k_base, block_size));
  } else {
    AXLE_RETURN_IF_ERROR(EmitWindow(0, in_base, k_base));
  }

  llvm::Value* sum = b_.CreateLoad(accumulator_type, accumulator_);
  const PrimitiveType result = plan_.result_type;
  if (pu::IsIntegralType(result) && pu::BitWidth(result) < 64) {
    // Saturate to the result's range, as XLA's evaluator does.
    if (pu::IsSignedIntegralType(result)) {
      const int64_t max = (int64_t{1} << (pu::BitWidth(result) - 1)) - 1;
      sum = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, sum, I64(max));
      sum = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, sum, I64(-max - 1));
    } else {
      const int64_t max = (int64_t{1} << pu::BitWidth(result)) - 1;
      sum = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, sum, I64(max));
    }
  }
  AXLE_ASSIGN_OR_RETURN(sum, elemental_.EmitConvert(sum, plan_.accumulator_type, result));
  elemental_.StoreElement(sum, function_->getArg(2), linear, result);
  if (exit != nullptr) {
    b_.CreateBr(exit);
  } else {
    b_.CreateRetVoid();
  }
  return function_;
}

}  // namespace

int64_t ConvWindowLength(const ConvPlan& plan) {
  int64_t length = plan.input_features_per_group;
  for (const ConvSpatialPlan& s : plan.spatial) length *= s.window_size;
  return length;
}

int ConvWindowBlockSize(const ConvPlan& plan) {
  // A thread per output keeps a GPU busy from about this many outputs (132
  // SMs of 2048 threads each on an H100, less a margin); below it, a long
  // window is better split across a block (weight gradients: few outputs,
  // each a sum over the whole batch and image).
  constexpr int64_t kFewOutputs = 32768;
  constexpr int64_t kLongWindow = 512;
  const int64_t length = ConvWindowLength(plan);
  if (plan.out_elements == 0 || plan.out_elements >= kFewOutputs || length < kLongWindow) {
    return 0;
  }
  return length >= 4096 ? 256 : 128;
}

absl::StatusOr<PtxKernel> CompileConvolutionToPtx(const ConvPlan& plan,
                                                  absl::string_view kernel_name,
                                                  const PtxOptions& options) {
  AXLE_RETURN_IF_ERROR(CheckBlockSize(options));
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>(std::string(kernel_name), context);
  AXLE_RETURN_IF_ERROR(PrepareNvptxModule(module.get(), options));
  ConvKernelEmitter emitter(plan, module.get());
  // A block per output element where outputs are few and windows long.
  const int window_block = ConvWindowBlockSize(plan);
  AXLE_RETURN_IF_ERROR(
      emitter
          .Emit(kernel_name, window_block > 0 ? window_block : options.block_size, window_block > 0)
          .status());
  AXLE_ASSIGN_OR_RETURN(PtxKernel kernel,
                        CompileElementKernel(module.get(), kernel_name, plan.out_elements,
                                             /*num_parameters=*/2, /*num_outputs=*/1, options));
  if (window_block > 0) {
    kernel.block = window_block;
    kernel.grid = plan.out_elements;
  }
  return kernel;
}

absl::StatusOr<PtxKernel> CompileStridedCopyPtx(absl::Span<const int64_t> dims,
                                                absl::Span<const int64_t> from_strides,
                                                absl::Span<const int64_t> to_strides,
                                                int64_t element_bytes,
                                                absl::string_view kernel_name,
                                                const PtxOptions& options) {
  if (from_strides.size() != dims.size() || to_strides.size() != dims.size() ||
      (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "strided copy ", kernel_name, ": ", dims.size(), " dimensions, ", from_strides.size(),
        " and ", to_strides.size(), " strides, ", element_bytes, "-byte elements"));
  }
  int64_t count = 1;
  for (int64_t size : dims) count *= size;
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>(std::string(kernel_name), context);
  AXLE_RETURN_IF_ERROR(PrepareNvptxModule(module.get(), options));
  llvm::IRBuilder<> b(context);
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy()}, false);
  llvm::Function* function = llvm::Function::Create(
      type, llvm::Function::ExternalLinkage, llvm::Twine(std::string(kernel_name)), module.get());
  function->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned i = 0; i < 2; ++i) {
    function->getArg(i)->addAttr(llvm::Attribute::NoAlias);
  }
  function->getArg(0)->addAttr(llvm::Attribute::ReadOnly);
  MarkKernel(function, options.block_size);
  const ElementKernelStart start = StartElementKernel(b, function, count);
  // The thread's index split into the dimensions, the last the fastest.
  llvm::Value* rest = start.index;
  llvm::Value* from = b.getInt64(0);
  llvm::Value* to = b.getInt64(0);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    llvm::Value* index = d == 0 ? rest : b.CreateURem(rest, b.getInt64(dims[d]));
    if (d > 0) rest = b.CreateUDiv(rest, b.getInt64(dims[d]));
    from = b.CreateAdd(from, b.CreateMul(index, b.getInt64(from_strides[d])));
    to = b.CreateAdd(to, b.CreateMul(index, b.getInt64(to_strides[d])));
  }
  // The element's bits, whatever its type.
  llvm::Type* element = b.getIntNTy(static_cast<unsigned>(8 * element_bytes));
  llvm::Value* value =
      b.CreateLoad(element, b.CreateInBoundsGEP(element, function->getArg(0), from));
  b.CreateStore(value, b.CreateInBoundsGEP(element, function->getArg(1), to));
  b.CreateBr(start.exit);
  return CompileElementKernel(module.get(), kernel_name, count, /*num_parameters=*/1,
                              /*num_outputs=*/1, options);
}

}  // namespace axle::gpu
