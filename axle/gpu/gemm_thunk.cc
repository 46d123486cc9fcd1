//===- gemm_thunk.cc - A dot on cuBLAS --------------------------------------===//
#include "axle/gpu/gemm_thunk.h"

#include <chrono>
#include <complex>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/cublas_library.h"
#include "axle/gpu/cuda_driver.h"
#include "axle/hlo/text/hlo_parser.h"

namespace axle::gpu {
namespace {

cudaDataType DataType(PrimitiveType type) {
  switch (type) {
    case F16:
      return CUDA_R_16F;
    case BF16:
      return CUDA_R_16BF;
    case F64:
      return CUDA_R_64F;
    case C64:
      return CUDA_C_32F;
    case C128:
      return CUDA_C_64F;
    case S8:
      return CUDA_R_8I;
    case S32:
      return CUDA_R_32I;
    default:
      return CUDA_R_32F;
  }
}

cublasComputeType_t ComputeType(GemmCompute compute) {
  switch (compute) {
    case GemmCompute::kTf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GemmCompute::kF64:
      return CUBLAS_COMPUTE_64F;
    case GemmCompute::kS32:
      return CUBLAS_COMPUTE_32I;
    case GemmCompute::kF32:
      break;
  }
  return CUBLAS_COMPUTE_32F;
}

// alpha = 1 and beta = 0 in the scaling type of the compute type (complex
// for complex results).
struct Scalars {
  alignas(16) unsigned char alpha[16] = {};
  alignas(16) unsigned char beta[16] = {};
};
template <typename T>
Scalars MakeScalars() {
  Scalars scalars;
  const T one(1);
  const T zero(0);
  static_assert(sizeof(T) <= sizeof(scalars.alpha));
  std::memcpy(scalars.alpha, &one, sizeof(T));
  std::memcpy(scalars.beta, &zero, sizeof(T));
  return scalars;
}
Scalars ScalarsOf(const GemmPlan& plan) {
  if (plan.c_type == C64) return MakeScalars<std::complex<float>>();
  if (plan.c_type == C128) return MakeScalars<std::complex<double>>();
  switch (plan.compute) {
    case GemmCompute::kF64:
      return MakeScalars<double>();
    case GemmCompute::kS32:
      return MakeScalars<int32_t>();
    default:
      return MakeScalars<float>();
  }
}

class GemmThunk : public GpuThunk {
 public:
  GemmThunk(std::string name, GemmPlan plan, GpuThunkValues values)
      : GpuThunk(std::move(name)),
        plan_(plan),
        values_(std::move(values)),
        scalars_(ScalarsOf(plan_)) {}

  absl::Status Initialize(const CudaDevice& device) override {
    auto handle = CublasHandle::ForDevice(device);
    if (!handle.ok()) {
      return absl::Status(handle.status().code(),
                          absl::StrCat(name(), ": ", handle.status().message()));
    }
    handle_ = *handle;
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (handle_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(name(), ": the gemm thunk was not initialized"));
    }
    if (values_.operands.size() != 2 || values_.outputs.size() != 1) {
      return absl::InternalError(absl::StrCat(name(),
                                              ": a gemm thunk needs 2 operands and 1 "
                                              "output, got ",
                                              values_.operands.size(), " and ",
                                              values_.outputs.size()));
    }
    if (plan_.output_elements() == 0) return absl::OkStatus();
    if (context.device == nullptr || context.stream == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(name(), ": a run without a device or stream"));
    }
    CudaDevice::ScopedActivation activation(*context.device);
    const se::DeviceMemoryBase& output = context.buffer(values_.outputs[0]);
    if (plan_.k == 0) {  // nothing to contract: zeros
      se::DeviceMemoryBase target = output;
      return Annotate(context.stream->Memset8(&target, 0, output.size()));
    }
    const CUdeviceptr lhs = context.address(values_.operands[0]);
    const CUdeviceptr rhs = context.address(values_.operands[1]);
    const CUdeviceptr a = plan_.swap_operands ? rhs : lhs;
    const CUdeviceptr b = plan_.swap_operands ? lhs : rhs;
    const bool has_workspace = !context.scratch.is_null() && context.scratch.size() > 0;
    auto lock = handle_->Acquire(context.stream->stream(),
                                 has_workspace ? DevicePointer(context.scratch) : 0,
                                 has_workspace ? context.scratch.size() : 0, CUBLAS_DEFAULT_MATH);
    if (!lock.ok()) return Annotate(lock.status());
    const CublasLibrary& library = handle_->library();
    return Annotate(library.ToStatus(
        library.cublasGemmStridedBatchedEx(
            (*lock)->get(), plan_.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
            plan_.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(plan_.m),
            static_cast<int>(plan_.n), static_cast<int>(plan_.k), scalars_.alpha, DeviceAddress(a),
            DataType(plan_.a_type), static_cast<int>(plan_.lda), plan_.stride_a, DeviceAddress(b),
            DataType(plan_.b_type), static_cast<int>(plan_.ldb), plan_.stride_b, scalars_.beta,
            DeviceAddress(DevicePointer(output)), DataType(plan_.c_type),
            static_cast<int>(plan_.ldc), plan_.stride_c, static_cast<int>(plan_.batch),
            ComputeType(plan_.compute), CUBLAS_GEMM_DEFAULT),
        absl::StrCat("cublasGemmStridedBatchedEx (", plan_.ToString(), ")")));
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  int64_t scratch_bytes() const override {
    return plan_.output_elements() == 0 || plan_.k == 0 ? 0 : GemmWorkspaceBytes(plan_);
  }

 private:
  absl::Status Annotate(absl::Status status) const {
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(name(), ": ", status.message()));
  }

  GemmPlan plan_;
  GpuThunkValues values_;
  Scalars scalars_;
  CublasHandle* handle_ = nullptr;
};

// Frees device memory allocated with cuMemAlloc.
class DeviceBuffer {
 public:
  DeviceBuffer(const CudaDriver& driver, CUdeviceptr pointer, uint64_t size)
      : driver_(driver), pointer_(pointer), size_(size) {}
  ~DeviceBuffer() {
    if (pointer_ != 0) driver_.cuMemFree(pointer_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  se::DeviceMemoryBase memory() const {
    return se::DeviceMemoryBase(DeviceAddress(pointer_), size_);
  }
  CUdeviceptr pointer() const { return pointer_; }

 private:
  const CudaDriver& driver_;
  CUdeviceptr pointer_;
  uint64_t size_;
};

absl::StatusOr<std::unique_ptr<DeviceBuffer>> AllocateBuffer(const CudaDriver& driver,
                                                             uint64_t size) {
  CUdeviceptr pointer = 0;
  AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuMemAlloc(&pointer, size),
                            absl::StrCat("cuMemAlloc of ", size, " bytes"));
  return std::make_unique<DeviceBuffer>(driver, pointer, size);
}

}  // namespace

int64_t GemmWorkspaceBytes(const GemmPlan& plan) {
  const double work = static_cast<double>(plan.m) * static_cast<double>(plan.n) *
                      static_cast<double>(plan.k) * static_cast<double>(plan.batch);
  return work >= static_cast<double>(int64_t{1} << 27) ? int64_t{32} << 20 : int64_t{4} << 20;
}

std::unique_ptr<GpuThunk> MakeGemmThunk(std::string name, const GemmPlan& plan,
                                        GpuThunkValues values) {
  return std::make_unique<GemmThunk>(std::move(name), plan, std::move(values));
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeGemmThunk(const HloInstruction& dot,
                                                        GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(GemmPlan plan, MakeGemmPlan(dot));
  AXLE_RETURN_IF_ERROR(CheckThunkValues(dot, values, 2, 1));
  return MakeGemmThunk(dot.name(), plan, std::move(values));
}

std::string GemmBenchmark::ToString() const {
  return absl::StrFormat(
      "gemm thunk %.3f ms (%.1f TFLOP/s), cublasSgemm %.3f ms (%.1f TFLOP/s): %.1f%% of cuBLAS",
      thunk_seconds * 1e3, thunk_tflops, direct_seconds * 1e3, direct_tflops,
      thunk_seconds > 0 ? 100.0 * direct_seconds / thunk_seconds : 0.0);
}

absl::StatusOr<GemmBenchmark> BenchmarkGemm(const CudaDevice& device, CudaStream* stream, int64_t m,
                                            int64_t n, int64_t k, int iterations) {
  if (m <= 0 || n <= 0 || k <= 0 || iterations <= 0) {
    return absl::InvalidArgumentError("BenchmarkGemm: sizes and iterations must be positive");
  }
  const std::string text = absl::StrFormat(
      "HloModule bench\nENTRY e {\n  a = f32[%d,%d]{1,0} parameter(0)\n"
      "  b = f32[%d,%d]{1,0} parameter(1)\n"
      "  ROOT d = f32[%d,%d]{1,0} dot(a, b), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}\n}\n",
      m, k, k, n, m, n);
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseAndReturnUnverifiedModule(text));
  const HloInstruction& dot = *module->entry_computation()->root_instruction();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<GpuThunk> thunk,
                        MakeGemmThunk(dot, GpuThunkValues{{0, 1}, {2}}));
  AXLE_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  CudaDevice::ScopedActivation activation(device);
  AXLE_RETURN_IF_ERROR(thunk->Initialize(device));
  const uint64_t f32 = sizeof(float);
  AXLE_ASSIGN_OR_RETURN(auto lhs, AllocateBuffer(*driver, m * k * f32));
  AXLE_ASSIGN_OR_RETURN(auto rhs, AllocateBuffer(*driver, k * n * f32));
  AXLE_ASSIGN_OR_RETURN(auto out, AllocateBuffer(*driver, m * n * f32));
  AXLE_ASSIGN_OR_RETURN(auto scratch,
                        AllocateBuffer(*driver, static_cast<uint64_t>(thunk->scratch_bytes())));
  for (DeviceBuffer* buffer : {lhs.get(), rhs.get()}) {
    se::DeviceMemoryBase memory = buffer->memory();
    AXLE_RETURN_IF_ERROR(stream->Memset8(&memory, 0x3c, memory.size()));  // about 0.0115f
  }
  std::vector<se::DeviceMemoryBase> buffers = {lhs->memory(), rhs->memory(), out->memory()};
  GpuThunkContext context;
  context.device = &device;
  context.stream = stream;
  context.buffers = buffers;
  context.scratch = scratch->memory();

  AXLE_ASSIGN_OR_RETURN(CublasHandle * handle, CublasHandle::ForDevice(device));
  const float alpha = 1, beta = 0;
  auto direct = [&]() -> absl::Status {
    auto lock = handle->Acquire(stream->stream(), 0, 0, CUBLAS_DEFAULT_MATH);
    if (!lock.ok()) return lock.status();
    const CublasLibrary& library = handle->library();
    // Row-major C = A B as column-major C^T = B^T A^T.
    return library.ToStatus(
        library.cublasSgemm(
            (*lock)->get(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
            static_cast<int>(k), &alpha, static_cast<const float*>(DeviceAddress(rhs->pointer())),
            static_cast<int>(n), static_cast<const float*>(DeviceAddress(lhs->pointer())),
            static_cast<int>(k), &beta, static_cast<float*>(DeviceAddress(out->pointer())),
            static_cast<int>(n)),
        "cublasSgemm");
  };
  auto time = [&](auto&& call) -> absl::StatusOr<double> {
    for (int i = 0; i < 3; ++i) AXLE_RETURN_IF_ERROR(call());  // warm-up
    AXLE_RETURN_IF_ERROR(stream->Synchronize());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) AXLE_RETURN_IF_ERROR(call());
    AXLE_RETURN_IF_ERROR(stream->Synchronize());
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    return elapsed.count() / iterations;
  };
  GemmBenchmark result;
  // Interleaved twice, the better of each (clocks settle during the first).
  for (int round = 0; round < 2; ++round) {
    AXLE_ASSIGN_OR_RETURN(double thunk_time, time([&] { return thunk->Execute(context); }));
    AXLE_ASSIGN_OR_RETURN(double direct_time, time(direct));
    if (round == 0 || thunk_time < result.thunk_seconds) result.thunk_seconds = thunk_time;
    if (round == 0 || direct_time < result.direct_seconds) result.direct_seconds = direct_time;
  }
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  result.thunk_tflops = flops / result.thunk_seconds * 1e-12;
  result.direct_tflops = flops / result.direct_seconds * 1e-12;
  return result;
}

}  // namespace axle::gpu
