//===- hlo_opcode_test.cc - The opcode table's names, arity and properties --===//
#include "axle/hlo/ir/hlo_opcode.h"

#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(HloOpcode, NamesRoundTripThroughTheTable) {
  for (HloOpcode opcode : {HloOpcode::kAdd, HloOpcode::kExp, HloOpcode::kAllReduceStart}) {
    std::optional<HloOpcode> parsed = StringToHloOpcode(HloOpcodeString(opcode));
    ASSERT_TRUE(parsed.has_value()) << HloOpcodeString(opcode);
    EXPECT_EQ(*parsed, opcode);
  }
  EXPECT_EQ(HloOpcodeString(HloOpcode::kExp), "exponential");
  EXPECT_FALSE(StringToHloOpcode("no-such-op").has_value());
}

TEST(HloOpcode, TranscendentalsAreElementwiseAndArithmeticIsNot) {
  for (HloOpcode opcode :
       {HloOpcode::kExp, HloOpcode::kLog1p, HloOpcode::kTanh, HloOpcode::kPower, HloOpcode::kAtan2,
        HloOpcode::kSqrt, HloOpcode::kRsqrt, HloOpcode::kCbrt, HloOpcode::kErf}) {
    EXPECT_TRUE(HloOpcodeIsTranscendental(opcode)) << HloOpcodeString(opcode);
    EXPECT_TRUE(HloOpcodeIsElementwise(opcode)) << HloOpcodeString(opcode);
  }
  for (HloOpcode opcode :
       {HloOpcode::kAdd, HloOpcode::kMultiply, HloOpcode::kDivide, HloOpcode::kRemainder,
        HloOpcode::kAbs, HloOpcode::kReduce, HloOpcode::kDot}) {
    EXPECT_FALSE(HloOpcodeIsTranscendental(opcode)) << HloOpcodeString(opcode);
  }
}

}  // namespace
}  // namespace axle
