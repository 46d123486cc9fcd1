//===- conformance_custom_calls.h - XLA's test-only custom-call targets -----===//
//
// conformance_custom_calls.cc registers, for platform "Host", the typed-FFI
// targets that XLA's custom_call_test.cc registers and the corpus's exec/
// modules call (`__xla_test$$Concat3Vectors`, `...$$FfiF32TupleSwap`, ...),
// with XLA's semantics. Linking the file is enough to register them.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_TESTS_CONFORMANCE_CUSTOM_CALLS_H_
#define AXLE_TESTS_CONFORMANCE_CUSTOM_CALLS_H_

#include "absl/status/status.h"

namespace axle::testing {

// True for the failure `__xla_test$$always_fail` is meant to produce: the
// expected outcome of the modules that call it.
bool IsExpectedCustomCallFailure(const absl::Status& status);

}  // namespace axle::testing

#endif  // AXLE_TESTS_CONFORMANCE_CUSTOM_CALLS_H_
