// XLA's custom-call guide, "Signalling an error": the status-returning
// signature (API_VERSION_STATUS_RETURNING). The guide leaves the work and
// `bad_condition` open; here the work is do_custom_call's and the bad
// condition is a NaN in B. The function is named apart from do_custom_call
// so that both examples can live in one program (registering one name twice
// with different functions is an error), and the guide's
// `char* error_message = "..."` is written `const char*` (C++ rejects
// the former).

#include <cmath>
#include <cstring>

#include "xla/service/custom_call_status.h"
#include "xla/service/custom_call_target_registry.h"

void do_custom_call_with_status(void* out, const void** in, XlaCustomCallStatus* status) {
  float* out_buf = reinterpret_cast<float*>(out);
  const float* in0 = reinterpret_cast<const float*>(in[0]);
  const float* in1 = reinterpret_cast<const float*>(in[1]);

  bool bad_condition = false;
  for (int i = 0; i < 128; ++i) bad_condition |= std::isnan(in0[i]);
  if (bad_condition) {
    const char* error_message = "An error occurred";
    XlaCustomCallStatusSetFailure(status, error_message, strlen(error_message));
    return;
  }

  for (int i = 0; i < 2048; ++i) {
    out_buf[i] = in0[i % 128] + in1[i];
  }
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call_with_status, "Host");
