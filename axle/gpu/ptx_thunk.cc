//===- ptx_thunk.cc - A thunk that launches kernels of its own PTX module --===//
#include "axle/gpu/ptx_thunk.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"

namespace axle::gpu {
namespace {

constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int kMaxBlock = 1024;

absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

}  // namespace

PtxThunk::PtxThunk(std::string name, GpuThunkValues values, std::string ptx,
                   std::vector<std::string> kernels)
    : GpuThunk(std::move(name)),
      values_(std::move(values)),
      ptx_(std::move(ptx)),
      kernels_(std::move(kernels)) {}

absl::Status PtxThunk::Initialize(const CudaDevice& device) {
  if (module_ != nullptr) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<CudaModule>> module = CudaModule::LoadPtx(device, ptx_);
  if (!module.ok()) return Annotate(module.status(), absl::StrCat("CUDA: ", name()));
  std::vector<CUfunction> functions;
  for (const std::string& kernel : kernels_) {
    absl::StatusOr<CUfunction> function = (*module)->GetFunction(kernel);
    if (!function.ok()) return Annotate(function.status(), absl::StrCat("CUDA: ", name()));
    functions.push_back(*function);
  }
  module_ = *std::move(module);
  functions_ = std::move(functions);
  return absl::OkStatus();
}

absl::Status PtxThunk::Launch(CudaStream* stream, int kernel, int64_t grid, int block,
                              absl::Span<const Argument> arguments) const {
  if (kernel < 0 || static_cast<size_t>(kernel) >= functions_.size()) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA: ", name(), ": kernel ", kernel, " launched before Initialize"));
  }
  const std::string& kernel_name = kernels_[kernel];
  if (grid < 0 || grid > kMaxGridX || block <= 0 || block > kMaxBlock) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA: ", name(), ": launch of ", kernel_name, " with ", grid, " blocks of ",
                     block, " threads (at most ", kMaxGridX, " of ", kMaxBlock, ")"));
  }
  if (grid == 0) return absl::OkStatus();
  std::vector<uint64_t> values;
  values.reserve(arguments.size());
  for (const Argument& argument : arguments) values.push_back(argument.bits);
  std::vector<void*> parameters;
  parameters.reserve(values.size());
  for (uint64_t& value : values) parameters.push_back(&value);
  const CudaDriver& driver = stream->device().driver();
  CudaDevice::ScopedActivation active(stream->device());
  return Annotate(
      driver.ToStatus(driver.cuLaunchKernel(functions_[kernel], static_cast<unsigned>(grid), 1, 1,
                                            static_cast<unsigned>(block), 1, 1,
                                            /*sharedMemBytes=*/0, stream->stream(),
                                            parameters.data(), /*extra=*/nullptr),
                      "cuLaunchKernel"),
      absl::StrCat("CUDA: ", name(), " (kernel ", kernel_name, ")"));
}

absl::Status PtxThunk::CopyUnlessSame(CudaStream* stream, const se::DeviceMemoryBase& from,
                                      const se::DeviceMemoryBase& to, int64_t bytes) const {
  if (bytes == 0 || from.opaque() == to.opaque()) return absl::OkStatus();
  se::DeviceMemoryBase destination = to;
  return Annotate(stream->MemcpyDeviceToDevice(&destination, from, static_cast<uint64_t>(bytes)),
                  absl::StrCat("CUDA: ", name(), ": copying an operand to the result"));
}

std::vector<std::pair<int64_t, int64_t>> PtxThunk::CopiedOperandPairs(int64_t count) const {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const std::vector<int64_t>& operands = values_.operands;
  for (int64_t i = 0; i < count && i < static_cast<int64_t>(operands.size()) &&
                      i < static_cast<int64_t>(values_.outputs.size());
       ++i) {
    if (std::count(operands.begin(), operands.end(), operands[i]) == 1) {
      pairs.emplace_back(operands[i], values_.outputs[i]);
    }
  }
  return pairs;
}

}  // namespace axle::gpu
