//===- triangular_solve_thunk.cc - triangular-solve on cuBLAS trsm ---------===//
#include "axle/gpu/triangular_solve_thunk.h"

#include <complex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/cublas_library.h"
#include "axle/gpu/cuda_driver.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/gpu/ptx_text.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

absl::Status Unsupported(const HloInstruction& solve, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("cuBLAS trsm: ", why, " (triangular-solve %", solve.name(), ")"));
}

// Thread i < p_count writes the batch's matrix pointers for
// cublas<t>trsmBatched: p_out[i] = p_a + i * p_a_stride and
// p_out[p_count + i] = p_b + i * p_b_stride (bytes).
constexpr PtxParameter kBatchPointersParameters[] = {
    {"u64", "p_out", "%rd1"}, {"u64", "p_a", "%rd2"},        {"u64", "p_a_stride", "%rd3"},
    {"u64", "p_b", "%rd4"},   {"u64", "p_b_stride", "%rd5"}, {"u64", "p_count", "%rd6"},
};
constexpr char kBatchPointersBody[] = R"(  mul.lo.u64 %rd9, %idx, %rd3;
  add.u64 %rd9, %rd2, %rd9;
  shl.b64 %rd10, %idx, 3;
  add.u64 %rd10, %rd1, %rd10;
  st.global.u64 [%rd10], %rd9;
  mul.lo.u64 %rd11, %idx, %rd5;
  add.u64 %rd11, %rd4, %rd11;
  shl.b64 %rd12, %rd6, 3;
  add.u64 %rd12, %rd10, %rd12;
  st.global.u64 [%rd12], %rd11;
)";

const std::string& BatchPointersPtx() {
  static const std::string* ptx = new std::string(absl::StrCat(
      ".version 7.8\n.target sm_52\n.address_size 64\n",
      PtxThreadPerElementKernel("axle_trsm_batch_pointers", kBatchPointersParameters,
                                "  .reg .b64 %rd<16>;\n", "%rd6", kBatchPointersBody)));
  return *ptx;
}

// cublas<t>trsm's arguments but the type's and the matrices'.
struct TrsmArguments {
  explicit TrsmArguments(const TriangularSolvePlan& plan)
      : side(plan.left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT),
        fill(plan.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER),
        op(plan.op == 'T'   ? CUBLAS_OP_T
           : plan.op == 'C' ? CUBLAS_OP_C
                            : CUBLAS_OP_N),
        diag(plan.unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT),
        m(static_cast<int>(plan.m)),
        n(static_cast<int>(plan.n)),
        lda(static_cast<int>(plan.lda)),
        ldb(static_cast<int>(plan.ldb)) {}
  cublasSideMode_t side;
  cublasFillMode_t fill;
  cublasOperation_t op;
  cublasDiagType_t diag;
  int m;
  int n;
  int lda;
  int ldb;
};

bool RowMajor(const Shape& shape) {
  return ShapeUtil::LayoutStrides(shape) == ShapeUtil::RowMajorStrides(shape.dimensions());
}

class TriangularSolveThunk : public GpuThunk {
 public:
  TriangularSolveThunk(std::string name, TriangularSolvePlan plan, GpuThunkValues values)
      : GpuThunk(std::move(name)), plan_(plan), values_(std::move(values)) {}

  absl::Status Initialize(const CudaDevice& device) override {
    auto handle = CublasHandle::ForDevice(device);
    if (!handle.ok()) return Annotate(handle.status());
    handle_ = *handle;
    if (plan_.batch > 1) {
      auto module = CudaModule::LoadPtx(device, BatchPointersPtx());
      if (!module.ok()) return Annotate(module.status());
      module_ = *std::move(module);
      auto function = module_->GetFunction("axle_trsm_batch_pointers");
      if (!function.ok()) return Annotate(function.status());
      batch_pointers_ = *function;
    }
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (handle_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(name(), ": not initialized"));
    }
    if (values_.operands.size() != 2 || values_.outputs.size() != 1) {
      return absl::InternalError(absl::StrCat(name(), ": expected 2 operands and 1 output"));
    }
    const int64_t size = primitive_util::ByteWidth(plan_.type);
    const int64_t bytes = plan_.batch * plan_.m * plan_.n * size;
    if (bytes == 0) return absl::OkStatus();
    if (context.device == nullptr || context.stream == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(name(), ": a run without a device or stream"));
    }
    CudaDevice::ScopedActivation activation(*context.device);
    se::DeviceMemoryBase output = context.buffer(values_.outputs[0]);
    const se::DeviceMemoryBase& b = context.buffer(values_.operands[1]);
    if (output.opaque() != b.opaque()) {
      AXLE_RETURN_IF_ERROR(Annotate(context.stream->MemcpyDeviceToDevice(&output, b, bytes)));
    }
    const CUdeviceptr a = context.address(values_.operands[0]);
    const CUdeviceptr x = DevicePointer(output);
    if (plan_.batch == 1) {
      auto lock = handle_->Acquire(context.stream->stream(), 0, 0, CUBLAS_DEFAULT_MATH);
      if (!lock.ok()) return Annotate(lock.status());
      return Solve((*lock)->get(), a, x, /*batched=*/false);
    }
    // The matrices' pointers, written on the stream into the scratch memory.
    if (batch_pointers_ == nullptr ||
        static_cast<int64_t>(context.scratch.size()) < scratch_bytes()) {
      return absl::InternalError(absl::StrCat(name(), ": needs ", scratch_bytes(),
                                              " bytes of scratch memory and initialization"));
    }
    CUdeviceptr pointers = DevicePointer(context.scratch);
    CUdeviceptr a_base = a;
    CUdeviceptr b_base = x;
    uint64_t a_stride = plan_.stride_a * size;
    uint64_t b_stride = plan_.stride_b * size;
    uint64_t count = plan_.batch;
    void* parameters[] = {&pointers, &a_base, &a_stride, &b_base, &b_stride, &count};
    constexpr unsigned kBlock = 128;
    const CudaDriver& driver = context.device->driver();
    AXLE_RETURN_IF_ERROR(Annotate(driver.ToStatus(
        driver.cuLaunchKernel(batch_pointers_, static_cast<unsigned>((count + kBlock - 1) / kBlock),
                              1, 1, kBlock, 1, 1, 0, context.stream->stream(), parameters, nullptr),
        "cuLaunchKernel (trsm batch pointers)")));
    auto lock = handle_->Acquire(context.stream->stream(), 0, 0, CUBLAS_DEFAULT_MATH);
    if (!lock.ok()) return Annotate(lock.status());
    return Solve((*lock)->get(), pointers, pointers + count * sizeof(CUdeviceptr),
                 /*batched=*/true);
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  int64_t scratch_bytes() const override {
    return plan_.batch > 1 ? 2 * plan_.batch * int64_t{sizeof(CUdeviceptr)} : 0;
  }

 private:
  // One matrix (`a` and `b` its own), or all in one call (`batched`: `a`
  // and `b` are device arrays of pointers).
  absl::Status Solve(cublasHandle_t handle, CUdeviceptr a, CUdeviceptr b, bool batched) const {
    const CublasLibrary& library = handle_->library();
    const TrsmArguments args(plan_);
    const int batch = static_cast<int>(plan_.batch);
    void* a_address = DeviceAddress(a);
    void* b_address = DeviceAddress(b);
    cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
    switch (plan_.type) {
#define AXLE_TRSM_CASE(TYPE, T, PREFIX, ONE)                                                       \
  case TYPE: {                                                                                     \
    const T one = ONE;                                                                             \
    status = batched ? library.cublas##PREFIX##trsmBatched(                                        \
                           handle, args.side, args.fill, args.op, args.diag, args.m, args.n, &one, \
                           static_cast<const T* const*>(a_address), args.lda,                      \
                           static_cast<T* const*>(b_address), args.ldb, batch)                     \
                     : library.cublas##PREFIX##trsm(handle, args.side, args.fill, args.op,         \
                                                    args.diag, args.m, args.n, &one,               \
                                                    static_cast<const T*>(a_address), args.lda,    \
                                                    static_cast<T*>(b_address), args.ldb);         \
    break;                                                                                         \
  }
      AXLE_TRSM_CASE(F32, float, S, 1.0f)
      AXLE_TRSM_CASE(F64, double, D, 1.0)
      AXLE_TRSM_CASE(C64, cuComplex, C, (cuComplex{1, 0}))
      AXLE_TRSM_CASE(C128, cuDoubleComplex, Z, (cuDoubleComplex{1, 0}))
#undef AXLE_TRSM_CASE
      default:
        break;
    }
    return Annotate(library.ToStatus(
        status,
        absl::StrCat(batched ? "cublas trsmBatched (" : "cublas trsm (", plan_.ToString(), ")")));
  }

  absl::Status Annotate(absl::Status status) const {
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(name(), ": ", status.message()));
  }

  TriangularSolvePlan plan_;
  GpuThunkValues values_;
  CublasHandle* handle_ = nullptr;
  std::unique_ptr<CudaModule> module_;  // the batch pointers' kernel
  CUfunction batch_pointers_ = nullptr;
};

}  // namespace

const char* TriangularSolveBatchPointersPtx() { return BatchPointersPtx().c_str(); }

std::string TriangularSolvePlan::ToString() const {
  return absl::StrCat("side=", left ? "L" : "R", " fill=", lower ? "lower" : "upper",
                      " op=", std::string(1, op), unit_diagonal ? " unit" : "", " m=", m, " n=", n,
                      " lda=", lda, " ldb=", ldb, " batch=", batch, " strides=", stride_a, "/",
                      stride_b, " ", primitive_util::LowercasePrimitiveTypeName(type));
}

absl::StatusOr<TriangularSolvePlan> MakeTriangularSolvePlan(const HloInstruction& solve) {
  if (solve.opcode() != HloOpcode::kTriangularSolve || solve.operand_count() != 2) {
    return Unsupported(solve, "not a triangular-solve of two operands");
  }
  const Shape& a = solve.operand(0)->shape();
  const Shape& b = solve.operand(1)->shape();
  const Shape& x = solve.shape();
  const PrimitiveType type = x.element_type();
  if (type != F32 && type != F64 && type != C64 && type != C128) {
    return Unsupported(
        solve, absl::StrCat("no trsm for ", primitive_util::LowercasePrimitiveTypeName(type)));
  }
  if (!a.IsArray() || !b.IsArray() || a.rank() < 2 || a.rank() != b.rank() ||
      a.element_type() != type || b.element_type() != type || b.dimensions() != x.dimensions()) {
    return Unsupported(solve, "operands must be arrays [..., m, m] and [..., m, n] of its type");
  }
  if (!RowMajor(a) || !RowMajor(b) || !RowMajor(x)) {
    return Unsupported(solve, "operands and result must be in the descending layout");
  }
  const auto& options = cast<HloTriangularSolveInstruction>(&solve)->triangular_solve_options();
  const int64_t rank = a.rank();
  const int64_t s = a.dimensions(rank - 1);
  const int64_t rows = b.dimensions(rank - 2);
  const int64_t cols = b.dimensions(rank - 1);
  if (a.dimensions(rank - 2) != s || (options.left_side() ? rows : cols) != s) {
    return Unsupported(solve, "a is not square or does not match b");
  }
  TriangularSolvePlan plan;
  plan.type = type;
  // Row-major arrays as column-major transposes: x^T op(a)^T = b^T.
  plan.left = !options.left_side();
  plan.lower = !options.lower();
  switch (options.transpose_a()) {
    case TriangularSolveOptions::NO_TRANSPOSE:
      plan.op = 'N';
      break;
    case TriangularSolveOptions::TRANSPOSE:
      plan.op = 'T';
      break;
    case TriangularSolveOptions::ADJOINT:
      plan.op = primitive_util::IsComplexType(type) ? 'C' : 'T';
      break;
    default:
      return Unsupported(solve, "an invalid transpose_a");
  }
  plan.unit_diagonal = options.unit_diagonal();
  plan.m = cols;
  plan.n = rows;
  plan.lda = std::max<int64_t>(s, 1);
  plan.ldb = std::max<int64_t>(cols, 1);
  for (int64_t d = 0; d < rank - 2; ++d) plan.batch *= a.dimensions(d);
  plan.stride_a = s * s;
  plan.stride_b = rows * cols;
  if (s > std::numeric_limits<int>::max() || rows > std::numeric_limits<int>::max() ||
      cols > std::numeric_limits<int>::max()) {
    return Unsupported(solve, "a dimension exceeds 32 bits");
  }
  return plan;
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeTriangularSolveThunk(const HloInstruction& solve,
                                                                   GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(TriangularSolvePlan plan, MakeTriangularSolvePlan(solve));
  AXLE_RETURN_IF_ERROR(CheckThunkValues(solve, values, 2, 1));
  return std::unique_ptr<GpuThunk>(
      std::make_unique<TriangularSolveThunk>(solve.name(), plan, std::move(values)));
}

}  // namespace axle::gpu
