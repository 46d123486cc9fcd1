//===- register_lapack_targets.cc - jaxlib's LAPACK targets for "Host" -----===//
//
// Registers every handler of lapack_targets.h under jaxlib's target name.
// The link options of axle_jaxlib reference the anchor below, so this object
// file, and through its references every handler's, is kept in any program
// that links the library statically.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/jaxlib/lapack_targets.h"

extern "C" {
int axle_jaxlib_lapack_anchor = 0;
}

#define AXLE_JAXLIB_REGISTER(x)                                                      \
  XLA_FFI_REGISTER_HANDLER(::axle::ffi::GetXlaFfiApi(), "lapack_" #x "_ffi", "Host", \
                           axle_jaxlib_lapack_##x##_ffi)
#define AXLE_JAXLIB_REGISTER_FAMILY(family, s, d, c, z) \
  AXLE_JAXLIB_REGISTER(s);                              \
  AXLE_JAXLIB_REGISTER(d);                              \
  AXLE_JAXLIB_REGISTER(c);                              \
  AXLE_JAXLIB_REGISTER(z);
AXLE_JAXLIB_LAPACK_FAMILIES(AXLE_JAXLIB_REGISTER_FAMILY)
XLA_FFI_REGISTER_HANDLER(::axle::ffi::GetXlaFfiApi(), "tridiagonal_solve_perturbed_ffi", "Host",
                         axle_jaxlib_tridiagonal_solve_perturbed_ffi);
