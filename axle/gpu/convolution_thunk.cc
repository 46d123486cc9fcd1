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

#include <array>
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
#include "axle/base/environment_options.h"
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

// cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionBwdDataAlgoPerf_t and
// cudnnConvolutionBwdFilterAlgoPerf_t (one layout).
constexpr int kCudnnDeterministic = 1;
struct CudnnAlgoPerf {
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
  // The three algorithm queries take (handle, four descriptors, requested,
  // returned, perfs): forward x, w, conv, y; backward data w, dy, conv, dx;
  // backward filter x, dy, conv, dw.
  using AlgorithmQuery = CudnnStatus (*)(CudnnHandle, CudnnDescriptor, CudnnDescriptor,
                                         CudnnDescriptor, CudnnDescriptor, int, int*,
                                         CudnnAlgoPerf*);
  AlgorithmQuery get_forward_algorithm_v7 = nullptr;
  AlgorithmQuery get_backward_data_algorithm_v7 = nullptr;
  AlgorithmQuery get_backward_filter_algorithm_v7 = nullptr;
  // The three calls take (handle, alpha, descriptor a, a, descriptor b, b,
  // conv, algorithm, workspace, its bytes, beta, descriptor c, c): forward
  // x, w -> y; backward data w, dy -> dx; backward filter x, dy -> dw.
  using ConvolutionCall = CudnnStatus (*)(CudnnHandle, const void*, CudnnDescriptor, const void*,
                                          CudnnDescriptor, const void*, CudnnDescriptor, int, void*,
                                          size_t, const void*, CudnnDescriptor, void*);
  ConvolutionCall forward = nullptr;
  ConvolutionCall backward_data = nullptr;
  ConvolutionCall backward_filter = nullptr;

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
  const std::string from_environment = EnvironmentOptions::Read().cudnn;
  const std::string library = !from_environment.empty() && from_environment != "1"
                                  ? from_environment
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
  resolve(cudnn->get_backward_data_algorithm_v7, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  resolve(cudnn->backward_data, "cudnnConvolutionBackwardData");
  resolve(cudnn->get_backward_filter_algorithm_v7, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  resolve(cudnn->backward_filter, "cudnnConvolutionBackwardFilter");
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
    // The heuristics' best deterministic algorithm whose workspace fits the
    // scratch (runs repeat bit for bit), else their best that fits.
    CudnnHandle handle = nullptr;
    AXLE_RETURN_IF_ERROR(c.Check(c.create(&handle), "cudnnCreate", name()));
    constexpr int kRequested = 8;
    CudnnAlgoPerf perfs[kRequested] = {};
    int returned = 0;
    absl::Status status;
    switch (k.kind) {
      case CudnnConvKind::kForward:
        status = c.Check(c.get_forward_algorithm_v7(handle, x_, w_, convolution_, y_, kRequested,
                                                    &returned, perfs),
                         "cudnnGetConvolutionForwardAlgorithm_v7", name());
        break;
      case CudnnConvKind::kBackwardData:
        status = c.Check(c.get_backward_data_algorithm_v7(handle, w_, y_, convolution_, x_,
                                                          kRequested, &returned, perfs),
                         "cudnnGetConvolutionBackwardDataAlgorithm_v7", name());
        break;
      case CudnnConvKind::kBackwardFilter:
        status = c.Check(c.get_backward_filter_algorithm_v7(handle, x_, y_, convolution_, w_,
                                                            kRequested, &returned, perfs),
                         "cudnnGetConvolutionBackwardFilterAlgorithm_v7", name());
        break;
    }
    c.destroy(handle);
    AXLE_RETURN_IF_ERROR(status);
    const CudnnAlgoPerf* chosen = nullptr;
    for (int i = 0; i < returned; ++i) {
      if (perfs[i].status != kCudnnSuccess ||
          static_cast<int64_t>(perfs[i].memory) > k.workspace_limit) {
        continue;
      }
      if (chosen == nullptr || (chosen->determinism != kCudnnDeterministic &&
                                perfs[i].determinism == kCudnnDeterministic)) {
        chosen = &perfs[i];
      }
    }
    if (chosen != nullptr) {
      algorithm_ = chosen->algo;
      workspace_bytes_ = chosen->memory;
      use_cudnn_ = true;
      return absl::OkStatus();
    }
    return absl::UnimplementedError(absl::StrCat(name(), ": no ", CudnnConvKindName(k.kind),
                                                 " algorithm of the ", returned, " proposed fits ",
                                                 k.workspace_limit, " bytes of workspace"));
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
    const CudnnConvKind kind = config_->kind;
    // The filter: the rhs, or the result of a backward filter; through the
    // scratch where its layout is not cuDNN's.
    const bool filter_is_result = kind == CudnnConvKind::kBackwardFilter;
    const int64_t filter_value = filter_is_result ? values_.outputs[0] : values_.operands[1];
    CUdeviceptr filter = context.address(filter_value);
    if (relayout_.has_value()) {
      filter = DevicePointer(context.scratch);
      if (!filter_is_result) AXLE_RETURN_IF_ERROR(RelayoutFilter(context, filter_value, true));
    }
    void* lhs = DeviceAddress(context.address(values_.operands[0]));
    void* rhs = DeviceAddress(context.address(values_.operands[1]));
    void* result = DeviceAddress(context.address(values_.outputs[0]));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      AXLE_ASSIGN_OR_RETURN(CudnnHandle handle, HandleFor(context.stream->stream()));
      const float alpha = 1.0f;
      const float beta = 0.0f;
      void* workspace =
          workspace_bytes_ > 0 ? DeviceAddress(DevicePointer(context.scratch) + offset) : nullptr;
      CudnnStatus status = kCudnnSuccess;
      switch (kind) {
        case CudnnConvKind::kForward:
          status = cudnn_->forward(handle, &alpha, x_, lhs, w_, DeviceAddress(filter), convolution_,
                                   algorithm_, workspace, workspace_bytes_, &beta, y_, result);
          break;
        case CudnnConvKind::kBackwardData:
          status = cudnn_->backward_data(handle, &alpha, w_, DeviceAddress(filter), y_, lhs,
                                         convolution_, algorithm_, workspace, workspace_bytes_,
                                         &beta, x_, result);
          break;
        case CudnnConvKind::kBackwardFilter:
          status = cudnn_->backward_filter(handle, &alpha, x_, lhs, y_, rhs, convolution_,
                                           algorithm_, workspace, workspace_bytes_, &beta, w_,
                                           DeviceAddress(filter));
          break;
      }
      AXLE_RETURN_IF_ERROR(cudnn_->Check(status, CudnnConvKindName(kind), name()));
    }
    if (relayout_.has_value() && filter_is_result) {
      AXLE_RETURN_IF_ERROR(RelayoutFilter(context, filter_value, false));
    }
    return absl::OkStatus();
  }

  // The filter copied between its HLO buffer and the scratch: into the
  // scratch (cuDNN's layout) when `into_scratch`, else out of it.
  absl::Status RelayoutFilter(const GpuThunkContext& context, int64_t value,
                              bool into_scratch) const {
    se::DeviceMemoryBase buffers[] = {context.buffer(value), context.scratch};
    if (!into_scratch) std::swap(buffers[0], buffers[1]);
    return Named(LaunchKernel(context.stream, relayout_function_, relayout_->grid, relayout_->block,
                              buffers),
                 absl::StrCat(name(), ": filter relayout"));
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

absl::StatusOr<PtxKernel> CompileCudnnFilterRelayoutPtx(const CudnnConvConfig& config,
                                                        absl::string_view kernel_name,
                                                        const PtxOptions& options) {
  // Threads walk cuDNN's filter in its memory order: (k, c, r, s) for KCRS,
  // (k, r, s, c) for KRSC.
  const std::array<int, 4> order =
      config.filter_nhwc ? std::array<int, 4>{0, 2, 3, 1} : std::array<int, 4>{0, 1, 2, 3};
  const std::array<int64_t, 4> dense = CudnnFilterStrides(config);
  std::array<int64_t, 4> dims{}, hlo{}, cudnn{};
  for (int i = 0; i < 4; ++i) {
    dims[i] = config.w_dims[order[i]];
    hlo[i] = config.filter_strides[order[i]];
    cudnn[i] = dense[order[i]];
  }
  const int64_t bytes = primitive_util::ByteWidth(config.type);
  // A backward filter's result is written to the scratch and copied out.
  if (config.kind == CudnnConvKind::kBackwardFilter) {
    return CompileStridedCopyPtx(dims, cudnn, hlo, bytes, kernel_name, options);
  }
  return CompileStridedCopyPtx(dims, hlo, cudnn, bytes, kernel_name, options);
}

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
    AXLE_ASSIGN_OR_RETURN(relayout,
                          CompileCudnnFilterRelayoutPtx(*cudnn, "filter_relayout", options));
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
