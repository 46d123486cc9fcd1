//===- custom_call_status.cc - XlaCustomCallStatus -------------------------===//
#include "axle/runtime/custom_call_status.h"

#include <cstring>

struct XlaCustomCallStatus_ {
  std::optional<std::string> message;  // nullopt: success
};

extern "C" void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus* status) {
  status->message.reset();
}

extern "C" void XlaCustomCallStatusSetFailure(XlaCustomCallStatus* status, const char* message,
                                              size_t message_len) {
  size_t length = message == nullptr ? 0 : strnlen(message, message_len);
  status->message = std::string(message == nullptr ? "" : message, length);
}

namespace axle {

CustomCallStatus::CustomCallStatus() : status_(new XlaCustomCallStatus) {}
CustomCallStatus::~CustomCallStatus() = default;

std::optional<std::string> CustomCallStatus::failure_message() const { return status_->message; }

void CustomCallStatus::Deleter::operator()(XlaCustomCallStatus* status) const { delete status; }

}  // namespace axle
