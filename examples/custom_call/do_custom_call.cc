// XLA's custom-call guide, "Custom-call on CPU": A[i] = B[i % 128] + C[i].
// The function is the guide's, unchanged; only the include path is Axle's
// compat/include. The guide's do_it() builds the module with XlaBuilder;
// until Axle's builder exists the same module is written in do_it.hlo.

#include "xla/service/custom_call_target_registry.h"

void do_custom_call(void* out, const void** in) {
  float* out_buf = reinterpret_cast<float*>(out);
  const float* in0 = reinterpret_cast<const float*>(in[0]);
  const float* in1 = reinterpret_cast<const float*>(in[1]);
  for (int i = 0; i < 2048; ++i) {
    out_buf[i] = in0[i % 128] + in1[i];
  }
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call, "Host");
