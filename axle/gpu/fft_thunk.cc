//===- fft_thunk.cc - kFft on the GPU through cuFFT -------------------------===//
#include "axle/gpu/fft_thunk.h"

#include <cufft.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/dynamic_library.h"
#include "axle/gpu/ptx_module.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

#ifndef AXLE_CUDA_LIBRARY_DIR
#define AXLE_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace axle::gpu {
namespace {

// The cuFFT functions the thunk calls, resolved from the library once.
struct Cufft {
  decltype(&cufftCreate) create = nullptr;
  decltype(&cufftMakePlanMany64) make_plan_many64 = nullptr;
  decltype(&cufftSetStream) set_stream = nullptr;
  decltype(&cufftDestroy) destroy = nullptr;
  decltype(&cufftExecC2C) exec_c2c = nullptr;
  decltype(&cufftExecZ2Z) exec_z2z = nullptr;
  decltype(&cufftExecR2C) exec_r2c = nullptr;
  decltype(&cufftExecD2Z) exec_d2z = nullptr;
  decltype(&cufftExecC2R) exec_c2r = nullptr;
  decltype(&cufftExecZ2D) exec_z2d = nullptr;

  static absl::StatusOr<const Cufft*> Get();
};

absl::StatusOr<const Cufft*> LoadCufft() {
  const std::string from_environment = EnvironmentOptions::Read().cufft;
  const std::string library =
      !from_environment.empty() ? from_environment : std::string("libcufft.so.12");
  absl::StatusOr<void*> handle = OpenLibrary(library, "cuFFT", "AXLE_CUFFT");
  // Not on the loader's path: the toolkit's library folder (where it was at
  // build time, then the usual one).
  for (const char* dir : {AXLE_CUDA_LIBRARY_DIR, "/usr/local/cuda/lib64"}) {
    if (handle.ok() || library.find('/') != std::string::npos) break;
    handle = OpenLibrary(absl::StrCat(dir, "/", library), "cuFFT", "AXLE_CUFFT");
  }
  if (!handle.ok()) return handle.status();
  auto* cufft = new Cufft;  // lives with the process, as the library does
  SymbolResolver resolve(*handle, library);
  resolve(cufft->create, "cufftCreate");
  resolve(cufft->make_plan_many64, "cufftMakePlanMany64");
  resolve(cufft->set_stream, "cufftSetStream");
  resolve(cufft->destroy, "cufftDestroy");
  resolve(cufft->exec_c2c, "cufftExecC2C");
  resolve(cufft->exec_z2z, "cufftExecZ2Z");
  resolve(cufft->exec_r2c, "cufftExecR2C");
  resolve(cufft->exec_d2z, "cufftExecD2Z");
  resolve(cufft->exec_c2r, "cufftExecC2R");
  resolve(cufft->exec_z2d, "cufftExecZ2D");
  if (!resolve.missing().empty()) {
    delete cufft;
    return absl::UnavailableError(absl::StrCat("cuFFT unavailable: ", resolve.missing()));
  }
  return cufft;
}

absl::StatusOr<const Cufft*> Cufft::Get() {
  static const absl::StatusOr<const Cufft*>* cufft = new absl::StatusOr<const Cufft*>(LoadCufft());
  return *cufft;
}

const char* CufftResultName(cufftResult result) {
  switch (result) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA:
      return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "a cuFFT error";
  }
}

absl::Status CufftStatus(cufftResult result, absl::string_view call, absl::string_view name) {
  if (result == CUFFT_SUCCESS) return absl::OkStatus();
  const std::string message = absl::StrCat(name, ": ", call, " failed: ", CufftResultName(result),
                                           " (", static_cast<int>(result), ")");
  return result == CUFFT_ALLOC_FAILED ? absl::ResourceExhaustedError(message)
                                      : absl::InternalError(message);
}

struct FftGeometry {
  cufftType type = CUFFT_C2C;
  int direction = CUFFT_FORWARD;
  std::vector<long long> lengths;  // NOLINT(google-runtime-int): cuFFT's type
  long long batch = 0;             // NOLINT(google-runtime-int)
  long long input_distance = 0;    // NOLINT(google-runtime-int)
  long long output_distance = 0;   // NOLINT(google-runtime-int)
  int64_t input_bytes = 0;
  bool scaled = false;
  PrimitiveType real_type = F32;  // of the output's (real or complex) elements
  int64_t output_reals = 0;       // reals in the output
};

class FftThunk : public GpuThunk {
 public:
  FftThunk(std::string name, GpuThunkValues values, FftGeometry geometry,
           std::optional<PtxKernel> scale)
      : GpuThunk(std::move(name)),
        values_(std::move(values)),
        geometry_(std::move(geometry)),
        scale_(std::move(scale)) {}

  ~FftThunk() override {
    if (plans_.empty() || cufft_ == nullptr || device_ == nullptr) return;
    CudaDevice::ScopedActivation activation(*device_);
    for (const auto& [stream, plan] : plans_) cufft_->destroy(plan);
  }
  FftThunk(const FftThunk&) = delete;
  FftThunk& operator=(const FftThunk&) = delete;

  absl::Status Initialize(const CudaDevice& device) override {
    device_ = &device;
    if (geometry_.batch == 0) return absl::OkStatus();
    absl::StatusOr<const Cufft*> cufft = Cufft::Get();
    if (!cufft.ok()) {
      return absl::Status(cufft.status().code(),
                          absl::StrCat(name(), ": ", cufft.status().message()));
    }
    cufft_ = *cufft;
    if (scale_.has_value()) {
      absl::StatusOr<std::unique_ptr<CudaModule>> module = CudaModule::LoadPtx(device, scale_->ptx);
      if (!module.ok()) {
        return absl::Status(module.status().code(),
                            absl::StrCat(name(), ": scale kernel: ", module.status().message()));
      }
      module_ = *std::move(module);
      AXLE_ASSIGN_OR_RETURN(scale_function_, module_->GetFunction(scale_->name));
    }
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (geometry_.batch == 0) return absl::OkStatus();
    if (cufft_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(name(), ": FFT run before Initialize"));
    }
    se::DeviceMemoryBase input = context.buffer(values_.operands[0]);
    se::DeviceMemoryBase output = context.buffer(values_.outputs[0]);
    std::lock_guard<std::mutex> lock(mutex_);
    AXLE_ASSIGN_OR_RETURN(cufftHandle plan, PlanFor(context));
    if (geometry_.type == CUFFT_C2R || geometry_.type == CUFFT_Z2D) {
      // Complex-to-real transforms overwrite their input: work on a copy.
      if (context.scratch.is_null() ||
          static_cast<int64_t>(context.scratch.size()) < geometry_.input_bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat(name(), ": needs ", geometry_.input_bytes, " bytes of scratch memory"));
      }
      se::DeviceMemoryBase copy = context.scratch;
      absl::Status status = context.stream->MemcpyDeviceToDevice(
          &copy, input, static_cast<uint64_t>(geometry_.input_bytes));
      if (!status.ok()) {
        return absl::Status(status.code(), absl::StrCat(name(), ": ", status.message()));
      }
      input = copy;
    }
    void* in = DeviceAddress(DevicePointer(input));
    void* out = DeviceAddress(DevicePointer(output));
    cufftResult result = CUFFT_SUCCESS;
    const char* call = "";
    switch (geometry_.type) {
      case CUFFT_C2C:
        call = "cufftExecC2C";
        result = cufft_->exec_c2c(plan, static_cast<cufftComplex*>(in),
                                  static_cast<cufftComplex*>(out), geometry_.direction);
        break;
      case CUFFT_Z2Z:
        call = "cufftExecZ2Z";
        result = cufft_->exec_z2z(plan, static_cast<cufftDoubleComplex*>(in),
                                  static_cast<cufftDoubleComplex*>(out), geometry_.direction);
        break;
      case CUFFT_R2C:
        call = "cufftExecR2C";
        result =
            cufft_->exec_r2c(plan, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out));
        break;
      case CUFFT_D2Z:
        call = "cufftExecD2Z";
        result = cufft_->exec_d2z(plan, static_cast<cufftDoubleReal*>(in),
                                  static_cast<cufftDoubleComplex*>(out));
        break;
      case CUFFT_C2R:
        call = "cufftExecC2R";
        result =
            cufft_->exec_c2r(plan, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out));
        break;
      case CUFFT_Z2D:
        call = "cufftExecZ2D";
        result = cufft_->exec_z2d(plan, static_cast<cufftDoubleComplex*>(in),
                                  static_cast<cufftDoubleReal*>(out));
        break;
    }
    AXLE_RETURN_IF_ERROR(CufftStatus(result, call, name()));
    if (scale_function_ != nullptr) {
      const se::DeviceMemoryBase buffers[] = {output};
      absl::Status status =
          LaunchKernel(context.stream, scale_function_, scale_->grid, scale_->block, buffers);
      if (!status.ok()) {
        return absl::Status(status.code(),
                            absl::StrCat(name(), ": 1/N scaling: ", status.message()));
      }
    }
    return absl::OkStatus();
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  int64_t scratch_bytes() const override {
    const bool copies_input = geometry_.type == CUFFT_C2R || geometry_.type == CUFFT_Z2D;
    return copies_input && geometry_.batch > 0 ? geometry_.input_bytes : 0;
  }

 private:
  // The stream's plan, made on its first run there (mutex_ held).
  absl::StatusOr<cufftHandle> PlanFor(const GpuThunkContext& context) const {
    CUstream stream = context.stream->stream();
    auto found = plans_.find(stream);
    if (found != plans_.end()) return found->second;
    CudaDevice::ScopedActivation activation(*device_);
    cufftHandle plan = 0;
    AXLE_RETURN_IF_ERROR(CufftStatus(cufft_->create(&plan), "cufftCreate", name()));
    std::vector<long long> lengths = geometry_.lengths;  // NOLINT(google-runtime-int)
    size_t work_bytes = 0;
    absl::Status status = CufftStatus(
        cufft_->make_plan_many64(plan, static_cast<int>(lengths.size()), lengths.data(), nullptr, 1,
                                 geometry_.input_distance, nullptr, 1, geometry_.output_distance,
                                 geometry_.type, geometry_.batch, &work_bytes),
        "cufftMakePlanMany64", name());
    if (status.ok()) {
      status = CufftStatus(cufft_->set_stream(plan, reinterpret_cast<cudaStream_t>(stream)),
                           "cufftSetStream", name());
    }
    if (!status.ok()) {
      cufft_->destroy(plan);
      return status;
    }
    plans_.emplace(stream, plan);
    return plan;
  }

  GpuThunkValues values_;
  FftGeometry geometry_;
  std::optional<PtxKernel> scale_;
  const CudaDevice* device_ = nullptr;
  const Cufft* cufft_ = nullptr;
  std::unique_ptr<CudaModule> module_;
  CUfunction scale_function_ = nullptr;
  mutable std::mutex mutex_;
  mutable std::map<CUstream, cufftHandle> plans_;
};

absl::Status FftError(const HloInstruction& fft, absl::StatusCode code, absl::string_view what) {
  return absl::Status(code, absl::StrCat("CUDA fft ", fft.name(), ": ", what));
}

}  // namespace

absl::StatusOr<PtxKernel> CompileScaleKernelToPtx(PrimitiveType type, int64_t count, double factor,
                                                  absl::string_view kernel_name,
                                                  const PtxOptions& options) {
  if (type != F32 && type != F64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA scale kernel: ", primitive_util::LowercasePrimitiveTypeName(type), " elements"));
  }
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>(std::string(kernel_name), context);
  AXLE_RETURN_IF_ERROR(PrepareNvptxModule(module.get(), options));
  llvm::IRBuilder<> b(context);
  auto* function_type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false);
  llvm::Function* function =
      llvm::Function::Create(function_type, llvm::Function::ExternalLinkage,
                             llvm::Twine(std::string(kernel_name)), module.get());
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Argument* data = function->getArg(0);
  data->setName("data");
  data->addAttr(llvm::Attribute::NoAlias);
  data->addAttr(llvm::Attribute::getWithAlignment(context, llvm::Align(16)));
  MarkKernel(function, options.block_size);
  const ElementKernelStart start = StartElementKernel(b, function, count);
  llvm::Value* linear = start.index;
  llvm::Type* element = type == F32 ? b.getFloatTy() : b.getDoubleTy();
  llvm::Value* address = b.CreateInBoundsGEP(element, data, linear);
  llvm::Value* value = b.CreateLoad(element, address);
  b.CreateStore(b.CreateFMul(value, llvm::ConstantFP::get(element, factor)), address);
  b.CreateBr(start.exit);
  return CompileElementKernel(module.get(), kernel_name, count, /*num_parameters=*/0,
                              /*num_outputs=*/1, options);
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeFftThunk(const HloInstruction& fft,
                                                       GpuThunkValues values) {
  return MakeFftThunkWithOptions(fft, std::move(values), PtxOptions());
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeFftThunkWithOptions(const HloInstruction& instruction,
                                                                  GpuThunkValues values,
                                                                  const PtxOptions& options) {
  const auto* fft = dyn_cast<HloFftInstruction>(&instruction);
  if (fft == nullptr || instruction.operand_count() != 1) {
    return FftError(instruction, absl::StatusCode::kInvalidArgument, "not an fft of one operand");
  }
  AXLE_RETURN_IF_ERROR(CheckThunkValues(instruction, values, 1, 1));
  const Shape& in = instruction.operand(0)->shape();
  const Shape& out = instruction.shape();
  if (!in.IsArray() || !out.IsArray()) {
    return FftError(instruction, absl::StatusCode::kInvalidArgument,
                    "operand and result must be arrays");
  }
  const std::vector<int64_t>& lengths = fft->fft_length();
  const int64_t rank = static_cast<int64_t>(lengths.size());
  if (rank < 1 || rank > 3 || in.rank() < rank || out.rank() != in.rank()) {
    return FftError(instruction, absl::StatusCode::kInvalidArgument,
                    absl::StrCat("fft_length of ", rank, " dimensions over ", in.ToString(), " -> ",
                                 out.ToString(), " (1 to 3 trailing dimensions)"));
  }
  if (!ShapeUtil::HasDescendingLayout(in) || !ShapeUtil::HasDescendingLayout(out)) {
    return FftError(instruction, absl::StatusCode::kUnimplemented,
                    absl::StrCat("operand or result not row-major (", in.ToString(true), " -> ",
                                 out.ToString(true), ")"));
  }
  FftGeometry g;
  const PrimitiveType in_type = in.element_type();
  const PrimitiveType out_type = out.element_type();
  bool types_ok = false;
  switch (fft->fft_type()) {
    case FFT:
    case IFFT:
      types_ok = (in_type == C64 || in_type == C128) && out_type == in_type;
      g.type = in_type == C128 ? CUFFT_Z2Z : CUFFT_C2C;
      g.direction = fft->fft_type() == FFT ? CUFFT_FORWARD : CUFFT_INVERSE;
      g.real_type = in_type == C128 ? F64 : F32;
      break;
    case RFFT:
      types_ok = (in_type == F32 && out_type == C64) || (in_type == F64 && out_type == C128);
      g.type = in_type == F64 ? CUFFT_D2Z : CUFFT_R2C;
      g.real_type = in_type == F64 ? F64 : F32;
      break;
    case IRFFT:
      types_ok = (in_type == C64 && out_type == F32) || (in_type == C128 && out_type == F64);
      g.type = in_type == C128 ? CUFFT_Z2D : CUFFT_C2R;
      g.direction = CUFFT_INVERSE;
      g.real_type = out_type == F64 ? F64 : F32;
      break;
  }
  if (!types_ok) {
    return FftError(
        instruction, absl::StatusCode::kUnimplemented,
        absl::StrCat("element types ", primitive_util::LowercasePrimitiveTypeName(in_type), " -> ",
                     primitive_util::LowercasePrimitiveTypeName(out_type),
                     " (FFT/IFFT: c64, c128; RFFT: f32->c64, f64->c128; IRFFT: the "
                     "reverse)"));
  }
  const int64_t first = in.rank() - rank;
  for (int64_t d = 0; d < first; ++d) {
    if (in.dimensions(d) != out.dimensions(d)) {
      return FftError(instruction, absl::StatusCode::kInvalidArgument,
                      absl::StrCat("batch dimension ", d, " differs between ", in.ToString(),
                                   " and ", out.ToString()));
    }
  }
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t n = lengths[i];
    const bool last = i + 1 == rank;
    const int64_t half = n / 2 + 1;
    const int64_t want_in = last && fft->fft_type() == IRFFT ? half : n;
    const int64_t want_out = last && fft->fft_type() == RFFT ? half : n;
    if (n < 1 || in.dimensions(first + i) != want_in || out.dimensions(first + i) != want_out) {
      return FftError(instruction, absl::StatusCode::kInvalidArgument,
                      absl::StrCat("fft_length {", absl::StrJoin(lengths, ","), "} does not fit ",
                                   in.ToString(), " -> ", out.ToString()));
    }
  }
  g.lengths.assign(lengths.begin(), lengths.end());
  g.batch = 1;
  for (int64_t d = 0; d < first; ++d) g.batch *= in.dimensions(d);
  g.input_distance = 1;
  g.output_distance = 1;
  for (int64_t d = first; d < in.rank(); ++d) {
    g.input_distance *= in.dimensions(d);
    g.output_distance *= out.dimensions(d);
  }
  if (in.num_elements() == 0 || out.num_elements() == 0) g.batch = 0;
  g.input_bytes = ShapeUtil::ByteSizeOfElements(in);
  g.output_reals = out.num_elements() * (primitive_util::IsComplexType(out_type) ? 2 : 1);
  g.scaled = fft->fft_type() == IFFT || fft->fft_type() == IRFFT;
  std::optional<PtxKernel> scale;
  if (g.scaled && g.batch > 0) {
    double n = 1;
    for (int64_t length : lengths) n *= static_cast<double>(length);
    AXLE_ASSIGN_OR_RETURN(
        scale, CompileScaleKernelToPtx(g.real_type, g.output_reals, 1.0 / n, "fft_scale", options));
  }
  return std::unique_ptr<GpuThunk>(
      new FftThunk(instruction.name(), std::move(values), std::move(g), std::move(scale)));
}

}  // namespace axle::gpu
