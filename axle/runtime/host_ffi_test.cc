//===- host_ffi_test.cc - Typed FFI on the host: attributes and calls ------===//
#include "axle/runtime/host_ffi.h"

#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/host_custom_call.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FfiAttributes, ParsesMlirDictionaries) {
  absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(
      R"({value = 2 : i32, n = 3.5 : f32, whole = 4 : f64, neg = -7 : i64, flag = true,
          off = false, name = "a \"b\"", sizes = array<i64: 1, -2, 3>, scales = array<f32: 0.5, 2.0>,
          "quoted key" = 1, empty = array<i32>})");
  ASSERT_TRUE(attributes.ok()) << attributes.status();
  EXPECT_EQ(attributes->size(), 11u);
  EXPECT_EQ(*attributes->Get<int32_t>("value"), 2);
  EXPECT_EQ(*attributes->Get<float>("n"), 3.5f);
  EXPECT_EQ(*attributes->Get<double>("whole"), 4.0);
  EXPECT_EQ(*attributes->Get<int64_t>("neg"), -7);
  EXPECT_EQ(*attributes->Get<bool>("flag"), true);
  EXPECT_EQ(*attributes->Get<bool>("off"), false);
  EXPECT_EQ(*attributes->Get<std::string>("name"), "a \"b\"");
  EXPECT_THAT(*attributes->Get<std::vector<int64_t>>("sizes"), ElementsAre(1, -2, 3));
  EXPECT_THAT(*attributes->Get<std::vector<double>>("scales"), ElementsAre(0.5, 2.0));
  EXPECT_EQ(*attributes->Get<int>("quoted key"), 1);
  EXPECT_TRUE(attributes->Get<std::vector<int64_t>>("empty")->empty());
}

TEST(FfiAttributes, ParsesNestedDictionaries) {
  absl::StatusOr<FfiAttributes> attributes =
      ParseFfiAttributes("{range = {lo = 1 : i32, hi = {x = true}}, n = 2 : i32}");
  ASSERT_TRUE(attributes.ok()) << attributes.status();
  auto range = attributes->Get<std::shared_ptr<const FfiAttributes>>("range");
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(*(*range)->Get<int32_t>("lo"), 1);
  EXPECT_EQ((*range)->ElementType("lo"), "i32");
  EXPECT_EQ(*(*(*range)->Get<std::shared_ptr<const FfiAttributes>>("hi"))->Get<bool>("x"), true);
  EXPECT_EQ(attributes->ElementType("n"), "i32");
  EXPECT_EQ(attributes->ElementType("range"), "");
}

TEST(FfiAttributes, EmptyConfigsHaveNoAttributes) {
  EXPECT_EQ(ParseFfiAttributes("")->size(), 0u);
  EXPECT_EQ(ParseFfiAttributes("  {}  ")->size(), 0u);
}

TEST(FfiAttributes, GetChecksKindAndRange) {
  absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes("{big = 300 : i32, s = \"x\"}");
  ASSERT_TRUE(attributes.ok());
  EXPECT_THAT(attributes->Get<int8_t>("big").status().message(), HasSubstr("out of range"));
  EXPECT_THAT(attributes->Get<int32_t>("s").status().message(), HasSubstr("not an integer"));
  EXPECT_THAT(attributes->Get<int32_t>("missing").status().message(),
              HasSubstr("missing attribute 'missing'"));
}

TEST(FfiAttributes, RejectsMalformedText) {
  for (const char* text : {"{value 2}", "{value = }", "{a = 1", "value = 1", "{a = \"x}",
                           "{a = array<i32: 1, 2}", "{a = 1} trailing"}) {
    absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(text);
    EXPECT_EQ(attributes.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

TEST(FfiHandlerRegistry, RejectsDuplicates) {
  FfiHandlerRegistry registry;
  FfiHandler handler = [](const FfiCallFrame&) { return absl::OkStatus(); };
  EXPECT_TRUE(registry.Register("h", "Host", handler).ok());
  EXPECT_EQ(registry.Register("h", "Host", handler).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(registry.Register("h", "CUDA", handler).ok());
  EXPECT_EQ(registry.Find("g", "Host").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(registry.Find("g", "Host").status().message(), HasSubstr("'g' on platform \"Host\""));
}

// --- Calls -------------------------------------------------------------------

absl::StatusOr<Literal> RunWith(const FfiHandlerRegistry& handlers, absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  CustomCallTargetRegistry targets;
  HloEvaluator evaluator;
  evaluator.set_custom_call_handler(MakeHostCustomCallHandler(&targets, &handlers));
  return evaluator.Evaluate(**module, {});
}

TEST(HostFfi, TuplesAreFlattenedAndAttributesPassed) {
  FfiHandlerRegistry handlers;
  std::vector<std::string> seen;
  ASSERT_TRUE(handlers
                  .Register("scale_all", "Host",
                            [&](const FfiCallFrame& call) -> absl::Status {
                              absl::StatusOr<float> factor = call.attributes.Get<float>("factor");
                              if (!factor.ok()) return factor.status();
                              for (const FfiBuffer& arg : call.args) {
                                seen.push_back(absl::StrCat(
                                    primitive_util::LowercasePrimitiveTypeName(arg.element_type),
                                    "x", arg.element_count()));
                              }
                              // rets: f32[2], s32[3] in pre-order of ((f32[2]), s32[3]).
                              float* r0 = call.rets[0].typed_data<float>();
                              int32_t* r1 = call.rets[1].typed_data<int32_t>();
                              const float* a = call.args[0].typed_data<float>();
                              const int32_t* b = call.args[1].typed_data<int32_t>();
                              for (int i = 0; i < 2; ++i) r0[i] = a[i] * *factor;
                              for (int i = 0; i < 3; ++i) r1[i] = b[i] * 2;
                              return absl::OkStatus();
                            })
                  .ok());
  absl::StatusOr<Literal> result = RunWith(handlers, R"(
    HloModule m
    ENTRY e {
      a = f32[2] constant({1, 2})
      b = s32[3] constant({3, 4, 5})
      t = (f32[2], s32[3]) tuple(a, b)
      c = u8[] constant(9)
      ROOT cc = ((f32[2]), s32[3]) custom-call(t, c), custom_call_target="scale_all",
                api_version=API_VERSION_TYPED_FFI, backend_config="{factor = 0.5 : f32}"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(seen, ElementsAre("f32x2", "s32x3", "u8x1"));
  EXPECT_EQ(result->GetSubliteral({0, 0}), LiteralUtil::CreateR1<float>({0.5f, 1.0f}));
  EXPECT_EQ(result->GetSubliteral({1}), LiteralUtil::CreateR1<int32_t>({6, 8, 10}));
}

TEST(HostFfi, AliasedResultIsTheOperandBuffer) {
  FfiHandlerRegistry handlers;
  bool aliased = false;
  ASSERT_TRUE(handlers
                  .Register("in_place", "Host",
                            [&](const FfiCallFrame& call) {
                              aliased = call.rets[0].data == call.args[0].data;
                              *call.args[0].typed_data<float>() += 2;
                              return absl::OkStatus();
                            })
                  .ok());
  absl::StatusOr<Literal> result = RunWith(handlers, R"(
    HloModule m
    ENTRY e {
      c = f32[] constant(42)
      ROOT cc = f32[] custom-call(c), custom_call_target="in_place",
                api_version=API_VERSION_TYPED_FFI, output_to_operand_aliasing={{}: (0, {})}
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(aliased);
  EXPECT_EQ(result->GetFirstElement<float>(), 44.0f);
}

TEST(HostFfi, FailureKeepsTheHandlersCode) {
  FfiHandlerRegistry handlers;
  ASSERT_TRUE(handlers
                  .Register("always_fail", "Host",
                            [](const FfiCallFrame& call) -> absl::Status {
                              return absl::InternalError(
                                  absl::StrCat("Failed: ", *call.attributes.Get<int32_t>("value")));
                            })
                  .ok());
  absl::StatusOr<Literal> result = RunWith(handlers, R"(
    HloModule m
    ENTRY e {
      ROOT cc = f32[] custom-call(), custom_call_target="always_fail",
                api_version=API_VERSION_TYPED_FFI, backend_config="{value = 42 : i32}"
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("Failed: 42"));
}

TEST(HostFfi, BadBackendConfigIsInvalidArgument) {
  FfiHandlerRegistry handlers;
  ASSERT_TRUE(
      handlers.Register("h", "Host", [](const FfiCallFrame&) { return absl::OkStatus(); }).ok());
  absl::StatusOr<Literal> result = RunWith(handlers, R"(
    HloModule m
    ENTRY e {
      ROOT cc = f32[] custom-call(), custom_call_target="h",
                api_version=API_VERSION_TYPED_FFI, backend_config="{value = }"
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostFfi, UntypedCallOfAnFfiHandlerSaysSo) {
  FfiHandlerRegistry handlers;
  ASSERT_TRUE(
      handlers.Register("h", "Host", [](const FfiCallFrame&) { return absl::OkStatus(); }).ok());
  absl::StatusOr<Literal> result = RunWith(handlers, R"(
    HloModule m
    ENTRY e {
      ROOT cc = f32[] custom-call(), custom_call_target="h"
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(result.status().message(), HasSubstr("API_VERSION_TYPED_FFI"));
}

}  // namespace
}  // namespace axle
