//===- solver_thunk.cc - jaxlib's LAPACK-style targets on cuSOLVER ---------===//
#include "axle/gpu/solver_thunk.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/cusolver_library.h"
#include "axle/runtime/host_ffi.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

struct Target {
  SolverRoutine routine;
  bool jaxlib_gpu;                    // cusolver_*_ffi (else lapack_*_ffi)
  std::optional<PrimitiveType> type;  // lapack's type letter
};

std::optional<PrimitiveType> TypeOfLetter(char letter) {
  switch (letter) {
    case 's':
      return F32;
    case 'd':
      return F64;
    case 'c':
      return C64;
    case 'z':
      return C128;
    default:
      return std::nullopt;
  }
}

std::optional<Target> ParseTarget(const std::string& name) {
  struct GpuName {
    const char* name;
    SolverRoutine routine;
  };
  constexpr GpuName kGpuNames[] = {
      {"cusolver_getrf_ffi", SolverRoutine::kGetrf},
      {"cusolver_geqrf_ffi", SolverRoutine::kGeqrf},
      {"cusolver_orgqr_ffi", SolverRoutine::kOrgqr},
      {"cusolver_syevd_ffi", SolverRoutine::kSyevd},
      {"cusolver_gesvd_ffi", SolverRoutine::kGesvd},
      {"cusolver_gesvdj_ffi", SolverRoutine::kGesvdj},
  };
  for (const GpuName& gpu : kGpuNames) {
    if (name == gpu.name) return Target{gpu.routine, true, std::nullopt};
  }
  constexpr absl::string_view kPrefix = "lapack_";
  constexpr absl::string_view kSuffix = "_ffi";
  if (!absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, kSuffix) ||
      name.size() != kPrefix.size() + 1 + 5 + kSuffix.size()) {
    return std::nullopt;
  }
  const std::optional<PrimitiveType> type = TypeOfLetter(name[kPrefix.size()]);
  if (!type.has_value()) return std::nullopt;
  const bool complex = pu::IsComplexType(*type);
  const std::string routine = name.substr(kPrefix.size() + 1, 5);
  if (routine == "getrf") return Target{SolverRoutine::kGetrf, false, type};
  if (routine == "geqrf") return Target{SolverRoutine::kGeqrf, false, type};
  if (routine == (complex ? "ungqr" : "orgqr")) return Target{SolverRoutine::kOrgqr, false, type};
  if (routine == (complex ? "heevd" : "syevd")) return Target{SolverRoutine::kSyevd, false, type};
  if (routine == "gesdd") return Target{SolverRoutine::kGesvd, false, type};
  return std::nullopt;
}

const char* RoutineName(SolverRoutine routine) {
  switch (routine) {
    case SolverRoutine::kGetrf:
      return "getrf";
    case SolverRoutine::kGeqrf:
      return "geqrf";
    case SolverRoutine::kOrgqr:
      return "orgqr";
    case SolverRoutine::kSyevd:
      return "syevd";
    case SolverRoutine::kGesvd:
      return "gesvd";
    case SolverRoutine::kGesvdj:
      return "gesvdj";
  }
  return "?";
}

absl::Status Refuse(const HloCustomCallInstruction& call, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("CUDA cuSOLVER: custom-call target '",
                                               call.custom_call_target(), "': ", why,
                                               " (instruction %", call.name(), ")"));
}

// jaxlib's character attributes are integers (`mode = 86 : ui8`).
std::optional<char> CharAttribute(const FfiAttributes& attributes, absl::string_view name) {
  absl::StatusOr<int64_t> value = attributes.Get<int64_t>(name);
  if (!value.ok() || *value < 0 || *value > 127) return std::nullopt;
  return static_cast<char>(*value);
}

// The shape's dimensions are [batch..., rows, cols] with each matrix
// column-major and the batch dimensions descending (jaxlib's layout).
bool ColumnMajorMatrices(const Shape& shape) {
  if (!shape.IsArray() || shape.rank() < 2) return false;
  const int64_t rank = shape.rank();
  std::vector<int64_t> minor_to_major = {rank - 2, rank - 1};
  for (int64_t d = rank - 3; d >= 0; --d) minor_to_major.push_back(d);
  const std::vector<int64_t> want = ShapeUtil::StridesInLayout(shape.dimensions(), minor_to_major);
  const std::vector<int64_t> have = ShapeUtil::LayoutStrides(shape);
  for (int64_t d = 0; d < rank; ++d) {
    if (shape.dimensions(d) > 1 && want[d] != have[d]) return false;
  }
  return true;
}

bool RowMajor(const Shape& shape) {
  if (!shape.IsArray()) return false;
  const std::vector<int64_t> want = ShapeUtil::RowMajorStrides(shape.dimensions());
  const std::vector<int64_t> have = ShapeUtil::LayoutStrides(shape);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dimensions(d) > 1 && want[d] != have[d]) return false;
  }
  return true;
}

// `shape` is an array of `type` with dimensions batch ++ tail.
bool Is(const Shape& shape, PrimitiveType type, absl::Span<const int64_t> batch,
        std::initializer_list<int64_t> tail) {
  if (!shape.IsArray() || shape.element_type() != type) return false;
  std::vector<int64_t> want(batch.begin(), batch.end());
  want.insert(want.end(), tail.begin(), tail.end());
  if (shape.dimensions() != absl::Span<const int64_t>(want)) return false;
  return tail.size() >= 2 ? ColumnMajorMatrices(shape) : RowMajor(shape);
}

int64_t RoundUp(int64_t bytes) { return (bytes + 255) / 256 * 256; }
int64_t InfoBytes(const SolverPlan& plan) { return RoundUp(plan.batch * 4); }
int64_t RworkBytes(const SolverPlan& plan) {
  if (plan.routine != SolverRoutine::kGesvd) return 0;  // gesvd's only
  return RoundUp(std::max<int64_t>(std::min(plan.m, plan.n), 1) *
                 pu::ByteWidth(pu::IsComplexType(plan.type) ? pu::ComplexComponentType(plan.type)
                                                            : plan.type));
}

// cuSOLVER's workspaces are of the order of a panel of the matrix for the
// factorizations and of the matrix itself for the eigen and singular value
// solvers (their tridiagonal/bidiagonal divide and conquer); planned with
// a margin, and checked against cuSOLVER's query when the thunk runs.
int64_t PlannedWorkspace(const SolverPlan& plan) {
  const int64_t panel = 256 * (plan.m + plan.n) + (int64_t{1} << 16);
  switch (plan.routine) {
    case SolverRoutine::kGetrf:
    case SolverRoutine::kGeqrf:
    case SolverRoutine::kOrgqr:
      return plan.m * plan.n + panel;
    case SolverRoutine::kSyevd:
      return 3 * plan.n * plan.n + panel;
    case SolverRoutine::kGesvd:
      return 2 * plan.m * plan.n + 2 * plan.n * plan.n + panel;
    case SolverRoutine::kGesvdj: {
      const int64_t mn = std::min(plan.m, plan.n);
      return 3 * plan.m * plan.n + 2 * mn * mn + panel;
    }
  }
  return panel;
}

class SolverThunk : public GpuThunk {
 public:
  SolverThunk(std::string name, SolverPlan plan, GpuThunkValues values)
      : GpuThunk(std::move(name)), plan_(plan), values_(std::move(values)) {}

  ~SolverThunk() override {
    if (gesvdj_info_ != nullptr) handle_->library().cusolverDnDestroyGesvdjInfo(gesvdj_info_);
  }

  absl::Status Initialize(const CudaDevice& device) override {
    auto handle = CusolverHandle::ForDevice(device);
    if (!handle.ok()) return Annotate(handle.status());
    handle_ = *handle;
    if (plan_.routine == SolverRoutine::kGesvdj && gesvdj_info_ == nullptr) {
      // The Jacobi method's parameters (cuSOLVER's defaults).
      const CusolverLibrary& library = handle_->library();
      AXLE_RETURN_IF_ERROR(Annotate(library.ToStatus(
          library.cusolverDnCreateGesvdjInfo(&gesvdj_info_), "cusolverDnCreateGesvdjInfo")));
    }
    return absl::OkStatus();
  }

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (handle_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(name(), ": not initialized"));
    }
    if (context.device == nullptr || context.stream == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(name(), ": a run without a device or stream"));
    }
    if (plan_.batch * plan_.m * plan_.n == 0) return ZeroResults(context, /*all=*/true);
    if (context.scratch.is_null() ||
        static_cast<int64_t>(context.scratch.size()) < scratch_bytes()) {
      return absl::InternalError(absl::StrCat(name(), ": needs ", scratch_bytes(),
                                              " bytes of scratch memory, got ",
                                              context.scratch.size()));
    }
    CudaDevice::ScopedActivation activation(*context.device);
    const int64_t size = pu::ByteWidth(plan_.type);
    se::DeviceMemoryBase output = context.buffer(values_.outputs[0]);
    const se::DeviceMemoryBase& a = context.buffer(values_.operands[0]);
    if (output.opaque() != a.opaque()) {
      AXLE_RETURN_IF_ERROR(Annotate(context.stream->MemcpyDeviceToDevice(
          &output, a, plan_.batch * plan_.m * plan_.n * size)));
    }
    AXLE_RETURN_IF_ERROR(ZeroResults(context, /*all=*/false));
    Pointers p;
    p.a = DevicePointer(output);
    p.scratch_info = DevicePointer(context.scratch);
    p.rwork = p.scratch_info + InfoBytes(plan_);
    p.workspace = p.rwork + RworkBytes(plan_);
    auto out = [&](size_t i) { return context.address(values_.outputs[i]); };
    switch (plan_.routine) {
      case SolverRoutine::kGetrf:
        p.ipiv = out(1);
        p.info = out(2);
        break;
      case SolverRoutine::kGeqrf:
        p.tau = out(1);
        break;
      case SolverRoutine::kOrgqr:
        p.tau = context.address(values_.operands[1]);
        break;
      case SolverRoutine::kSyevd:
        p.real = out(1);
        p.info = out(2);
        break;
      case SolverRoutine::kGesvd:
      case SolverRoutine::kGesvdj:
        p.real = out(1);
        p.u = out(2);
        p.vt = out(3);
        p.info = out(4);
        break;
    }
    auto lock = handle_->Acquire(context.stream->stream());
    if (!lock.ok()) return Annotate(lock.status());
    int lwork = 0;
    AXLE_RETURN_IF_ERROR(Call((*lock)->get(), p, 0, /*query=*/true, &lwork));
    if (int64_t{lwork} > plan_.workspace_elements) {
      return absl::InternalError(absl::StrCat(
          name(), ": cuSOLVER ", RoutineName(plan_.routine), " asks for ", lwork,
          " elements of workspace, more than the ", plan_.workspace_elements, " planned"));
    }
    for (int64_t i = 0; i < plan_.batch; ++i) {
      AXLE_RETURN_IF_ERROR(Call((*lock)->get(), p, i, /*query=*/false, &lwork));
    }
    return absl::OkStatus();
  }

  GpuThunkValues buffer_uses() const override { return values_; }
  int64_t scratch_bytes() const override {
    if (plan_.batch * plan_.m * plan_.n == 0) return 0;
    return InfoBytes(plan_) + RworkBytes(plan_) +
           RoundUp(plan_.workspace_elements * pu::ByteWidth(plan_.type));
  }
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override {
    // The first result is a copy of a that the routine then overwrites.
    return {{values_.operands[0], values_.outputs[0]}};
  }

 private:
  struct Pointers {
    CUdeviceptr a = 0, ipiv = 0, info = 0, tau = 0, real = 0, u = 0, vt = 0;
    CUdeviceptr scratch_info = 0, rwork = 0, workspace = 0;
  };

  // Every result after the first when `all` (empty matrices: info 0), else
  // gesvd's u and vt with mode N (not referenced): zeros, as on the CPU.
  absl::Status ZeroResults(const GpuThunkContext& context, bool all) const {
    std::vector<size_t> zeroed;
    if (all) {
      for (size_t i = 1; i < values_.outputs.size(); ++i) zeroed.push_back(i);
    } else if (plan_.routine == SolverRoutine::kGesvd && !plan_.vectors) {
      zeroed = {2, 3};
    }
    for (size_t i : zeroed) {
      se::DeviceMemoryBase buffer = context.buffer(values_.outputs[i]);
      if (buffer.size() == 0) continue;
      AXLE_RETURN_IF_ERROR(Annotate(context.stream->Memset8(&buffer, 0, buffer.size())));
    }
    return absl::OkStatus();
  }

  // Matrix `i`'s call, or the workspace query (into *lwork).
  absl::Status Call(cusolverDnHandle_t handle, const Pointers& p, int64_t i, bool query,
                    int* lwork) const {
    const CusolverLibrary& library = handle_->library();
    const int64_t size = pu::ByteWidth(plan_.type);
    const int64_t real_size =
        pu::IsComplexType(plan_.type) ? pu::ByteWidth(pu::ComplexComponentType(plan_.type)) : size;
    const int64_t mn = std::min(plan_.m, plan_.n);
    const int m = static_cast<int>(plan_.m);
    const int n = static_cast<int>(plan_.n);
    const int k = static_cast<int>(plan_.k);
    const int lda = std::max(m, 1);
    auto at = [](CUdeviceptr base, int64_t offset) { return DeviceAddress(base + offset); };
    void* a = at(p.a, i * plan_.m * plan_.n * size);
    void* work = at(p.workspace, 0);
    // info: the result's, else the scratch's.
    int* info = static_cast<int*>(p.info != 0 ? at(p.info, i * 4) : at(p.scratch_info, i * 4));
    cusolverStatus_t status = CUSOLVER_STATUS_NOT_SUPPORTED;
    const cusolverEigMode_t jobz =
        plan_.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const cublasFillMode_t uplo = plan_.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const auto job = static_cast<signed char>(plan_.job);
    const int ldu = std::max(m, 1);
    const int ldvt = std::max(static_cast<int>(plan_.job == 'A' ? plan_.n : plan_.vt_rows), 1);
    switch (plan_.routine) {
      case SolverRoutine::kGetrf: {
        int* ipiv = static_cast<int*>(at(p.ipiv, i * mn * 4));
        switch (plan_.type) {
#define AXLE_GETRF_CASE(TYPE, T, prefix)                                                          \
  case TYPE:                                                                                      \
    status = query                                                                                \
                 ? library.prefix##getrf_bufferSize(handle, m, n, static_cast<T*>(a), lda, lwork) \
                 : library.prefix##getrf(handle, m, n, static_cast<T*>(a), lda,                   \
                                         static_cast<T*>(work), ipiv, info);                      \
    break;
          AXLE_GETRF_CASE(F32, float, cusolverDnS)
          AXLE_GETRF_CASE(F64, double, cusolverDnD)
          AXLE_GETRF_CASE(C64, cuComplex, cusolverDnC)
          AXLE_GETRF_CASE(C128, cuDoubleComplex, cusolverDnZ)
#undef AXLE_GETRF_CASE
          default:
            break;
        }
        break;
      }
      case SolverRoutine::kGeqrf: {
        void* tau = at(p.tau, i * mn * size);
        switch (plan_.type) {
#define AXLE_GEQRF_CASE(TYPE, T, prefix)                                                           \
  case TYPE:                                                                                       \
    status =                                                                                       \
        query ? library.prefix##geqrf_bufferSize(handle, m, n, static_cast<T*>(a), lda, lwork)     \
              : library.prefix##geqrf(handle, m, n, static_cast<T*>(a), lda, static_cast<T*>(tau), \
                                      static_cast<T*>(work), *lwork, info);                        \
    break;
          AXLE_GEQRF_CASE(F32, float, cusolverDnS)
          AXLE_GEQRF_CASE(F64, double, cusolverDnD)
          AXLE_GEQRF_CASE(C64, cuComplex, cusolverDnC)
          AXLE_GEQRF_CASE(C128, cuDoubleComplex, cusolverDnZ)
#undef AXLE_GEQRF_CASE
          default:
            break;
        }
        break;
      }
      case SolverRoutine::kOrgqr: {
        const void* tau = at(p.tau, i * plan_.k * size);
        switch (plan_.type) {
#define AXLE_ORGQR_CASE(TYPE, T, prefix, routine)                                                 \
  case TYPE:                                                                                      \
    status = query ? library.prefix##routine##_bufferSize(handle, m, n, k, static_cast<T*>(a),    \
                                                          lda, static_cast<const T*>(tau), lwork) \
                   : library.prefix##routine(handle, m, n, k, static_cast<T*>(a), lda,            \
                                             static_cast<const T*>(tau), static_cast<T*>(work),   \
                                             *lwork, info);                                       \
    break;
          AXLE_ORGQR_CASE(F32, float, cusolverDnS, orgqr)
          AXLE_ORGQR_CASE(F64, double, cusolverDnD, orgqr)
          AXLE_ORGQR_CASE(C64, cuComplex, cusolverDnC, ungqr)
          AXLE_ORGQR_CASE(C128, cuDoubleComplex, cusolverDnZ, ungqr)
#undef AXLE_ORGQR_CASE
          default:
            break;
        }
        break;
      }
      case SolverRoutine::kSyevd: {
        void* w = at(p.real, i * plan_.n * real_size);
        switch (plan_.type) {
#define AXLE_SYEVD_CASE(TYPE, T, R, prefix, routine)                                              \
  case TYPE:                                                                                      \
    status =                                                                                      \
        query ? library.prefix##routine##_bufferSize(handle, jobz, uplo, n, static_cast<T*>(a),   \
                                                     lda, static_cast<R*>(w), lwork)              \
              : library.prefix##routine(handle, jobz, uplo, n, static_cast<T*>(a), lda,           \
                                        static_cast<R*>(w), static_cast<T*>(work), *lwork, info); \
    break;
          AXLE_SYEVD_CASE(F32, float, float, cusolverDnS, syevd)
          AXLE_SYEVD_CASE(F64, double, double, cusolverDnD, syevd)
          AXLE_SYEVD_CASE(C64, cuComplex, float, cusolverDnC, heevd)
          AXLE_SYEVD_CASE(C128, cuDoubleComplex, double, cusolverDnZ, heevd)
#undef AXLE_SYEVD_CASE
          default:
            break;
        }
        break;
      }
      case SolverRoutine::kGesvd: {
        void* s = at(p.real, i * mn * real_size);
        void* u = plan_.vectors ? at(p.u, i * plan_.m * plan_.u_cols * size) : nullptr;
        void* vt = plan_.vectors ? at(p.vt, i * plan_.vt_rows * plan_.n * size) : nullptr;
        void* rwork = at(p.rwork, 0);
        switch (plan_.type) {
#define AXLE_GESVD_CASE(TYPE, T, R, prefix)                                                  \
  case TYPE:                                                                                 \
    status = query ? library.prefix##gesvd_bufferSize(handle, m, n, lwork)                   \
                   : library.prefix##gesvd(handle, job, job, m, n, static_cast<T*>(a), lda,  \
                                           static_cast<R*>(s), static_cast<T*>(u), ldu,      \
                                           static_cast<T*>(vt), ldvt, static_cast<T*>(work), \
                                           *lwork, static_cast<R*>(rwork), info);            \
    break;
          AXLE_GESVD_CASE(F32, float, float, cusolverDnS)
          AXLE_GESVD_CASE(F64, double, double, cusolverDnD)
          AXLE_GESVD_CASE(C64, cuComplex, float, cusolverDnC)
          AXLE_GESVD_CASE(C128, cuDoubleComplex, double, cusolverDnZ)
#undef AXLE_GESVD_CASE
          default:
            break;
        }
        break;
      }
      case SolverRoutine::kGesvdj: {
        // u [m, u_cols], v [n, vt_rows] (V itself), always written.
        void* s = at(p.real, i * mn * real_size);
        void* u = at(p.u, i * plan_.m * plan_.u_cols * size);
        void* v = at(p.vt, i * plan_.n * plan_.vt_rows * size);
        const int econ = plan_.job == 'A' ? 0 : 1;
        const int ldv = std::max(n, 1);
        const cusolverEigMode_t uv =
            plan_.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        switch (plan_.type) {
#define AXLE_GESVDJ_CASE(TYPE, T, R, prefix)                                                    \
  case TYPE:                                                                                    \
    status = query ? library.prefix##gesvdj_bufferSize(                                         \
                         handle, uv, econ, m, n, static_cast<T*>(a), lda, static_cast<R*>(s),   \
                         static_cast<T*>(u), ldu, static_cast<T*>(v), ldv, lwork, gesvdj_info_) \
                   : library.prefix##gesvdj(handle, uv, econ, m, n, static_cast<T*>(a), lda,    \
                                            static_cast<R*>(s), static_cast<T*>(u), ldu,        \
                                            static_cast<T*>(v), ldv, static_cast<T*>(work),     \
                                            *lwork, info, gesvdj_info_);                        \
    break;
          AXLE_GESVDJ_CASE(F32, float, float, cusolverDnS)
          AXLE_GESVDJ_CASE(F64, double, double, cusolverDnD)
          AXLE_GESVDJ_CASE(C64, cuComplex, float, cusolverDnC)
          AXLE_GESVDJ_CASE(C128, cuDoubleComplex, double, cusolverDnZ)
#undef AXLE_GESVDJ_CASE
          default:
            break;
        }
        break;
      }
    }
    return Annotate(library.ToStatus(
        status, absl::StrCat(RoutineName(plan_.routine), query ? "_bufferSize (" : " (",
                             plan_.ToString(), ")")));
  }

  absl::Status Annotate(absl::Status status) const {
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(name(), ": ", status.message()));
  }

  SolverPlan plan_;
  GpuThunkValues values_;
  CusolverHandle* handle_ = nullptr;
  gesvdjInfo_t gesvdj_info_ = nullptr;
};

// The results each routine returns (a tuple of these many leaves, or one
// array for orgqr).
size_t ResultCount(SolverRoutine routine) {
  switch (routine) {
    case SolverRoutine::kGetrf:
    case SolverRoutine::kSyevd:
      return 3;
    case SolverRoutine::kGeqrf:
      return 2;
    case SolverRoutine::kOrgqr:
      return 1;
    case SolverRoutine::kGesvd:
    case SolverRoutine::kGesvdj:
      return 5;
  }
  return 0;
}

}  // namespace

std::string SolverPlan::ToString() const {
  std::string text = absl::StrCat(RoutineName(routine), " ", pu::LowercasePrimitiveTypeName(type),
                                  " batch=", batch, " m=", m, " n=", n);
  if (routine == SolverRoutine::kOrgqr) absl::StrAppend(&text, " k=", k);
  if (routine == SolverRoutine::kSyevd) {
    absl::StrAppend(&text, " uplo=", lower ? "lower" : "upper", " vectors=", vectors ? 1 : 0);
  }
  if (routine == SolverRoutine::kGesvd) {
    absl::StrAppend(&text, " job=", std::string(1, job), " u=", m, "x", u_cols, " vt=", vt_rows,
                    "x", n);
  }
  if (routine == SolverRoutine::kGesvdj) {
    absl::StrAppend(&text, " job=", std::string(1, job), " vectors=", vectors ? 1 : 0, " u=", m,
                    "x", u_cols, " v=", n, "x", vt_rows);
  }
  absl::StrAppend(&text, " workspace=", workspace_elements);
  return text;
}

bool IsSolverCall(const HloCustomCallInstruction& call) {
  return ParseTarget(call.custom_call_target()).has_value();
}

absl::StatusOr<SolverPlan> MakeSolverPlan(const HloCustomCallInstruction& call) {
  const std::optional<Target> target = ParseTarget(call.custom_call_target());
  if (!target.has_value()) return Refuse(call, "not a cuSOLVER routine of Axle's");
  SolverPlan plan;
  plan.routine = target->routine;
  const size_t operands = plan.routine == SolverRoutine::kOrgqr ? 2 : 1;
  if (static_cast<size_t>(call.operand_count()) != operands) {
    return Refuse(call, absl::StrCat("expected ", operands, " operand(s)"));
  }
  const Shape& a = call.operand(0)->shape();
  if (!a.IsArray() || a.rank() < 2) return Refuse(call, "operand 0 must be matrices [..., m, n]");
  plan.type = a.element_type();
  if (plan.type != F32 && plan.type != F64 && plan.type != C64 && plan.type != C128) {
    return Refuse(
        call, absl::StrCat("no cuSOLVER routine for ", pu::LowercasePrimitiveTypeName(plan.type)));
  }
  if (target->type.has_value() && *target->type != plan.type) {
    return Refuse(call, absl::StrCat("operand 0 is ", pu::LowercasePrimitiveTypeName(plan.type),
                                     ", not the target's type"));
  }
  if (!ColumnMajorMatrices(a)) {
    return Refuse(call, absl::StrCat("operand 0 ", ShapeUtil::HumanStringWithLayout(a),
                                     " must hold column-major matrices (jaxlib's layout)"));
  }
  const int64_t rank = a.rank();
  const absl::Span<const int64_t> batch = absl::MakeConstSpan(a.dimensions()).subspan(0, rank - 2);
  for (int64_t d : batch) plan.batch *= d;
  plan.m = a.dimensions(rank - 2);
  plan.n = a.dimensions(rank - 1);
  const int64_t mn = std::min(plan.m, plan.n);
  const PrimitiveType real =
      pu::IsComplexType(plan.type) ? pu::ComplexComponentType(plan.type) : plan.type;
  const Shape& shape = call.shape();
  const size_t results = ResultCount(plan.routine);
  if (results == 1
          ? !shape.IsArray()
          : !shape.IsTuple() || static_cast<size_t>(shape.tuple_shapes_size()) != results) {
    return Refuse(call, absl::StrCat("expected ", results, " result(s)"));
  }
  auto result = [&](int64_t i) -> const Shape& {
    return shape.IsTuple() ? shape.tuple_shapes(i) : shape;
  };
  if (!Is(result(0), plan.type, batch, {plan.m, plan.n})) {
    return Refuse(call, "result 0 must have operand 0's shape and layout");
  }
  absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(call.raw_backend_config_string());
  if (!attributes.ok()) return Refuse(call, attributes.status().message());
  switch (plan.routine) {
    case SolverRoutine::kGetrf:
      if (!Is(result(1), S32, batch, {mn}) || !Is(result(2), S32, batch, {})) {
        return Refuse(call, "results 1 and 2 must be s32 pivots [..., min(m, n)] and info [...]");
      }
      break;
    case SolverRoutine::kGeqrf:
      if (!Is(result(1), plan.type, batch, {mn})) {
        return Refuse(call, "result 1 must be tau [..., min(m, n)] of operand 0's type");
      }
      break;
    case SolverRoutine::kOrgqr: {
      const Shape& tau = call.operand(1)->shape();
      if (!tau.IsArray() || tau.rank() != rank - 1 || tau.element_type() != plan.type ||
          !Is(tau, plan.type, batch, {tau.dimensions(rank - 2)}) ||
          tau.dimensions(rank - 2) > plan.n || plan.n > plan.m) {
        return Refuse(call, "operand 1 must be tau [..., k] of operand 0's type, k <= n <= m");
      }
      plan.k = tau.dimensions(rank - 2);
      break;
    }
    case SolverRoutine::kSyevd: {
      if (plan.m != plan.n) return Refuse(call, "operand 0 must be square matrices");
      if (!Is(result(1), real, batch, {plan.n}) || !Is(result(2), S32, batch, {})) {
        return Refuse(call, "results 1 and 2 must be real eigenvalues [..., n] and s32 info [...]");
      }
      if (target->jaxlib_gpu) {
        absl::StatusOr<bool> lower = attributes->Get<bool>("lower");
        if (!lower.ok()) return Refuse(call, "attribute 'lower' (bool) missing");
        plan.lower = *lower;
        plan.vectors = true;
      } else {
        const std::optional<char> uplo = CharAttribute(*attributes, "uplo");
        const std::optional<char> mode = CharAttribute(*attributes, "mode");
        if (!uplo || !mode || (*uplo != 'L' && *uplo != 'U') || (*mode != 'V' && *mode != 'N')) {
          return Refuse(call, "attributes uplo ('L' or 'U') and mode ('V' or 'N') needed");
        }
        plan.lower = *uplo == 'L';
        plan.vectors = *mode == 'V';
      }
      break;
    }
    case SolverRoutine::kGesvd: {
      if (target->jaxlib_gpu) {
        absl::StatusOr<bool> full = attributes->Get<bool>("full_matrices");
        absl::StatusOr<bool> compute_uv = attributes->Get<bool>("compute_uv");
        absl::StatusOr<bool> transposed = attributes->Get<bool>("transposed");
        if (!full.ok() || !compute_uv.ok() || !transposed.ok()) {
          return Refuse(call, "attributes full_matrices, compute_uv and transposed (bool) needed");
        }
        if (*transposed) return Refuse(call, "transposed = true is not supported");
        plan.job = *compute_uv ? (*full ? 'A' : 'S') : 'N';
      } else {
        const std::optional<char> mode = CharAttribute(*attributes, "mode");
        if (!mode || (*mode != 'A' && *mode != 'S' && *mode != 'N')) {
          return Refuse(call, "attribute mode ('A', 'S' or 'N') needed");
        }
        plan.job = *mode;
      }
      if (plan.m < plan.n) {
        return Refuse(call, absl::StrCat("cuSOLVER's gesvd needs m >= n; the matrices are ", plan.m,
                                         " x ", plan.n));
      }
      plan.vectors = plan.job != 'N';
      plan.u_cols = plan.job == 'A' ? plan.m : mn;
      plan.vt_rows = plan.job == 'A' ? plan.n : mn;
      if (!Is(result(1), real, batch, {mn}) || !Is(result(4), S32, batch, {})) {
        return Refuse(call,
                      "results 1 and 4 must be real singular values [..., min(m, n)] and "
                      "s32 info [...]");
      }
      if (plan.vectors) {
        if (!Is(result(2), plan.type, batch, {plan.m, plan.u_cols}) ||
            !Is(result(3), plan.type, batch, {plan.vt_rows, plan.n})) {
          return Refuse(
              call, absl::StrCat("results 2 and 3 must be u [..., ", plan.m, ", ", plan.u_cols,
                                 "] and vt [..., ", plan.vt_rows, ", ", plan.n, "], column-major"));
        }
      } else if (!result(2).IsArray() || !result(3).IsArray()) {
        return Refuse(call, "results 2 and 3 must be arrays");
      }
      break;
    }
    case SolverRoutine::kGesvdj: {
      absl::StatusOr<bool> full = attributes->Get<bool>("full_matrices");
      absl::StatusOr<bool> compute_uv = attributes->Get<bool>("compute_uv");
      if (!full.ok() || !compute_uv.ok()) {
        return Refuse(call, "attributes full_matrices and compute_uv (bool) needed");
      }
      // jaxlib allocates u and v whether or not they are computed.
      plan.job = *full ? 'A' : 'S';
      plan.vectors = *compute_uv;
      plan.u_cols = *full ? plan.m : mn;
      plan.vt_rows = *full ? plan.n : mn;
      if (!Is(result(1), real, batch, {mn}) || !Is(result(4), S32, batch, {}) ||
          !Is(result(2), plan.type, batch, {plan.m, plan.u_cols}) ||
          !Is(result(3), plan.type, batch, {plan.n, plan.vt_rows})) {
        return Refuse(call, absl::StrCat("results 1 to 4 must be s [..., ", mn, "], u [..., ",
                                         plan.m, ", ", plan.u_cols, "] and v [..., ", plan.n, ", ",
                                         plan.vt_rows, "] (column-major), s32 info [...]"));
      }
      break;
    }
  }
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if (plan.m > kMaxInt || plan.n > kMaxInt || plan.m * plan.n > kMaxInt) {
    return Refuse(call, "a matrix of 2^31 elements or more");
  }
  plan.workspace_elements = PlannedWorkspace(plan);
  if (plan.workspace_elements > kMaxInt) {
    return Refuse(call, "a workspace of 2^31 elements or more");
  }
  return plan;
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeSolverThunk(const HloCustomCallInstruction& call,
                                                          GpuThunkValues values) {
  AXLE_ASSIGN_OR_RETURN(SolverPlan plan, MakeSolverPlan(call));
  AXLE_RETURN_IF_ERROR(CheckThunkValues(call, values, plan.routine == SolverRoutine::kOrgqr ? 2 : 1,
                                        ResultCount(plan.routine)));
  return std::unique_ptr<GpuThunk>(
      std::make_unique<SolverThunk>(call.name(), plan, std::move(values)));
}

}  // namespace axle::gpu
