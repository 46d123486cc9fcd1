//===- status_macros.h - Propagating absl::Status --------------------------===//
//
// RETURN_IF_ERROR / ASSIGN_OR_RETURN for absl::Status and absl::StatusOr, under
// Axle's names and under the TF_ names XLA code uses.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_STATUS_MACROS_H_
#define AXLE_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define AXLE_CONCAT_INNER_(a, b) a##b
#define AXLE_CONCAT_(a, b) AXLE_CONCAT_INNER_(a, b)

#define AXLE_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::absl::Status axle_status_ = (expr);        \
    if (!axle_status_.ok()) return axle_status_; \
  } while (0)

#define AXLE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#define AXLE_ASSIGN_OR_RETURN(lhs, rexpr) \
  AXLE_ASSIGN_OR_RETURN_IMPL_(AXLE_CONCAT_(axle_statusor_, __LINE__), lhs, rexpr)

#ifndef TF_RETURN_IF_ERROR
#define TF_RETURN_IF_ERROR(expr) AXLE_RETURN_IF_ERROR(expr)
#endif
#ifndef TF_ASSIGN_OR_RETURN
#define TF_ASSIGN_OR_RETURN(lhs, rexpr) AXLE_ASSIGN_OR_RETURN(lhs, rexpr)
#endif

#endif  // AXLE_BASE_STATUS_MACROS_H_
