//===- conformance_custom_calls.cc - XLA's test-only custom-call targets ----===//
//
// The semantics are those of xla/tests/custom_call_test.cc. Like XLA's typed
// FFI bindings, each handler first checks the element types and ranks of
// its buffers (InvalidArgument on a mismatch).
//
//===----------------------------------------------------------------------===//
#include "tests/conformance_custom_calls.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/host_ffi.h"

namespace axle::testing {
namespace {

constexpr char kAlwaysFail[] = "__xla_test$$always_fail";

absl::Status Expect(const FfiCallFrame& call, size_t args, size_t rets) {
  if (call.args.size() != args || call.rets.size() != rets) {
    return absl::InvalidArgumentError(absl::StrCat("Wrong number of arguments: expected ", args,
                                                   " args and ", rets, " results, got ",
                                                   call.args.size(), " and ", call.rets.size()));
  }
  return absl::OkStatus();
}

absl::Status ExpectBuffer(const FfiBuffer& buffer, PrimitiveType type, int64_t rank,
                          absl::string_view what) {
  if (buffer.element_type != type || static_cast<int64_t>(buffer.dimensions.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": expected ", primitive_util::LowercasePrimitiveTypeName(type), " of rank ", rank,
        ", got ", primitive_util::LowercasePrimitiveTypeName(buffer.element_type), " of rank ",
        buffer.dimensions.size()));
  }
  return absl::OkStatus();
}

absl::Status AlwaysFail(const FfiCallFrame& call) {
  AXLE_ASSIGN_OR_RETURN(int32_t value, call.attributes.Get<int32_t>("value"));
  return absl::InternalError(absl::StrCat("Failed: ", value));
}

absl::Status FfiF32TupleSwap(const FfiCallFrame& call) {
  AXLE_RETURN_IF_ERROR(Expect(call, 2, 2));
  for (const FfiBuffer& b : call.args) AXLE_RETURN_IF_ERROR(ExpectBuffer(b, F32, 0, "arg"));
  for (const FfiBuffer& b : call.rets) AXLE_RETURN_IF_ERROR(ExpectBuffer(b, F32, 0, "ret"));
  *call.rets[0].typed_data<float>() = *call.args[1].typed_data<float>();
  *call.rets[1].typed_data<float>() = *call.args[0].typed_data<float>();
  return absl::OkStatus();
}

absl::Status FfiTupleRotate(const FfiCallFrame& call) {
  AXLE_RETURN_IF_ERROR(Expect(call, 4, 4));
  for (const FfiBuffer& b : call.args) AXLE_RETURN_IF_ERROR(ExpectBuffer(b, F32, 0, "arg"));
  for (const FfiBuffer& b : call.rets) AXLE_RETURN_IF_ERROR(ExpectBuffer(b, F32, 0, "ret"));
  for (int i = 0; i < 4; ++i) {
    *call.rets[i].typed_data<float>() = *call.args[(i + 1) % 4].typed_data<float>();
  }
  return absl::OkStatus();
}

absl::Status SwapTupleU32S16ToS16U32(const FfiCallFrame& call) {
  AXLE_RETURN_IF_ERROR(Expect(call, 2, 2));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(call.args[0], U32, 0, "arg 0"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(call.args[1], S16, 0, "arg 1"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(call.rets[0], S16, 0, "ret 0"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(call.rets[1], U32, 0, "ret 1"));
  *call.rets[0].typed_data<int16_t>() = *call.args[1].typed_data<int16_t>();
  *call.rets[1].typed_data<uint32_t>() = *call.args[0].typed_data<uint32_t>();
  return absl::OkStatus();
}

// x_out = x_1 * x_2 (u32 scalar times s16 vector, in C++'s unsigned
// arithmetic); y_out = y_2 (a batch of R2s) with y_1 appended.
absl::Status HandleTupleDifferentRanks(const FfiCallFrame& call) {
  AXLE_RETURN_IF_ERROR(Expect(call, 4, 2));
  const FfiBuffer &x1 = call.args[0], &x2 = call.args[1], &y1 = call.args[2], &y2 = call.args[3];
  const FfiBuffer &x_out = call.rets[0], &y_out = call.rets[1];
  AXLE_RETURN_IF_ERROR(ExpectBuffer(x1, U32, 0, "x_1"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(x2, S16, 1, "x_2"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(y1, F32, 2, "y_1"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(y2, F32, 3, "y_2"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(x_out, S32, 1, "x_out"));
  AXLE_RETURN_IF_ERROR(ExpectBuffer(y_out, F32, 3, "y_out"));
  if (x2.element_count() != x_out.element_count()) {
    return absl::FailedPreconditionError(
        "`x_2` parameter should have the same number of elements as `x_out`");
  }
  if (!std::equal(y1.dimensions.begin(), y1.dimensions.end(), y_out.dimensions.begin() + 1) ||
      y2.dimensions[0] + 1 != y_out.dimensions[0]) {
    return absl::FailedPreconditionError(
        "Cannot concatenate `y_1` and `y_2` due to dimensions mismatch. `y_2` dimensions should "
        "represent a batched `y_1`");
  }
  const uint32_t factor = *x1.typed_data<uint32_t>();
  for (int64_t i = 0; i < x2.element_count(); ++i) {
    uint32_t element = static_cast<uint32_t>(static_cast<int32_t>(x2.typed_data<int16_t>()[i]));
    x_out.typed_data<int32_t>()[i] = static_cast<int32_t>(factor * element);
  }
  float* last = std::copy_n(y2.typed_data<float>(), y2.element_count(), y_out.typed_data<float>());
  std::copy_n(y1.typed_data<float>(), y1.element_count(), last);
  return absl::OkStatus();
}

// out[e][v] = vec_v[e] for three f32[n,1] vectors and out f32[n,3].
absl::Status Concat3Vectors(const FfiCallFrame& call) {
  AXLE_RETURN_IF_ERROR(Expect(call, 3, 1));
  for (const FfiBuffer& b : call.args) AXLE_RETURN_IF_ERROR(ExpectBuffer(b, F32, 2, "vec"));
  const FfiBuffer& out = call.rets[0];
  AXLE_RETURN_IF_ERROR(ExpectBuffer(out, F32, 2, "out"));
  if (out.dimensions.back() != 3) {
    return absl::FailedPreconditionError("output dimension 0 expected to be 3");
  }
  for (const FfiBuffer& vec : call.args) {
    if (vec.element_count() < out.dimensions.front()) {
      return absl::FailedPreconditionError("a vector is shorter than the output");
    }
  }
  for (int64_t e = 0; e < out.dimensions.front(); ++e) {
    for (int v = 0; v < 3; ++v) {
      out.typed_data<float>()[e * 3 + v] = call.args[v].typed_data<float>()[e];
    }
  }
  return absl::OkStatus();
}

AXLE_FFI_REGISTER_HANDLER(kAlwaysFail, kHostPlatformName, AlwaysFail);
AXLE_FFI_REGISTER_HANDLER("__xla_test$$FfiF32TupleSwap", kHostPlatformName, FfiF32TupleSwap);
AXLE_FFI_REGISTER_HANDLER("__xla_test$$FfiTupleRotate", kHostPlatformName, FfiTupleRotate);
AXLE_FFI_REGISTER_HANDLER("__xla_test$$SwapTupleU32S16ToS16U32", kHostPlatformName,
                          SwapTupleU32S16ToS16U32);
AXLE_FFI_REGISTER_HANDLER("__xla_test$$HandleTupleDifferentRanks", kHostPlatformName,
                          HandleTupleDifferentRanks);
AXLE_FFI_REGISTER_HANDLER("__xla_test$$Concat3Vectors", kHostPlatformName, Concat3Vectors);

}  // namespace

bool IsExpectedCustomCallFailure(const absl::Status& status) {
  return absl::IsInternal(status) && absl::StrContains(status.message(), kAlwaysFail) &&
         absl::StrContains(status.message(), "Failed: ");
}

}  // namespace axle::testing
