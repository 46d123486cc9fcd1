// Every forwarding header of compat/include, from both trees (xla/ and
// tensorflow/compiler/xla/), compiles in one translation unit, and XLA's
// spellings of what they reach compile and mean what they do in XLA.
#include <gtest/gtest.h>

#include <type_traits>

#include "compat_all_headers.inc"  // generated from compat/headers.txt

namespace {

// HloInputOutputAliasConfig::AliasKind is a plain enum, as in XLA.
static_assert(xla::HloInputOutputAliasConfig::kMustAlias ==
              xla::HloInputOutputAliasConfig::AliasKind::kMustAlias);
static_assert(std::is_same_v<xla::HloModule, axle::HloModule>);
static_assert(std::is_same_v<xla::Literal, axle::Literal>);
static_assert(std::is_same_v<stream_executor::DeviceMemoryBase, axle::se::DeviceMemoryBase>);

TEST(CompatHeadersTest, XlasSpellingsWork) {
  xla::HloInputOutputAliasConfig config;
  ASSERT_TRUE(config.SetUpAlias({0}, 1, {}, xla::HloInputOutputAliasConfig::kMustAlias).ok());
  ASSERT_EQ(config.aliases().size(), 1u);
  EXPECT_TRUE(config.aliases()[0].must_alias());
  xla::Literal literal = xla::LiteralUtil::CreateR0<float>(2.5f);
  EXPECT_EQ(literal.data<float>()[0], 2.5f);
}

#ifdef AXLE_HAVE_HLO_PROTO
// The usual way from parsed text to a computation in XLA.
TEST(CompatHeadersTest, XlaComputationFromModuleToProto) {
  absl::StatusOr<std::unique_ptr<xla::HloModule>> module = xla::ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  xla::HloModuleProto proto = (*module)->ToProto();
  xla::XlaComputation computation(proto);
  ASSERT_FALSE(computation.IsNull());
  EXPECT_EQ(computation.ToString(), (*module)->ToString());
  xla::XlaComputation direct((*module)->ToProto());
  EXPECT_FALSE(direct.IsNull());
  std::unique_ptr<xla::HloModule> back =
      *xla::HloModule::CreateFromProto(proto, xla::HloModuleConfig());
  EXPECT_EQ(back->ToString(), (*module)->ToString());
}
#endif

}  // namespace
