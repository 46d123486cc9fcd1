//===- custom_call_status.h - How a custom call reports failure ------------===//
//
// XLA's ABI-stable status for the STATUS_RETURNING calling conventions: the
// runtime hands a custom call an `XlaCustomCallStatus*` that is in the
// success state; the call may set it to failure with a message. The C
// declarations are XLA's, with C linkage, so code written against
// xla/service/custom_call_status.h links against Axle unchanged.
//
// The runtime's side is `axle::CustomCallStatus`: it owns one status for one
// invocation and reads the message back afterwards.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_CUSTOM_CALL_STATUS_H_
#define AXLE_RUNTIME_CUSTOM_CALL_STATUS_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The result of a custom call: success (the default), or failure with a
// message.
typedef struct XlaCustomCallStatus_ XlaCustomCallStatus;

// Sets `status` to success.
void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus* status);

// Sets `status` to failure. Copies the first `message_len` bytes of
// `message`, or up to its NUL terminator if that comes first.
void XlaCustomCallStatusSetFailure(XlaCustomCallStatus* status, const char* message,
                                   size_t message_len);

#ifdef __cplusplus
}  // extern "C"

#include <memory>
#include <optional>
#include <string>

namespace axle {

// Reachable as xla::XlaCustomCallStatus through the compatibility headers
// (XLA's guide writes it both with and without the namespace).
using ::XlaCustomCallStatus;

// One status for one invocation of a custom call.
class CustomCallStatus {
 public:
  CustomCallStatus();
  ~CustomCallStatus();
  CustomCallStatus(const CustomCallStatus&) = delete;
  CustomCallStatus& operator=(const CustomCallStatus&) = delete;

  // What to pass to the custom call.
  XlaCustomCallStatus* get() { return status_.get(); }
  // nullopt while the status is success, else the failure message.
  std::optional<std::string> failure_message() const;

 private:
  struct Deleter {
    void operator()(XlaCustomCallStatus* status) const;
  };
  std::unique_ptr<XlaCustomCallStatus, Deleter> status_;
};

}  // namespace axle

#endif  // __cplusplus

#endif  // AXLE_RUNTIME_CUSTOM_CALL_STATUS_H_
