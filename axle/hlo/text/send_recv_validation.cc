//===- send_recv_validation.cc - XLA's _xla_send_recv_validation -----------===//
#include "axle/hlo/text/send_recv_validation.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/text/attribute_text.h"

namespace axle {

absl::StatusOr<SendRecvValidation> ParseSendRecvValidation(absl::string_view text,
                                                           size_t num_pairs) {
  SendRecvValidation validation;
  if (text == "invalid") {
    validation.never = true;
    return validation;
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> lists,
                        ParseInt64ListList(text, kSendRecvValidationAttribute));
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad ", kSendRecvValidationAttribute, " \"", text, "\": ", why));
  };
  if (lists.size() != num_pairs) {
    return bad(absl::StrCat(lists.size(), " ranges for ", num_pairs,
                            " source-target pairs (one range [first, last] per pair, or "
                            "\"invalid\")"));
  }
  for (const std::vector<int64_t>& range : lists) {
    if (range.size() != 2 || range[0] < 0) {
      return bad("each range is two execution numbers [first, last], first >= 0");
    }
    validation.ranges.emplace_back(range[0], range[1]);
  }
  return validation;
}

}  // namespace axle
