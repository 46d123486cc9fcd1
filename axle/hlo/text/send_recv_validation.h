//===- send_recv_validation.h - XLA's _xla_send_recv_validation ------------===//
//
// XLA's frontend attribute _xla_send_recv_validation (collective_ops_utils.h;
// its pipelining passes set it on send/recv in loops) says which executions
// of a send or recv, counted from 0 in each run of the program, move data:
//
//   "invalid"          none
//   "{{2,3},{5,7}}"    one inclusive range per source-target pair
//                      (_xla_send_recv_source_target_pairs), in the pairs'
//                      order: pair 0 moves data on executions 2 and 3 only,
//                      pair 1 on executions 5 to 7
//
// On the other executions the pair's send sends nothing and its recv
// leaves its buffer as it was (unspecified in XLA). No attribute: every
// execution moves data.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_SEND_RECV_VALIDATION_H_
#define AXLE_HLO_TEXT_SEND_RECV_VALIDATION_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace axle {

inline constexpr char kSendRecvValidationAttribute[] = "_xla_send_recv_validation";

struct SendRecvValidation {
  bool never = false;
  // One [first, last] per pair; empty (and not `never`): every execution.
  std::vector<std::pair<int64_t, int64_t>> ranges;

  bool Moves(size_t pair, int64_t execution) const {
    if (never) return false;
    if (ranges.empty()) return true;
    return execution >= ranges[pair].first && execution <= ranges[pair].second;
  }
  // Whether every pair moves data on every execution.
  bool always() const { return !never && ranges.empty(); }
};

// The attribute's `text` for a send or recv with `num_pairs` pairs. Text
// that is not "invalid" or a list of `num_pairs` ranges [first, last] with
// first >= 0 is InvalidArgument quoting it (XLA's runtime ignores such
// text; here it is an error; the caller names the instruction).
absl::StatusOr<SendRecvValidation> ParseSendRecvValidation(absl::string_view text,
                                                           size_t num_pairs);

}  // namespace axle

#endif  // AXLE_HLO_TEXT_SEND_RECV_VALIDATION_H_
