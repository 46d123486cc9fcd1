//===- cholesky_thunk.cc - cholesky on cuSOLVER potrf ----------------------===//
#include "axle/gpu/cholesky_thunk.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/cuda_driver.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/cusolver_library.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/gpu/ptx_text.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

// Thread i finishes element i of the batch of n x n matrices at p_data
// (p_words words of W bits each): NaN (p_nan, per word) when its matrix's
// info is not 0, else zero when it lies in the triangle the result does not
// hold (above the diagonal when p_lower, below otherwise).
constexpr PtxParameter kFinishParameters[] = {
    {"u64", "p_data", "%rd1"}, {"u64", "p_info", "%rd2"}, {"u64", "p_count", "%rd3"},
    {"u64", "p_n", "%rd4"},    {"u32", "p_lower", "%r1"}, {"uW", "p_nan", "%w1"},
    {"u32", "p_words", "%r2"},
};
constexpr char kFinishRegisters[] = R"(  .reg .pred %p<5>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<20>;
  .reg .bW %w<3>;
)";
// Element %idx: batch %rd9, row %rd11, column %rd12; its first word at %rd14.
constexpr char kFinishBody[] = R"(  mul.lo.u64 %rd8, %rd4, %rd4;
  div.u64 %rd9, %idx, %rd8;
  rem.u64 %rd10, %idx, %rd8;
  div.u64 %rd11, %rd10, %rd4;
  rem.u64 %rd12, %rd10, %rd4;
  cvt.u64.u32 %rd13, %r2;
  mul.lo.u64 %rd14, %idx, %rd13;
  shl.b64 %rd14, %rd14, SHIFT;
  add.u64 %rd14, %rd1, %rd14;
  shl.b64 %rd15, %rd9, 2;
  add.u64 %rd15, %rd2, %rd15;
  ld.global.u32 %r6, [%rd15];
  setp.eq.u32 %p4, %r2, 2;
  setp.ne.u32 %p2, %r6, 0;
  @%p2 bra $L_nan;
  setp.ne.u32 %p3, %r1, 0;
  @%p3 setp.gt.u64 %p1, %rd12, %rd11;
  @!%p3 setp.gt.u64 %p1, %rd11, %rd12;
  @!%p1 bra $L_done;
  mov.uW %w2, 0;
  st.global.uW [%rd14], %w2;
  @%p4 st.global.uW [%rd14+BYTES], %w2;
  bra.uni $L_done;
$L_nan:
  st.global.uW [%rd14], %w1;
  @%p4 st.global.uW [%rd14+BYTES], %w1;
)";

absl::Status Unsupported(const HloInstruction& cholesky, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("cuSOLVER potrf: ", why, " (cholesky %", cholesky.name(), ")"));
}

int64_t InfoBytes(const CholeskyPlan& plan) { return (plan.batch * 4 + 255) / 256 * 256; }
int64_t WorkspaceBytes(const CholeskyPlan& plan) {
  return std::max<int64_t>(plan.n * plan.n, int64_t{1} << 16) *
         primitive_util::ByteWidth(plan.type);
}

class CholeskyThunk : public GpuThunk {
 public:
  CholeskyThunk(std::string name, CholeskyPlan plan, GpuThunkValues values)
      : GpuThunk(std::move(name)), plan_(plan), values_(std::move(values)) {}

  absl::Status Initialize(const CudaDevice& device) override {
    auto handle = CusolverHandle::ForDevice(device);
    if (!handle.ok()) return Annotate(handle.status());
    handle_ = *handle;
    auto module = CudaModule::LoadPtx(device, CholeskyFinishPtx());
    if (!module.ok()) return Annotate(module.status());
    module_ = *std::move(module);
    const bool wide = plan_.type != F32;
    auto function =
        module_->GetFunction(wide ? "axle_cholesky_finish_b64" : "axle_cholesky_finish_b32");
    if (!function.ok()) return Annotate(function.status());
    finish_ = *function;
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (handle_ == nullptr || finish_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(name(), ": not initialized"));
    }
    if (values_.operands.size() != 1 || values_.outputs.size() != 1) {
      return absl::InternalError(absl::StrCat(name(), ": expected 1 operand and 1 output"));
    }
    const int64_t size = primitive_util::ByteWidth(plan_.type);
    const int64_t elements = plan_.batch * plan_.n * plan_.n;
    if (elements == 0) return absl::OkStatus();
    if (context.scratch.is_null() ||
        static_cast<int64_t>(context.scratch.size()) < scratch_bytes()) {
      return absl::InternalError(absl::StrCat(name(), ": needs ", scratch_bytes(),
                                              " bytes of scratch memory, got ",
                                              context.scratch.size()));
    }
    if (context.device == nullptr || context.stream == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(name(), ": a run without a device or stream"));
    }
    CudaDevice::ScopedActivation activation(*context.device);
    se::DeviceMemoryBase output = context.buffer(values_.outputs[0]);
    const se::DeviceMemoryBase& a = context.buffer(values_.operands[0]);
    if (output.opaque() != a.opaque()) {
      AXLE_RETURN_IF_ERROR(
          Annotate(context.stream->MemcpyDeviceToDevice(&output, a, elements * size)));
    }
    const CUdeviceptr x = DevicePointer(output);
    const CUdeviceptr info = DevicePointer(context.scratch);
    const CUdeviceptr workspace = info + InfoBytes(plan_);
    {
      auto lock = handle_->Acquire(context.stream->stream());
      if (!lock.ok()) return Annotate(lock.status());
      int lwork = 0;
      AXLE_RETURN_IF_ERROR(Potrf((*lock)->get(), x, 0, &lwork, 0));
      if (int64_t{lwork} * size > WorkspaceBytes(plan_)) {
        return absl::InternalError(absl::StrCat(name(), ": potrf asks for ", lwork * size,
                                                " bytes of workspace, more than the ",
                                                WorkspaceBytes(plan_), " planned"));
      }
      for (int64_t i = 0; i < plan_.batch; ++i) {
        AXLE_RETURN_IF_ERROR(
            Potrf((*lock)->get(), x + i * plan_.stride * size, workspace, &lwork, info + i * 4));
      }
    }
    // The other triangle zeroed, failed matrices NaN.
    const bool wide = plan_.type != F32;
    CUdeviceptr data = x;
    CUdeviceptr info_address = info;
    uint64_t count = static_cast<uint64_t>(elements);
    uint64_t n = static_cast<uint64_t>(plan_.n);
    uint32_t lower = plan_.lower ? 1 : 0;
    uint64_t nan64 = plan_.type == C64 ? 0x7fc000007fc00000ULL : 0x7ff8000000000000ULL;
    uint32_t nan32 = 0x7fc00000U;
    uint32_t words = plan_.type == C128 ? 2 : 1;
    void* parameters[] = {&data,  &info_address,
                          &count, &n,
                          &lower, wide ? static_cast<void*>(&nan64) : static_cast<void*>(&nan32),
                          &words};
    constexpr unsigned kBlock = 256;
    const auto grid = static_cast<unsigned>((count + kBlock - 1) / kBlock);
    const CudaDriver& driver = context.device->driver();
    return Annotate(
        driver.ToStatus(driver.cuLaunchKernel(finish_, grid, 1, 1, kBlock, 1, 1, 0,
                                              context.stream->stream(), parameters, nullptr),
                        "cuLaunchKernel (cholesky finish)"));
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  int64_t scratch_bytes() const override {
    return plan_.batch * plan_.n == 0 ? 0 : InfoBytes(plan_) + WorkspaceBytes(plan_);
  }

 private:
  // potrf of the matrix at `a`, or its workspace query when `info` is 0.
  absl::Status Potrf(cusolverDnHandle_t handle, CUdeviceptr a, CUdeviceptr workspace, int* lwork,
                     CUdeviceptr info) const {
    const CusolverLibrary& library = handle_->library();
    const cublasFillMode_t fill =
        plan_.potrf_lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const int n = static_cast<int>(plan_.n);
    const int lda = static_cast<int>(plan_.lda);
    void* a_address = DeviceAddress(a);
    void* w_address = DeviceAddress(workspace);
    int* info_address = static_cast<int*>(DeviceAddress(info));
    const bool query = info == 0;
    cusolverStatus_t status = CUSOLVER_STATUS_NOT_SUPPORTED;
    switch (plan_.type) {
#define AXLE_POTRF_CASE(TYPE, T, prefix)                                                           \
  case TYPE:                                                                                       \
    status = query ? library.prefix##potrf_bufferSize(handle, fill, n, static_cast<T*>(a_address), \
                                                      lda, lwork)                                  \
                   : library.prefix##potrf(handle, fill, n, static_cast<T*>(a_address), lda,       \
                                           static_cast<T*>(w_address), *lwork, info_address);      \
    break;
      AXLE_POTRF_CASE(F32, float, cusolverDnS)
      AXLE_POTRF_CASE(F64, double, cusolverDnD)
      AXLE_POTRF_CASE(C64, cuComplex, cusolverDnC)
      AXLE_POTRF_CASE(C128, cuDoubleComplex, cusolverDnZ)
#undef AXLE_POTRF_CASE
      default:
        break;
    }
    return Annotate(library.ToStatus(
        status, absl::StrCat(query ? "potrf_bufferSize (" : "potrf (", plan_.ToString(), ")")));
  }

  absl::Status Annotate(absl::Status status) const {
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(name(), ": ", status.message()));
  }

  CholeskyPlan plan_;
  GpuThunkValues values_;
  CusolverHandle* handle_ = nullptr;
  std::unique_ptr<CudaModule> module_;
  CUfunction finish_ = nullptr;
};

}  // namespace

const std::string& CholeskyFinishPtx() {
  static const std::string* ptx = [] {
    auto* text = new std::string(".version 7.8\n.target sm_52\n.address_size 64\n");
    const std::string kernel = PtxThreadPerElementKernel(
        "axle_cholesky_finish_bW", kFinishParameters, kFinishRegisters, "%rd3", kFinishBody);
    absl::StrAppend(
        text, absl::StrReplaceAll(kernel,
                                  {{"bW", "b32"}, {"uW", "u32"}, {"SHIFT", "2"}, {"BYTES", "4"}}));
    absl::StrAppend(
        text, absl::StrReplaceAll(kernel,
                                  {{"bW", "b64"}, {"uW", "u64"}, {"SHIFT", "3"}, {"BYTES", "8"}}));
    return text;
  }();
  return *ptx;
}

std::string CholeskyPlan::ToString() const {
  return absl::StrCat("uplo=", potrf_lower ? "lower" : "upper", " n=", n, " lda=", lda,
                      " batch=", batch, " stride=", stride, " ",
                      primitive_util::LowercasePrimitiveTypeName(type));
}

absl::StatusOr<CholeskyPlan> MakeCholeskyPlan(const HloInstruction& cholesky) {
  if (cholesky.opcode() != HloOpcode::kCholesky || cholesky.operand_count() != 1) {
    return Unsupported(cholesky, "not a cholesky of one operand");
  }
  const Shape& a = cholesky.operand(0)->shape();
  const Shape& x = cholesky.shape();
  const PrimitiveType type = x.element_type();
  if (type != F32 && type != F64 && type != C64 && type != C128) {
    return Unsupported(
        cholesky, absl::StrCat("no potrf for ", primitive_util::LowercasePrimitiveTypeName(type)));
  }
  if (!a.IsArray() || a.rank() < 2 || a.element_type() != type ||
      a.dimensions() != x.dimensions() ||
      a.dimensions(a.rank() - 1) != a.dimensions(a.rank() - 2)) {
    return Unsupported(cholesky, "a must be square matrices [..., n, n] of the result's shape");
  }
  if (ShapeUtil::LayoutStrides(a) != ShapeUtil::RowMajorStrides(a.dimensions()) ||
      ShapeUtil::LayoutStrides(x) != ShapeUtil::RowMajorStrides(x.dimensions())) {
    return Unsupported(cholesky, "a and the result must be in the descending layout");
  }
  CholeskyPlan plan;
  plan.type = type;
  plan.lower = cast<HloCholeskyInstruction>(&cholesky)->cholesky_options().lower();
  plan.potrf_lower = !plan.lower;
  plan.n = a.dimensions(a.rank() - 1);
  plan.lda = std::max<int64_t>(plan.n, 1);
  for (int64_t d = 0; d < a.rank() - 2; ++d) plan.batch *= a.dimensions(d);
  plan.stride = plan.n * plan.n;
  if (plan.n > std::numeric_limits<int>::max()) {
    return Unsupported(cholesky, "n exceeds 32 bits");
  }
  return plan;
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeCholeskyThunk(const HloInstruction& cholesky,
                                                            GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(CholeskyPlan plan, MakeCholeskyPlan(cholesky));
  AXLE_RETURN_IF_ERROR(CheckThunkValues(cholesky, values, 1, 1));
  return std::unique_ptr<GpuThunk>(
      std::make_unique<CholeskyThunk>(cholesky.name(), plan, std::move(values)));
}

}  // namespace axle::gpu
