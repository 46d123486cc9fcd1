//===- convolution_thunk.cc - kConvolution on the GPU ----------------------===//
//
// cuDNN is opened with dlopen and called through a table of the legacy
// convolution API's functions, declared here with cuDNN 9's types and enum
// values (cudnn_graph.h, cudnn_cnn.h; the build machines have no cuDNN
// headers): handles and descriptors are opaque pointers, enums ints.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/convolution_thunk.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/convolution_kernel.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/cudnn_convolution.h"

namespace axle::gpu {
namespace {

// cuDNN 9's values.
using CudnnStatus = int;
using CudnnHandle = void*;
using CudnnDescriptor = void*;
constexpr CudnnStatus kCudnnSuccess = 0;
constexpr int kCudnnDataFloat = 0;
constexpr int kCudnnDataHalf = 2;
constexpr int kCudnnDataBfloat16 = 9;
constexpr int kCudnnTensorNchw = 0;
constexpr int kCudnnTensorNhwc = 1;
constexpr int kCudnnConvolution = 0;
constexpr int kCudnnCrossCorrelation = 1;
constexpr int kCudnnTensorOpMath = 1;
constexpr int kCudnnFmaMath = 3;

// cudnnConvolutionFwdAlgoPerf_t.
struct CudnnFwdAlgoPerf {
  int algo;
  CudnnStatus status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct Cudnn {
  CudnnStatus (*create)(CudnnHandle*) = nullptr;
  CudnnStatus (*destroy)(CudnnHandle) = nullptr;
  CudnnStatus (*set_stream)(CudnnHandle, CUstream) = nullptr;
  const char* (*get_error_string)(CudnnStatus) = nullptr;
  CudnnStatus (*create_tensor)(CudnnDescriptor*) = nullptr;
  CudnnStatus (*set_tensor_4d_ex)(CudnnDescriptor, int, int, int, int, int, int, int, int,
                                  int) = nullptr;
  CudnnStatus (*destroy_tensor)(CudnnDescriptor) = nullptr;
  CudnnStatus (*create_filter)(CudnnDescriptor*) = nullptr;
  CudnnStatus (*set_filter_4d)(CudnnDescriptor, int, int, int, int, int, int) = nullptr;
  CudnnStatus (*destroy_filter)(CudnnDescriptor) = nullptr;
  CudnnStatus (*create_convolution)(CudnnDescriptor*) = nullptr;
  CudnnStatus (*set_convolution_2d)(CudnnDescriptor, int, int, int, int, int, int, int,
                                    int) = nullptr;
  CudnnStatus (*set_group_count)(CudnnDescriptor, int) = nullptr;
  CudnnStatus (*set_math_type)(CudnnDescriptor, int) = nullptr;
  CudnnStatus (*destroy_convolution)(CudnnDescriptor) = nullptr;
  CudnnStatus (*get_forward_algorithm_v7)(CudnnHandle, CudnnDescriptor, CudnnDescriptor,
                                          CudnnDescriptor, CudnnDescriptor, int, int*,
                                          CudnnFwdAlgoPerf*) = nullptr;
  CudnnStatus (*forward)(CudnnHandle, const void*, CudnnDescriptor, const void*, CudnnDescriptor,
                         const void*, CudnnDescriptor, int, void*, size_t, const void*,
                         CudnnDescriptor, void*) = nullptr;

  static absl::StatusOr<const Cudnn*> Get();

  absl::Status Check(CudnnStatus status, absl::string_view call, absl::string_view name) const {
    if (status == kCudnnSuccess) return absl::OkStatus();
    const char* message = get_error_string != nullptr ? get_error_string(status) : nullptr;
    return absl::InternalError(
        absl::StrCat(name, ": ", call, " failed: ", message != nullptr ? message : "cuDNN error",
                     " (", status, ")"));
  }
};

absl::StatusOr<const Cudnn*> LoadCudnn() {
  const char* from_environment = std::getenv("AXLE_CUDNN");
  const std::string library = from_environment != nullptr && *from_environment != '\0' &&
                                      std::string(from_environment) != "1"
                                  ? std::string(from_environment)
                                  : std::string("libcudnn.so.9");
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(absl::StrCat("cuDNN unavailable: ", library, " not found (",
                                               error != nullptr ? error : "dlopen failed",
                                               "); set AXLE_CUDNN to its path"));
  }
  auto* cudnn = new Cudnn;  // lives with the process, as the library does
  absl::Status status;
  auto resolve = [&](auto& function, const char* symbol) {
    void* address = dlsym(handle, symbol);
    if (address == nullptr && status.ok()) {
      status = absl::UnavailableError(absl::StrCat("cuDNN: ", library, " has no ", symbol));
    }
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
  };
  resolve(cudnn->create, "cudnnCreate");
  resolve(cudnn->destroy, "cudnnDestroy");
  resolve(cudnn->set_stream, "cudnnSetStream");
  resolve(cudnn->get_error_string, "cudnnGetErrorString");
  resolve(cudnn->create_tensor, "cudnnCreateTensorDescriptor");
  resolve(cudnn->set_tensor_4d_ex, "cudnnSetTensor4dDescriptorEx");
  resolve(cudnn->destroy_tensor, "cudnnDestroyTensorDescriptor");
  resolve(cudnn->create_filter, "cudnnCreateFilterDescriptor");
  resolve(cudnn->set_filter_4d, "cudnnSetFilter4dDescriptor");
  resolve(cudnn->destroy_filter, "cudnnDestroyFilterDescriptor");
  resolve(cudnn->create_convolution, "cudnnCreateConvolutionDescriptor");
  resolve(cudnn->set_convolution_2d, "cudnnSetConvolution2dDescriptor");
  resolve(cudnn->set_group_count, "cudnnSetConvolutionGroupCount");
  resolve(cudnn->set_math_type, "cudnnSetConvolutionMathType");
  resolve(cudnn->destroy_convolution, "cudnnDestroyConvolutionDescriptor");
  resolve(cudnn->get_forward_algorithm_v7, "cudnnGetConvolutionForwardAlgorithm_v7");
  resolve(cudnn->forward, "cudnnConvolutionForward");
  if (!status.ok()) {
    delete cudnn;
    return status;
  }
  return cudnn;
}

absl::StatusOr<const Cudnn*> Cudnn::Get() {
  static const absl::StatusOr<const Cudnn*>* cudnn = new absl::StatusOr<const Cudnn*>(LoadCudnn());
  return *cudnn;
}

int CudnnDataType(PrimitiveType type) {
  return type == F16 ? kCudnnDataHalf : type == BF16 ? kCudnnDataBfloat16 : kCudnnDataFloat;
}

absl::Status Named(const absl::Status& status, absl::string_view name) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
}

class ConvolutionThunkImpl : public ConvolutionThunk {
 public:
  ConvolutionThunkImpl(std::string name, GpuThunkValues values, PtxKernel kernel,
                       std::optional<CudnnConvConfig> cudnn,
                       std::optional<PtxKernel> filter_relayout, ConvolutionBackend backend)
      : ConvolutionThunk(std::move(name)),
        values_(std::move(values)),
        kernel_(std::move(kernel)),
        config_(cudnn),
        relayout_(std::move(filter_relayout)),
        backend_(backend) {}

  ~ConvolutionThunkImpl() override {
    if (cudnn_ == nullptr || device_ == nullptr) return;
    CudaDevice::ScopedActivation activation(*device_);
    for (const auto& [stream, handle] : handles_) cudnn_->destroy(handle);
    if (x_ != nullptr) cudnn_->destroy_tensor(x_);
    if (y_ != nullptr) cudnn_->destroy_tensor(y_);
    if (w_ != nullptr) cudnn_->destroy_filter(w_);
    if (convolution_ != nullptr) cudnn_->destroy_convolution(convolution_);
  }
  ConvolutionThunkImpl(const ConvolutionThunkImpl&) = delete;
  ConvolutionThunkImpl& operator=(const ConvolutionThunkImpl&) = delete;

  absl::Status Initialize(const CudaDevice& device) override {
    device_ = &device;
    if (config_.has_value()) {
      absl::Status status = InitializeCudnn(device);
      if (status.ok()) return absl::OkStatus();
      if (backend_ == ConvolutionBackend::kCudnn) return status;
      cudnn_fallback_reason_ = std::string(status.message());
      use_cudnn_ = false;
    }
    if (kernel_.grid == 0) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<CudaModule>> module = CudaModule::LoadPtx(device, kernel_.ptx);
    if (!module.ok()) {
      return Named(module.status(), absl::StrCat(name(), ": loading its convolution kernel"));
    }
    module_ = *std::move(module);
    AXLE_ASSIGN_OR_RETURN(function_, module_->GetFunction(kernel_.name));
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (use_cudnn_) return ExecuteCudnn(context);
    if (kernel_.grid == 0) return absl::OkStatus();
    if (function_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(name(), ": convolution thunk run before Initialize"));
    }
    const se::DeviceMemoryBase buffers[] = {context.buffer(values_.operands[0]),
                                            context.buffer(values_.operands[1]),
                                            context.buffer(values_.outputs[0])};
    return Named(LaunchKernel(context.stream, function_, kernel_.grid, kernel_.block, buffers),
                 name());
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  int64_t scratch_bytes() const override {
    return config_.has_value() ? config_->scratch_bytes() : 0;
  }
  bool uses_cudnn() const override { return use_cudnn_; }
  const std::string& cudnn_fallback_reason() const override { return cudnn_fallback_reason_; }

 private:
  absl::Status InitializeCudnn(const CudaDevice& device) {
    AXLE_ASSIGN_OR_RETURN(cudnn_, Cudnn::Get());
    if (relayout_.has_value()) {
      absl::StatusOr<std::unique_ptr<CudaModule>> module =
          CudaModule::LoadPtx(device, relayout_->ptx);
      if (!module.ok()) {
        return Named(module.status(), absl::StrCat(name(), ": loading its filter relayout"));
      }
      relayout_module_ = *std::move(module);
      AXLE_ASSIGN_OR_RETURN(relayout_function_, relayout_module_->GetFunction(relayout_->name));
    }
    const Cudnn& c = *cudnn_;
    const CudnnConvConfig& k = *config_;
    const int type = CudnnDataType(k.type);
    CudaDevice::ScopedActivation activation(device);
    AXLE_RETURN_IF_ERROR(c.Check(c.create_tensor(&x_), "cudnnCreateTensorDescriptor", name()));
    AXLE_RETURN_IF_ERROR(c.Check(c.create_tensor(&y_), "cudnnCreateTensorDescriptor", name()));
    AXLE_RETURN_IF_ERROR(c.Check(c.create_filter(&w_), "cudnnCreateFilterDescriptor", name()));
    AXLE_RETURN_IF_ERROR(
        c.Check(c.create_convolution(&convolution_), "cudnnCreateConvolutionDescriptor", name()));
    AXLE_RETURN_IF_ERROR(
        c.Check(c.set_tensor_4d_ex(x_, type, k.x_dims[0], k.x_dims[1], k.x_dims[2], k.x_dims[3],
                                   k.x_strides[0], k.x_strides[1], k.x_strides[2], k.x_strides[3]),
                "cudnnSetTensor4dDescriptorEx (input)", name()));
    AXLE_RETURN_IF_ERROR(
        c.Check(c.set_tensor_4d_ex(y_, type, k.y_dims[0], k.y_dims[1], k.y_dims[2], k.y_dims[3],
                                   k.y_strides[0], k.y_strides[1], k.y_strides[2], k.y_strides[3]),
                "cudnnSetTensor4dDescriptorEx (output)", name()));
    AXLE_RETURN_IF_ERROR(
        c.Check(c.set_filter_4d(w_, type, k.filter_nhwc ? kCudnnTensorNhwc : kCudnnTensorNchw,
                                k.w_dims[0], k.w_dims[1], k.w_dims[2], k.w_dims[3]),
                "cudnnSetFilter4dDescriptor", name()));
    AXLE_RETURN_IF_ERROR(c.Check(
        c.set_convolution_2d(convolution_, k.padding[0], k.padding[1], k.strides[0], k.strides[1],
                             k.dilations[0], k.dilations[1],
                             k.cross_correlation ? kCudnnCrossCorrelation : kCudnnConvolution,
                             kCudnnDataFloat),
        "cudnnSetConvolution2dDescriptor", name()));
    AXLE_RETURN_IF_ERROR(c.Check(c.set_group_count(convolution_, k.groups),
                                 "cudnnSetConvolutionGroupCount", name()));
    AXLE_RETURN_IF_ERROR(
        c.Check(c.set_math_type(convolution_, k.type == F32 ? kCudnnFmaMath : kCudnnTensorOpMath),
                "cudnnSetConvolutionMathType", name()));
    // The heuristics' best algorithm whose workspace fits the scratch.
    CudnnHandle handle = nullptr;
    AXLE_RETURN_IF_ERROR(c.Check(c.create(&handle), "cudnnCreate", name()));
    constexpr int kRequested = 8;
    CudnnFwdAlgoPerf perfs[kRequested] = {};
    int returned = 0;
    absl::Status status = c.Check(
        c.get_forward_algorithm_v7(handle, x_, w_, convolution_, y_, kRequested, &returned, perfs),
        "cudnnGetConvolutionForwardAlgorithm_v7", name());
    c.destroy(handle);
    AXLE_RETURN_IF_ERROR(status);
    for (int i = 0; i < returned; ++i) {
      if (perfs[i].status == kCudnnSuccess &&
          static_cast<int64_t>(perfs[i].memory) <= k.workspace_limit) {
        algorithm_ = perfs[i].algo;
        workspace_bytes_ = perfs[i].memory;
        use_cudnn_ = true;
        return absl::OkStatus();
      }
    }
    return absl::UnimplementedError(absl::StrCat(name(), ": no cuDNN algorithm of the ", returned,
                                                 " proposed fits ", k.workspace_limit,
                                                 " bytes of workspace"));
  }

  // The stream's cuDNN handle, made on its first run there (mutex_ held).
  absl::StatusOr<CudnnHandle> HandleFor(CUstream stream) const {
    auto found = handles_.find(stream);
    if (found != handles_.end()) return found->second;
    CudaDevice::ScopedActivation activation(*device_);
    CudnnHandle handle = nullptr;
    AXLE_RETURN_IF_ERROR(cudnn_->Check(cudnn_->create(&handle), "cudnnCreate", name()));
    absl::Status status =
        cudnn_->Check(cudnn_->set_stream(handle, stream), "cudnnSetStream", name());
    if (!status.ok()) {
      cudnn_->destroy(handle);
      return status;
    }
    handles_.emplace(stream, handle);
    return handle;
  }

  absl::Status ExecuteCudnn(const GpuThunkContext& context) const {
    const uint64_t offset = static_cast<uint64_t>(config_->workspace_offset());
    const uint64_t needed = offset + workspace_bytes_;
    if (needed > 0 && (context.scratch.is_null() || context.scratch.size() < needed)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name(), ": cuDNN needs ", needed, " bytes of scratch memory, got ",
                       context.scratch.is_null() ? 0 : context.scratch.size()));
    }
    CUdeviceptr filter = context.address(values_.operands[1]);
    if (relayout_.has_value()) {
      const se::DeviceMemoryBase buffers[] = {context.buffer(values_.operands[1]), context.scratch};
      AXLE_RETURN_IF_ERROR(Named(LaunchKernel(context.stream, relayout_function_, relayout_->grid,
                                              relayout_->block, buffers),
                                 absl::StrCat(name(), ": filter relayout")));
      filter = DevicePointer(context.scratch);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    AXLE_ASSIGN_OR_RETURN(CudnnHandle handle, HandleFor(context.stream->stream()));
    const float alpha = 1.0f;
    const float beta = 0.0f;
    void* workspace =
        workspace_bytes_ > 0 ? DeviceAddress(DevicePointer(context.scratch) + offset) : nullptr;
    return cudnn_->Check(
        cudnn_->forward(handle, &alpha, x_, DeviceAddress(context.address(values_.operands[0])), w_,
                        DeviceAddress(filter), convolution_, algorithm_, workspace,
                        workspace_bytes_, &beta, y_,
                        DeviceAddress(context.address(values_.outputs[0]))),
        "cudnnConvolutionForward", name());
  }

  GpuThunkValues values_;
  PtxKernel kernel_;
  std::optional<CudnnConvConfig> config_;
  std::optional<PtxKernel> relayout_;
  ConvolutionBackend backend_;
  std::unique_ptr<CudaModule> relayout_module_;
  CUfunction relayout_function_ = nullptr;
  const CudaDevice* device_ = nullptr;
  std::unique_ptr<CudaModule> module_;
  CUfunction function_ = nullptr;

  bool use_cudnn_ = false;
  std::string cudnn_fallback_reason_;
  const Cudnn* cudnn_ = nullptr;
  CudnnDescriptor x_ = nullptr;
  CudnnDescriptor y_ = nullptr;
  CudnnDescriptor w_ = nullptr;
  CudnnDescriptor convolution_ = nullptr;
  int algorithm_ = 0;
  size_t workspace_bytes_ = 0;
  mutable std::mutex mutex_;
  mutable std::map<CUstream, CudnnHandle> handles_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ConvolutionThunk>> MakeConvolutionThunkWithBackend(
    const HloInstruction& convolution, GpuThunkValues values, ConvolutionBackend backend,
    const PtxOptions& options) {
  if (values.operands.size() != 2 || values.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA convolution ", convolution.name(), ": expected 2 operand values and 1 ",
                     "result value, got ", values.operands.size(), " and ", values.outputs.size()));
  }
  AXLE_ASSIGN_OR_RETURN(ConvPlan plan, MakeConvPlan(convolution));
  std::optional<CudnnConvConfig> cudnn;
  if (backend == ConvolutionBackend::kCudnn) {
    AXLE_ASSIGN_OR_RETURN(cudnn, CudnnConvConfigFor(plan));
  } else if (backend == ConvolutionBackend::kAuto && CudnnEnabledByEnvironment()) {
    absl::StatusOr<CudnnConvConfig> config = CudnnConvConfigFor(plan);
    if (config.ok()) cudnn = *std::move(config);
  }
  AXLE_ASSIGN_OR_RETURN(PtxKernel kernel,
                        CompileConvolutionToPtx(plan, "convolution_kernel", options));
  std::optional<PtxKernel> relayout;
  if (cudnn.has_value() && cudnn->relayout_filter) {
    AXLE_ASSIGN_OR_RETURN(relayout, CompileFilterToKrscPtx(plan, "filter_to_krsc", options));
  }
  return std::unique_ptr<ConvolutionThunk>(
      new ConvolutionThunkImpl(convolution.name(), std::move(values), std::move(kernel), cudnn,
                               std::move(relayout), backend));
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeConvolutionThunk(const HloInstruction& convolution,
                                                               GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(
      std::unique_ptr<ConvolutionThunk> thunk,
      MakeConvolutionThunkWithBackend(convolution, std::move(values), ConvolutionBackend::kAuto));
  return std::unique_ptr<GpuThunk>(std::move(thunk));
}

}  // namespace axle::gpu
