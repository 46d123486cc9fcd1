// XLA's custom-call guide, "Custom-call on CPU" with XLA FFI: the typed-FFI
// handler for A[i] = B[i % 128] + C[i], registered for "Host". The guide's
// snippet does not compile as printed (against XLA either), so it is taken
// with the smallest fixes to XLA's current API: `dimensions()[0]` and
// `typed_data()` for the members it names `dimensions[0]` and `data`, the
// missing `return ffi::Error::Success();`, `namespace ffi = xla::ffi;` and
// `BufferF32` for the undeclared `Buffer` in the binding. The guide's do_it()
// builder code is do_it_ffi.hlo (the builder form is do_custom_call.cc's).

#include <cassert>
#include <cstddef>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// Constrain custom call arguments to rank-1 buffers of F32 data type.
using BufferF32 = xla::ffi::BufferR1<xla::ffi::DataType::F32>;

// Implement a custom call as a C++ function. Note that we can use `Buffer` type
// defined by XLA FFI that gives us access to buffer data type and shape.
xla::ffi::Error do_custom_call(BufferF32 in0, BufferF32 in1, xla::ffi::Result<BufferF32> out) {
  size_t d0 = in0.dimensions()[0];
  size_t d1 = in1.dimensions()[0];

  // Check that dimensions are compatible.
  assert(out->dimensions()[0] == d1 && "unexpected dimensions");

  for (size_t i = 0; i < d1; ++i) {
    out->typed_data()[i] = in0.typed_data()[i % d0] + in1.typed_data()[i];
  }
  return ffi::Error::Success();
}

// Explicitly define an XLA FFI handler signature and bind it to the
// `do_custom_call` implementation.
XLA_FFI_DEFINE_HANDLER(handler, do_custom_call,
                       ffi::Ffi::Bind().Arg<BufferF32>().Arg<BufferF32>().Ret<BufferF32>());

// Registers `handler` with and XLA FFI on a "Host" platform.
XLA_FFI_REGISTER_HANDLER(xla::ffi::GetXlaFfiApi(), "do_custom_call", "Host", handler);
