//===- convolution_thunk.cc - kConvolution on the GPU ----------------------===//
#include "axle/gpu/convolution_thunk.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/convolution_kernel.h"
#include "axle/gpu/cuda_kernel.h"

namespace axle::gpu {
namespace {

class ConvolutionKernelThunk : public GpuThunk {
 public:
  ConvolutionKernelThunk(std::string name, GpuThunkValues values, PtxKernel kernel)
      : GpuThunk(std::move(name)), values_(std::move(values)), kernel_(std::move(kernel)) {}

  absl::Status Initialize(const CudaDevice& device) override {
    if (kernel_.grid == 0) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<CudaModule>> module = CudaModule::LoadPtx(device, kernel_.ptx);
    if (!module.ok()) {
      return absl::Status(
          module.status().code(),
          absl::StrCat(name(), ": loading its convolution kernel: ", module.status().message()));
    }
    module_ = *std::move(module);
    AXLE_ASSIGN_OR_RETURN(function_, module_->GetFunction(kernel_.name));
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (kernel_.grid == 0) return absl::OkStatus();
    if (function_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(name(), ": convolution thunk run before Initialize"));
    }
    const se::DeviceMemoryBase buffers[] = {context.buffer(values_.operands[0]),
                                            context.buffer(values_.operands[1]),
                                            context.buffer(values_.outputs[0])};
    absl::Status status =
        LaunchKernel(context.stream, function_, kernel_.grid, kernel_.block, buffers);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(name(), ": ", status.message()));
    }
    return absl::OkStatus();
  }

  GpuThunkValues buffer_uses() const override { return values_; }

 private:
  GpuThunkValues values_;
  PtxKernel kernel_;
  std::unique_ptr<CudaModule> module_;
  CUfunction function_ = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeConvolutionThunk(const HloInstruction& convolution,
                                                               GpuThunkValues values,
                                                               const PtxOptions& options) {
  if (values.operands.size() != 2 || values.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA convolution ", convolution.name(), ": expected 2 operand values and 1 ",
                     "result value, got ", values.operands.size(), " and ", values.outputs.size()));
  }
  AXLE_ASSIGN_OR_RETURN(ConvPlan plan, MakeConvPlan(convolution));
  AXLE_ASSIGN_OR_RETURN(PtxKernel kernel,
                        CompileConvolutionToPtx(plan, "convolution_kernel", options));
  return std::unique_ptr<GpuThunk>(
      new ConvolutionKernelThunk(convolution.name(), std::move(values), std::move(kernel)));
}

}  // namespace axle::gpu
