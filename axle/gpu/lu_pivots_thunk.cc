//===- lu_pivots_thunk.cc - jaxlib's cu_lu_pivots_to_permutation -----------===//
#include "axle/gpu/lu_pivots_thunk.h"

#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/cuda_driver.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/ptx_text.h"
#include "axle/runtime/host_ffi.h"

namespace axle::gpu {
namespace {

// Thread i: row i's permutation (p_n u32 words at p_perm) from its pivots
// (p_k s32 words at p_pivots).
constexpr PtxParameter kParameters[] = {
    {"u64", "p_pivots", "%rd1"}, {"u64", "p_perm", "%rd2"}, {"u64", "p_count", "%rd3"},
    {"u32", "p_k", "%r1"},       {"u32", "p_n", "%r2"},
};
constexpr char kRegisters[] = R"(  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
)";
// %rd5: the row's pivots, %rd7: its permutation, %r3: i, %r4: pivots[i].
// A pivot outside [0, n) (negative ones too: compared unsigned) is skipped.
constexpr char kBody[] = R"(  cvt.u64.u32 %rd4, %r1;
  mul.lo.u64 %rd5, %idx, %rd4;
  shl.b64 %rd5, %rd5, 2;
  add.u64 %rd5, %rd1, %rd5;
  cvt.u64.u32 %rd6, %r2;
  mul.lo.u64 %rd7, %idx, %rd6;
  shl.b64 %rd7, %rd7, 2;
  add.u64 %rd7, %rd2, %rd7;
  mov.u32 %r3, 0;
$L_fill:
  setp.ge.u32 %p1, %r3, %r2;
  @%p1 bra $L_filled;
  mul.wide.u32 %rd8, %r3, 4;
  add.u64 %rd9, %rd7, %rd8;
  st.global.u32 [%rd9], %r3;
  add.u32 %r3, %r3, 1;
  bra.uni $L_fill;
$L_filled:
  mov.u32 %r3, 0;
$L_swap:
  setp.ge.u32 %p1, %r3, %r1;
  @%p1 bra $L_done;
  mul.wide.u32 %rd8, %r3, 4;
  add.u64 %rd9, %rd5, %rd8;
  ld.global.u32 %r4, [%rd9];
  setp.ge.u32 %p2, %r4, %r2;
  @%p2 bra $L_next;
  add.u64 %rd10, %rd7, %rd8;
  mul.wide.u32 %rd11, %r4, 4;
  add.u64 %rd11, %rd7, %rd11;
  ld.global.u32 %r5, [%rd10];
  ld.global.u32 %r6, [%rd11];
  st.global.u32 [%rd10], %r6;
  st.global.u32 [%rd11], %r5;
$L_next:
  add.u32 %r3, %r3, 1;
  bra.uni $L_swap;
)";

absl::Status Refuse(const HloCustomCallInstruction& call, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("CUDA: custom-call target '",
                                               call.custom_call_target(), "': ", why,
                                               " (instruction %", call.name(), ")"));
}

bool RowMajorS32(const Shape& shape) {
  if (!shape.IsArray() || shape.element_type() != S32 || shape.rank() < 1) return false;
  const std::vector<int64_t> want = ShapeUtil::RowMajorStrides(shape.dimensions());
  const std::vector<int64_t> have = ShapeUtil::LayoutStrides(shape);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dimensions(d) > 1 && want[d] != have[d]) return false;
  }
  return true;
}

class LuPivotsThunk : public GpuThunk {
 public:
  LuPivotsThunk(std::string name, LuPivotsPlan plan, GpuThunkValues values)
      : GpuThunk(std::move(name)), plan_(plan), values_(std::move(values)) {}

  absl::Status Initialize(const CudaDevice& device) override {
    auto module = CudaModule::LoadPtx(device, LuPivotsToPermutationPtx());
    if (!module.ok()) return Annotate(module.status());
    module_ = *std::move(module);
    auto function = module_->GetFunction("axle_lu_pivots_to_permutation");
    if (!function.ok()) return Annotate(function.status());
    kernel_ = *function;
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (kernel_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(name(), ": not initialized"));
    }
    if (context.device == nullptr || context.stream == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(name(), ": a run without a device or stream"));
    }
    if (plan_.batch * plan_.permutation == 0) return absl::OkStatus();
    CudaDevice::ScopedActivation activation(*context.device);
    CUdeviceptr pivots = context.address(values_.operands[0]);
    CUdeviceptr permutation = context.address(values_.outputs[0]);
    auto count = static_cast<uint64_t>(plan_.batch);
    auto k = static_cast<uint32_t>(plan_.pivots);
    auto n = static_cast<uint32_t>(plan_.permutation);
    void* parameters[] = {&pivots, &permutation, &count, &k, &n};
    constexpr unsigned kBlock = 128;
    const auto grid = static_cast<unsigned>((count + kBlock - 1) / kBlock);
    const CudaDriver& driver = context.device->driver();
    return Annotate(
        driver.ToStatus(driver.cuLaunchKernel(kernel_, grid, 1, 1, kBlock, 1, 1, 0,
                                              context.stream->stream(), parameters, nullptr),
                        "cuLaunchKernel (lu pivots to permutation)"));
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  // One kernel launch on the run's buffers.
  bool CapturableInGraph() const override { return true; }

 private:
  absl::Status Annotate(absl::Status status) const {
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(name(), ": ", status.message()));
  }

  LuPivotsPlan plan_;
  GpuThunkValues values_;
  std::unique_ptr<CudaModule> module_;
  CUfunction kernel_ = nullptr;
};

}  // namespace

const std::string& LuPivotsToPermutationPtx() {
  static const std::string* ptx = new std::string(
      absl::StrCat(".version 7.8\n.target sm_52\n.address_size 64\n",
                   PtxThreadPerElementKernel("axle_lu_pivots_to_permutation", kParameters,
                                             kRegisters, "%rd3", kBody)));
  return *ptx;
}

absl::StatusOr<LuPivotsPlan> MakeLuPivotsPlan(const HloCustomCallInstruction& call) {
  if (call.custom_call_target() != kLuPivotsToPermutationTarget || call.operand_count() != 1) {
    return Refuse(call, "expected cu_lu_pivots_to_permutation of one operand");
  }
  const Shape& pivots = call.operand(0)->shape();
  const Shape& shape = call.shape();
  if (!RowMajorS32(pivots) || !RowMajorS32(shape) || pivots.rank() != shape.rank()) {
    return Refuse(call, "pivots and permutation must be row-major s32 arrays of one rank");
  }
  const int64_t rank = shape.rank();
  LuPivotsPlan plan;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    if (pivots.dimensions(d) != shape.dimensions(d)) {
      return Refuse(call, "pivots and permutation must have the same batch dimensions");
    }
    plan.batch *= shape.dimensions(d);
  }
  plan.pivots = pivots.dimensions(rank - 1);
  plan.permutation = shape.dimensions(rank - 1);
  if (plan.pivots > plan.permutation) {
    return Refuse(call, "more pivots than the permutation has rows");
  }
  if (plan.permutation > std::numeric_limits<int32_t>::max()) {
    return Refuse(call, "a permutation of 2^31 rows or more");
  }
  absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(call.raw_backend_config_string());
  if (!attributes.ok()) return Refuse(call, attributes.status().message());
  if (attributes->Find("permutation_size") != nullptr) {
    absl::StatusOr<int64_t> size = attributes->Get<int64_t>("permutation_size");
    if (!size.ok() || *size != plan.permutation) {
      return Refuse(call, "attribute permutation_size must be the result's last dimension");
    }
  }
  return plan;
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeLuPivotsToPermutationThunk(
    const HloCustomCallInstruction& call, GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(LuPivotsPlan plan, MakeLuPivotsPlan(call));
  AXLE_RETURN_IF_ERROR(CheckThunkValues(call, values, 1, 1));
  return std::unique_ptr<GpuThunk>(
      std::make_unique<LuPivotsThunk>(call.name(), plan, std::move(values)));
}

}  // namespace axle::gpu
