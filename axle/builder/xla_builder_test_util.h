//===- xla_builder_test_util.h - Helpers of the XlaBuilder tests ----------===//
//
// Shared by xla_builder_test.cc (each op family, evaluated) and
// xla_builder_errors_test.cc (errors, custom-call attributes, aliasing):
// shape shorthands, building with the verifier's check, and a scalar
// binary computation for reduce/map/scatter operands.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BUILDER_XLA_BUILDER_TEST_UTIL_H_
#define AXLE_BUILDER_XLA_BUILDER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "axle/builder/xla_builder.h"
#include "axle/hlo/analysis/hlo_verifier.h"

namespace axle {
namespace builder_test {

inline Shape ShapeF32(std::vector<int64_t> dims) { return ShapeUtil::MakeShape(F32, dims); }
inline Shape ShapeS32(std::vector<int64_t> dims) { return ShapeUtil::MakeShape(S32, dims); }

// Builds, checks that the module verifies, and returns the computation.
inline XlaComputation BuildOk(XlaBuilder& b) {
  absl::StatusOr<XlaComputation> computation = b.Build();
  EXPECT_TRUE(computation.ok()) << computation.status();
  if (!computation.ok()) return XlaComputation();
  absl::Status verified = VerifyHloModule(computation->module());
  EXPECT_TRUE(verified.ok()) << verified << "\n" << computation->ToString();
  return *std::move(computation);
}

// A scalar computation (x, y) -> op(x, y) built by its own builder.
inline XlaComputation ScalarBinary(PrimitiveType type,
                                   XlaOp (*op)(XlaOp, XlaOp, absl::Span<const int64_t>),
                                   const std::string& name) {
  XlaBuilder b(name);
  op(Parameter(&b, 0, ShapeUtil::MakeScalarShape(type), "x"),
     Parameter(&b, 1, ShapeUtil::MakeScalarShape(type), "y"), {});
  return BuildOk(b);
}

}  // namespace builder_test
}  // namespace axle

#endif  // AXLE_BUILDER_XLA_BUILDER_TEST_UTIL_H_
