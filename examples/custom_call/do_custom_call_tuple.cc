// XLA's custom-call guide, "Passing tuples to custom-calls" and "Tuple
// outputs as temp buffers". The guide gives the shapes, not a body:
//   p0  = (f32[32], (f32[64], f32[128]), f32[256])
//   out = (f32[512], f32[1024])   -- f32[1024] used as a temp buffer
// On the CPU `in` has one element, which points at p0's tuple: an array of
// pointers (the inner tuple is again an array of pointers); `out` points at
// an array of pointers to the two output buffers. This body computes
//   temp[j]   = subbuf1[j % 64] * subbuf2[j % 128]          (j < 1024)
//   out0[i]   = subbuf0[i % 32] + subbuf3[i % 256] + temp[i] + temp[i + 512]

#include "xla/service/custom_call_target_registry.h"

void do_custom_call_tuple(void* out, const void** in) {
  void* const* p0 = reinterpret_cast<void* const*>(in[0]);
  const float* subbuf0 = reinterpret_cast<const float*>(p0[0]);
  void* const* subtuple = reinterpret_cast<void* const*>(p0[1]);
  const float* subbuf1 = reinterpret_cast<const float*>(subtuple[0]);
  const float* subbuf2 = reinterpret_cast<const float*>(subtuple[1]);
  const float* subbuf3 = reinterpret_cast<const float*>(p0[2]);

  void** output_tuple = reinterpret_cast<void**>(out);
  float* out0 = reinterpret_cast<float*>(output_tuple[0]);
  float* temp = reinterpret_cast<float*>(output_tuple[1]);

  for (int j = 0; j < 1024; ++j) temp[j] = subbuf1[j % 64] * subbuf2[j % 128];
  for (int i = 0; i < 512; ++i) {
    out0[i] = subbuf0[i % 32] + subbuf3[i % 256] + temp[i] + temp[i + 512];
  }
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call_tuple, "Host");
