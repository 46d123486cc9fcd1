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

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/convolution_kernel.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/gpu/cudnn_convolution.h"
#include "axle/gpu/dynamic_library.h"
#include "axle/gpu/tf32.h"
#include "axle/hlo/ir/hlo_instructions.h"

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
constexpr int kCudnnDefaultMath = 0;
constexpr int kCudnnTensorOpMath = 1;
constexpr int kCudnnFmaMath = 3;
static_assert(static_cast<int>(CudnnMath::kDefault) == kCudnnDefaultMath &&
              static_cast<int>(CudnnMath::kTensorOp) == kCudnnTensorOpMath &&
              static_cast<int>(CudnnMath::kFma) == kCudnnFmaMath);

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
  // The three timed searches (cudnnFind*AlgorithmEx), optional (null when
  // the library lacks them): (handle, descriptor a, a, descriptor b, b,
  // conv, descriptor c, c, requested, returned, perfs, workspace, its
  // bytes), a, b and c as for the calls.
  using AlgorithmSearch = CudnnStatus (*)(CudnnHandle, CudnnDescriptor, const void*,
                                          CudnnDescriptor, const void*, CudnnDescriptor,
                                          CudnnDescriptor, void*, int, int*, CudnnAlgoPerf*, void*,
                                          size_t);
  AlgorithmSearch find_forward = nullptr;
  AlgorithmSearch find_backward_data = nullptr;
  AlgorithmSearch find_backward_filter = nullptr;

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
  AXLE_ASSIGN_OR_RETURN(void* handle, OpenLibrary(library, "cuDNN", "AXLE_CUDNN"));
  auto* cudnn = new Cudnn;  // lives with the process, as the library does
  SymbolResolver resolve(handle, library);
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
  if (!resolve.missing().empty()) {
    delete cudnn;
    return absl::UnavailableError(absl::StrCat("cuDNN unavailable: ", resolve.missing()));
  }
  cudnn->find_forward = reinterpret_cast<Cudnn::AlgorithmSearch>(
      dlsym(handle, "cudnnFindConvolutionForwardAlgorithmEx"));
  cudnn->find_backward_data = reinterpret_cast<Cudnn::AlgorithmSearch>(
      dlsym(handle, "cudnnFindConvolutionBackwardDataAlgorithmEx"));
  cudnn->find_backward_filter = reinterpret_cast<Cudnn::AlgorithmSearch>(
      dlsym(handle, "cudnnFindConvolutionBackwardFilterAlgorithmEx"));
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

// What autotuning chose for a convolution key (CudnnConvKey) on a device:
// cuDNN's fastest deterministic algorithm by cudnnFind*AlgorithmEx, and
// (ConvolutionBackend::kFastest) whether Axle's kernel beat it.
struct CudnnTuning {
  bool searched = false;  // algorithm, workspace and math_type set
  int algorithm = 0;
  size_t workspace = 0;
  int math_type = 0;
  bool compared = false;  // kernel_faster set
  bool kernel_faster = false;
  float cudnn_ms = 0;
  float kernel_ms = 0;
};

// The process's tuning results. The first result stored for a key is the
// one every thunk uses, so that one convolution computes alike (bit for
// bit) in every executable of the process.
class CudnnTuningCache {
 public:
  static CudnnTuningCache& Get() {
    static CudnnTuningCache* cache = new CudnnTuningCache;
    return *cache;
  }
  CudnnTuning Find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = entries_.find(key);
    return found == entries_.end() ? CudnnTuning() : found->second;
  }
  // Merges what `tuning` found into the key's entry (keeping what was
  // there), and returns the entry.
  CudnnTuning Merge(const std::string& key, const CudnnTuning& tuning) {
    std::lock_guard<std::mutex> lock(mutex_);
    CudnnTuning& entry = entries_[key];
    if (!entry.searched && tuning.searched) {
      entry.searched = true;
      entry.algorithm = tuning.algorithm;
      entry.workspace = tuning.workspace;
      entry.math_type = tuning.math_type;
    }
    if (!entry.compared && tuning.compared) {
      entry.compared = true;
      entry.kernel_faster = tuning.kernel_faster;
      entry.cudnn_ms = tuning.cudnn_ms;
      entry.kernel_ms = tuning.kernel_ms;
    }
    return entry;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, CudnnTuning> entries_;
};

// Device memory for autotuning, freed with the object.
class TuningMemory {
 public:
  explicit TuningMemory(const CudaDevice& device) : device_(device) {}
  ~TuningMemory() {
    CudaDevice::ScopedActivation activation(device_);
    for (CUdeviceptr pointer : pointers_) device_.driver().cuMemFree(pointer);
  }
  TuningMemory(const TuningMemory&) = delete;
  TuningMemory& operator=(const TuningMemory&) = delete;

  // `bytes` (at least 256) zeroed on `stream`.
  absl::StatusOr<se::DeviceMemoryBase> Allocate(int64_t bytes, CudaStream& stream) {
    const CudaDriver& driver = device_.driver();
    CudaDevice::ScopedActivation activation(device_);
    bytes = std::max<int64_t>(bytes, 256);
    CUdeviceptr pointer = 0;
    AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuMemAlloc(&pointer, static_cast<size_t>(bytes)),
                              "cuMemAlloc (convolution autotuning)");
    pointers_.push_back(pointer);
    se::DeviceMemoryBase memory(DeviceAddress(pointer), static_cast<uint64_t>(bytes));
    AXLE_RETURN_IF_ERROR(stream.Memset8(&memory, 0, static_cast<uint64_t>(bytes)));
    return memory;
  }

 private:
  const CudaDevice& device_;
  std::vector<CUdeviceptr> pointers_;
};

// Milliseconds on the device per run of `enqueue` (work on `stream`): one
// run to warm up, then the fastest of kTimedRuns, each between two events.
absl::StatusOr<float> DeviceMilliseconds(const CudaDevice& device, CudaStream& stream,
                                         const std::function<absl::Status()>& enqueue) {
  constexpr int kTimedRuns = 5;
  const CudaDriver& driver = device.driver();
  if (driver.cuEventElapsedTime == nullptr) {
    return absl::UnavailableError("the CUDA driver has no cuEventElapsedTime");
  }
  CudaDevice::ScopedActivation activation(device);
  CUevent events[2] = {nullptr, nullptr};
  absl::Status status;
  for (CUevent& event : events) {
    if (status.ok()) {
      status = driver.ToStatus(driver.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
    }
  }
  float best = 0;
  if (status.ok()) status = enqueue();
  for (int run = 0; run < kTimedRuns && status.ok(); ++run) {
    status = driver.ToStatus(driver.cuEventRecord(events[0], stream.stream()), "cuEventRecord");
    if (status.ok()) status = enqueue();
    if (status.ok()) {
      status = driver.ToStatus(driver.cuEventRecord(events[1], stream.stream()), "cuEventRecord");
    }
    if (status.ok()) {
      status = driver.ToStatus(driver.cuEventSynchronize(events[1]), "cuEventSynchronize");
    }
    float ms = 0;
    if (status.ok()) {
      status = driver.ToStatus(driver.cuEventElapsedTime(&ms, events[0], events[1]),
                               "cuEventElapsedTime");
    }
    if (status.ok() && (run == 0 || ms < best)) best = ms;
  }
  absl::Status synchronized = stream.Synchronize();
  for (CUevent event : events) {
    if (event != nullptr) driver.cuEventDestroy(event);
  }
  AXLE_RETURN_IF_ERROR(status);
  AXLE_RETURN_IF_ERROR(synchronized);
  return best;
}

class ConvolutionThunkImpl : public ConvolutionThunk {
 public:
  // `operand_bytes`: the lhs's, the rhs's and the result's (autotuning
  // allocates as much).
  ConvolutionThunkImpl(std::string name, GpuThunkValues values, PtxKernel kernel,
                       std::optional<CudnnConvConfig> cudnn,
                       std::optional<PtxKernel> filter_relayout, ConvolutionBackend backend,
                       std::array<int64_t, 3> operand_bytes)
      : ConvolutionThunk(std::move(name)),
        values_(std::move(values)),
        kernel_(std::move(kernel)),
        config_(cudnn),
        relayout_(std::move(filter_relayout)),
        backend_(backend),
        operand_bytes_(operand_bytes) {}

  ~ConvolutionThunkImpl() override {
    if (cudnn_ == nullptr || device_ == nullptr) return;
    CudaDevice::ScopedActivation activation(*device_);
    if (handle_ != nullptr) cudnn_->destroy(handle_);
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
      if (!status.ok()) {
        if (backend_ == ConvolutionBackend::kCudnn) return status;
        cudnn_fallback_reason_ = std::string(status.message());
        use_cudnn_ = false;
      }
    }
    if (kernel_.grid == 0) return absl::OkStatus();
    const bool compare = use_cudnn_ && backend_ == ConvolutionBackend::kFastest;
    if (use_cudnn_ && !compare) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<CudaModule>> module = CudaModule::LoadPtx(device, kernel_.ptx);
    if (!module.ok()) {
      // Only compared with cuDNN: cuDNN runs it.
      if (compare) return absl::OkStatus();
      return Named(module.status(), absl::StrCat(name(), ": loading its convolution kernel"));
    }
    module_ = *std::move(module);
    absl::StatusOr<CUfunction> function = module_->GetFunction(kernel_.name);
    if (!function.ok()) {
      if (compare) return absl::OkStatus();
      return function.status();
    }
    function_ = *function;
    // A failed comparison leaves cuDNN's algorithm in place.
    if (compare) CompareWithKernel(device).IgnoreError();
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (use_cudnn_) return ExecuteCudnn(context);
    return ExecuteKernel(context);
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  int64_t scratch_bytes() const override {
    return config_.has_value() ? config_->scratch_bytes() : 0;
  }
  // Either backend enqueues work that depends on the buffers' addresses
  // alone: a kernel, or (with cuDNN's handle, algorithm and workspace
  // fixed in Initialize) cuDNN's kernels and the filter relayout.
  bool CapturableInGraph() const override { return true; }
  bool uses_cudnn() const override { return use_cudnn_; }
  const std::string& cudnn_fallback_reason() const override { return cudnn_fallback_reason_; }
  const std::string& tuning_note() const override { return tuning_note_; }
  bool cudnn_allows_tf32() const override { return config_.has_value() && config_->allow_tf32; }

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
    // f32: FMA (full f32), or TF32 on tensor cores where allowed (cuDNN's
    // default math); 16-bit types on tensor cores (CudnnMathFor).
    math_type_ = static_cast<int>(CudnnMathFor(k));
    AXLE_RETURN_IF_ERROR(
        c.Check(c.set_math_type(convolution_, math_type_), "cudnnSetConvolutionMathType", name()));
    AXLE_RETURN_IF_ERROR(c.Check(c.create(&handle_), "cudnnCreate", name()));
    // The heuristics' best deterministic algorithm whose workspace fits the
    // scratch (runs repeat bit for bit), else their best that fits.
    constexpr int kRequested = 8;
    CudnnAlgoPerf perfs[kRequested] = {};
    int returned = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      CudnnHandle handle = handle_;
      switch (k.kind) {
        case CudnnConvKind::kForward:
          AXLE_RETURN_IF_ERROR(c.Check(c.get_forward_algorithm_v7(handle, x_, w_, convolution_, y_,
                                                                  kRequested, &returned, perfs),
                                       "cudnnGetConvolutionForwardAlgorithm_v7", name()));
          break;
        case CudnnConvKind::kBackwardData:
          AXLE_RETURN_IF_ERROR(
              c.Check(c.get_backward_data_algorithm_v7(handle, w_, y_, convolution_, x_, kRequested,
                                                       &returned, perfs),
                      "cudnnGetConvolutionBackwardDataAlgorithm_v7", name()));
          break;
        case CudnnConvKind::kBackwardFilter:
          AXLE_RETURN_IF_ERROR(
              c.Check(c.get_backward_filter_algorithm_v7(handle, x_, y_, convolution_, w_,
                                                         kRequested, &returned, perfs),
                      "cudnnGetConvolutionBackwardFilterAlgorithm_v7", name()));
          break;
      }
    }
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
    if (chosen == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat(name(), ": no ", CudnnConvKindName(k.kind), " algorithm of the ", returned,
                       " proposed fits ", k.workspace_limit, " bytes of workspace"));
    }
    algorithm_ = chosen->algo;
    workspace_bytes_ = chosen->memory;
    use_cudnn_ = true;
    // Then the fastest by timing, once per shape in the process; the
    // heuristics' choice stays where the search fails.
    key_ = absl::StrCat(device.ordinal(), " ", CudnnConvKey(k));
    CudnnTuning tuning = CudnnTuningCache::Get().Find(key_);
    if (!tuning.searched) {
      absl::StatusOr<CudnnTuning> searched = SearchAlgorithm(device);
      if (!searched.ok()) {
        tuning_note_ =
            absl::StrCat("cuDNN's heuristics (search failed: ", searched.status().message(), ")");
        return absl::OkStatus();
      }
      tuning = CudnnTuningCache::Get().Merge(key_, *searched);
    }
    if (tuning.searched) return ApplyAlgorithm(tuning);
    return absl::OkStatus();
  }

  // Sets the algorithm tuning chose (its math type on the descriptor).
  absl::Status ApplyAlgorithm(const CudnnTuning& tuning) {
    if (tuning.math_type != math_type_) {
      AXLE_RETURN_IF_ERROR(cudnn_->Check(cudnn_->set_math_type(convolution_, tuning.math_type),
                                         "cudnnSetConvolutionMathType", name()));
      math_type_ = tuning.math_type;
    }
    algorithm_ = tuning.algorithm;
    workspace_bytes_ = tuning.workspace;
    tuning_note_ = absl::StrCat("cuDNN algorithm ", algorithm_, " by cudnnFind*AlgorithmEx");
    return absl::OkStatus();
  }

  // Device memory for the operands, result and scratch, zeroed, in a
  // context whose buffers are at the thunk's value ids.
  struct TuningRun {
    std::unique_ptr<CudaStream> stream;
    std::unique_ptr<TuningMemory> memory;
    std::vector<se::DeviceMemoryBase> buffers;
    GpuThunkContext context;
  };
  absl::StatusOr<std::unique_ptr<TuningRun>> MakeTuningRun(const CudaDevice& device) const {
    auto run = std::make_unique<TuningRun>();
    AXLE_ASSIGN_OR_RETURN(run->stream, CudaStream::Create(device));
    run->memory = std::make_unique<TuningMemory>(device);
    const int64_t ids[3] = {values_.operands[0], values_.operands[1], values_.outputs[0]};
    std::map<int64_t, int64_t> bytes;
    for (int i = 0; i < 3; ++i) bytes[ids[i]] = std::max(bytes[ids[i]], operand_bytes_[i]);
    run->buffers.resize(static_cast<size_t>(bytes.rbegin()->first + 1));
    for (const auto& [id, size] : bytes) {
      AXLE_ASSIGN_OR_RETURN(run->buffers[id], run->memory->Allocate(size, *run->stream));
    }
    if (scratch_bytes() > 0) {
      AXLE_ASSIGN_OR_RETURN(run->context.scratch,
                            run->memory->Allocate(scratch_bytes(), *run->stream));
    }
    run->context.device = &device;
    run->context.stream = run->stream.get();
    run->context.buffers = run->buffers;
    AXLE_RETURN_IF_ERROR(run->stream->Synchronize());
    return run;
  }

  // cudnnFind*AlgorithmEx's fastest deterministic algorithm whose workspace
  // fits, of the thunk's math or the default (full f32 runs it with FMA
  // math all the same: no TF32).
  absl::StatusOr<CudnnTuning> SearchAlgorithm(const CudaDevice& device) {
    const Cudnn& c = *cudnn_;
    const CudnnConvConfig& k = *config_;
    const Cudnn::AlgorithmSearch search = k.kind == CudnnConvKind::kForward ? c.find_forward
                                          : k.kind == CudnnConvKind::kBackwardData
                                              ? c.find_backward_data
                                              : c.find_backward_filter;
    if (search == nullptr) return absl::UnavailableError("no cudnnFind*AlgorithmEx");
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<TuningRun> run, MakeTuningRun(device));
    const GpuThunkContext& context = run->context;
    void* lhs = DeviceAddress(context.address(values_.operands[0]));
    void* rhs = DeviceAddress(context.address(values_.operands[1]));
    void* result = DeviceAddress(context.address(values_.outputs[0]));
    void* workspace = DeviceAddress(DevicePointer(context.scratch) + k.workspace_offset());
    const auto workspace_size = static_cast<size_t>(k.workspace_limit);
    constexpr int kRequested = 10;
    CudnnAlgoPerf perfs[kRequested] = {};
    int returned = 0;
    {
      CudaDevice::ScopedActivation activation(device);
      std::lock_guard<std::mutex> lock(mutex_);
      CudnnHandle handle = handle_;
      AXLE_RETURN_IF_ERROR(
          c.Check(c.set_stream(handle, run->stream->stream()), "cudnnSetStream", name()));
      CudnnStatus status = kCudnnSuccess;
      switch (k.kind) {
        case CudnnConvKind::kForward:
          status = search(handle, x_, lhs, w_, rhs, convolution_, y_, result, kRequested, &returned,
                          perfs, workspace, workspace_size);
          break;
        case CudnnConvKind::kBackwardData:
          status = search(handle, w_, rhs, y_, lhs, convolution_, x_, result, kRequested, &returned,
                          perfs, workspace, workspace_size);
          break;
        case CudnnConvKind::kBackwardFilter:
          status = search(handle, x_, lhs, y_, rhs, convolution_, w_, result, kRequested, &returned,
                          perfs, workspace, workspace_size);
          break;
      }
      AXLE_RETURN_IF_ERROR(c.Check(status, "cudnnFind*AlgorithmEx", name()));
    }
    AXLE_RETURN_IF_ERROR(run->stream->Synchronize());
    // Sorted fastest first.
    for (int i = 0; i < returned; ++i) {
      const CudnnAlgoPerf& perf = perfs[i];
      const bool full_f32 = k.type == F32 && !k.allow_tf32;
      const bool math_ok = perf.math_type == kCudnnDefaultMath ||
                           perf.math_type == (full_f32 ? kCudnnFmaMath : kCudnnTensorOpMath);
      if (perf.status != kCudnnSuccess || perf.determinism != kCudnnDeterministic || !math_ok ||
          static_cast<int64_t>(perf.memory) > k.workspace_limit) {
        continue;
      }
      CudnnTuning tuning;
      tuning.searched = true;
      tuning.algorithm = perf.algo;
      tuning.workspace = perf.memory;
      // Full f32 keeps FMA math whatever the search reports (no TF32).
      tuning.math_type = full_f32 ? kCudnnFmaMath : perf.math_type;
      return tuning;
    }
    return absl::NotFoundError(absl::StrCat("none of the ", returned,
                                            " algorithms timed is deterministic, of the "
                                            "thunk's math and within the workspace"));
  }

  // kFastest: cuDNN's algorithm (with the filter relayout) against Axle's
  // kernel, timed once per shape in the process; the kernel runs where it
  // was faster.
  absl::Status CompareWithKernel(const CudaDevice& device) {
    CudnnTuning tuning = CudnnTuningCache::Get().Find(key_);
    if (!tuning.compared) {
      AXLE_ASSIGN_OR_RETURN(std::unique_ptr<TuningRun> run, MakeTuningRun(device));
      CudnnTuning timed;
      timed.compared = true;
      absl::StatusOr<float> cudnn_ms =
          DeviceMilliseconds(device, *run->stream, [&] { return ExecuteCudnn(run->context); });
      if (!cudnn_ms.ok() && cudnn_ms.status().code() != absl::StatusCode::kUnavailable) {
        // cuDNN failed on the device: the kernel runs instead.
        use_cudnn_ = false;
        cudnn_fallback_reason_ = std::string(cudnn_ms.status().message());
        return cudnn_ms.status();
      }
      AXLE_RETURN_IF_ERROR(cudnn_ms.status());
      timed.cudnn_ms = *cudnn_ms;
      AXLE_ASSIGN_OR_RETURN(timed.kernel_ms, DeviceMilliseconds(device, *run->stream, [&] {
                              return ExecuteKernel(run->context);
                            }));
      timed.kernel_faster = timed.kernel_ms < timed.cudnn_ms;
      tuning = CudnnTuningCache::Get().Merge(key_, timed);
    }
    if (tuning.kernel_faster) {
      use_cudnn_ = false;
      cudnn_fallback_reason_ =
          absl::StrCat("Axle's kernel (", tuning.kernel_ms, " ms) timed faster than ",
                       CudnnConvKindName(config_->kind), " (", tuning.cudnn_ms, " ms)");
    }
    absl::StrAppend(&tuning_note_, "; timed against Axle's kernel: ", tuning.cudnn_ms, " ms and ",
                    tuning.kernel_ms, " ms");
    return absl::OkStatus();
  }

  absl::Status ExecuteKernel(const GpuThunkContext& context) const {
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
      CudnnHandle handle = handle_;
      AXLE_RETURN_IF_ERROR(cudnn_->Check(cudnn_->set_stream(handle, context.stream->stream()),
                                         "cudnnSetStream", name()));
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
  std::array<int64_t, 3> operand_bytes_;
  std::unique_ptr<CudaModule> relayout_module_;
  CUfunction relayout_function_ = nullptr;
  const CudaDevice* device_ = nullptr;
  std::unique_ptr<CudaModule> module_;
  CUfunction function_ = nullptr;

  bool use_cudnn_ = false;
  std::string cudnn_fallback_reason_;
  std::string tuning_note_;
  std::string key_;
  const Cudnn* cudnn_ = nullptr;
  // Made in Initialize; each call sets its stream with mutex_ held.
  CudnnHandle handle_ = nullptr;
  mutable std::mutex mutex_;
  CudnnDescriptor x_ = nullptr;
  CudnnDescriptor y_ = nullptr;
  CudnnDescriptor w_ = nullptr;
  CudnnDescriptor convolution_ = nullptr;
  int math_type_ = 0;
  int algorithm_ = 0;
  size_t workspace_bytes_ = 0;
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
  AXLE_RETURN_IF_ERROR(CheckThunkValues(convolution, values, 2, 1));
  AXLE_ASSIGN_OR_RETURN(ConvPlan plan, MakeConvPlan(convolution));
  std::optional<CudnnConvConfig> cudnn;
  if (backend == ConvolutionBackend::kCudnn) {
    AXLE_ASSIGN_OR_RETURN(cudnn, CudnnConvConfigFor(plan));
  } else if (backend != ConvolutionBackend::kKernel && CudnnEnabledByEnvironment()) {
    absl::StatusOr<CudnnConvConfig> config = CudnnConvConfigFor(plan);
    if (config.ok()) cudnn = *std::move(config);
  }
  // TF32 for f32 as for dots, as XLA:GPU (tf32.h): operand precisions
  // DEFAULT or HIGH, unless AXLE_GPU_TF32=0.
  if (cudnn.has_value() && cudnn->type == F32) {
    cudnn->allow_tf32 = Tf32Enabled() && ComputesInTf32(convolution);
  }
  AXLE_ASSIGN_OR_RETURN(PtxKernel kernel,
                        CompileConvolutionToPtx(plan, "convolution_kernel", options));
  const std::array<int64_t, 3> operand_bytes = {
      ShapeUtil::ByteSizeOfElements(convolution.operand(0)->shape()),
      ShapeUtil::ByteSizeOfElements(convolution.operand(1)->shape()),
      ShapeUtil::ByteSizeOfElements(convolution.shape())};
  std::optional<PtxKernel> relayout;
  if (cudnn.has_value() && cudnn->relayout_filter) {
    AXLE_ASSIGN_OR_RETURN(relayout,
                          CompileCudnnFilterRelayoutPtx(*cudnn, "filter_relayout", options));
  }
  return std::unique_ptr<ConvolutionThunk>(
      new ConvolutionThunkImpl(convolution.name(), std::move(values), std::move(kernel), cudnn,
                               std::move(relayout), backend, operand_bytes));
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeConvolutionThunk(const HloInstruction& convolution,
                                                               GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<ConvolutionThunk> thunk,
                        MakeConvolutionThunkWithBackend(convolution, std::move(values),
                                                        ConvolutionBackend::kFastest));
  return std::unique_ptr<GpuThunk>(std::move(thunk));
}

}  // namespace axle::gpu
