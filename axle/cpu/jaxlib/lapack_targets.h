//===- lapack_targets.h - jaxlib's LAPACK custom-call targets on Axle ------===//
//
// The typed-FFI handlers (api_version=API_VERSION_TYPED_FFI) that jaxlib's
// CPU lowering of jnp.linalg, jax.scipy.linalg and lax.linalg calls, with
// jaxlib's operands, results, attributes and info outputs, computed by
// LAPACK (axle_jaxlib links Debian's OpenBLAS, or the reference LAPACK).
// Linking axle_jaxlib (axle_cpu_runtime and Axle::axle link it) registers
// each for platform "Host" under jaxlib's target name, "lapack_spotrf_ffi"
// for axle_jaxlib_lapack_spotrf_ffi and so on; both the `interpreter` and
// the `cpu` platform then run them.
//
// Conventions (jaxlib's): matrices are column-major with the batch
// dimensions leading (the custom calls carry operand_layout_constraints and
// result layouts {..., n-2, n-1} saying so); info outputs are s32[batch...]
// with LAPACK's INFO per matrix; char attributes are `ui8` integers
// (`uplo = 76 : ui8` is 'L'). Each family's file documents its operands.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_JAXLIB_LAPACK_TARGETS_H_
#define AXLE_CPU_JAXLIB_LAPACK_TARGETS_H_

#include "axle/runtime/ffi/ffi_api.h"

// X(family, s, d, c, z): the handler name infixes per element type f32, f64,
// c64, c128.
#define AXLE_JAXLIB_LAPACK_FAMILIES(X)     \
  X(trsm, strsm, dtrsm, ctrsm, ztrsm)      \
  X(potrf, spotrf, dpotrf, cpotrf, zpotrf) \
  X(getrf, sgetrf, dgetrf, cgetrf, zgetrf) \
  X(geqrf, sgeqrf, dgeqrf, cgeqrf, zgeqrf) \
  X(geqp3, sgeqp3, dgeqp3, cgeqp3, zgeqp3) \
  X(orgqr, sorgqr, dorgqr, cungqr, zungqr) \
  X(ormqr, sormqr, dormqr, cunmqr, zunmqr) \
  X(syevd, ssyevd, dsyevd, cheevd, zheevd) \
  X(gesdd, sgesdd, dgesdd, cgesdd, zgesdd) \
  X(gesvd, sgesvd, dgesvd, cgesvd, zgesvd) \
  X(geev, sgeev, dgeev, cgeev, zgeev)      \
  X(gees, sgees, dgees, cgees, zgees)      \
  X(gehrd, sgehrd, dgehrd, cgehrd, zgehrd) \
  X(sytrd, ssytrd, dsytrd, chetrd, zhetrd) \
  X(gtsv, sgtsv, dgtsv, cgtsv, zgtsv)

#define AXLE_JAXLIB_DECLARE_FAMILY(family, s, d, c, z)          \
  XLA_FFI_DECLARE_HANDLER_SYMBOL(axle_jaxlib_lapack_##s##_ffi); \
  XLA_FFI_DECLARE_HANDLER_SYMBOL(axle_jaxlib_lapack_##d##_ffi); \
  XLA_FFI_DECLARE_HANDLER_SYMBOL(axle_jaxlib_lapack_##c##_ffi); \
  XLA_FFI_DECLARE_HANDLER_SYMBOL(axle_jaxlib_lapack_##z##_ffi);
AXLE_JAXLIB_LAPACK_FAMILIES(AXLE_JAXLIB_DECLARE_FAMILY)
#undef AXLE_JAXLIB_DECLARE_FAMILY

// jaxlib's own kernel for `tridiagonal_solve(..., perturb_singular=True)`,
// one target for every dtype: "tridiagonal_solve_perturbed_ffi".
XLA_FFI_DECLARE_HANDLER_SYMBOL(axle_jaxlib_tridiagonal_solve_perturbed_ffi);

#endif  // AXLE_CPU_JAXLIB_LAPACK_TARGETS_H_
