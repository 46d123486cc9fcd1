//===- custom_call_examples_test.cc - XLA's custom-call guide, run ---------===//
//
// Runs the guide's CPU examples (compiled against compat/include) through
// the evaluator with the host custom-call handler, and on the `cpu`
// platform (CustomCallThunk, on the executable's buffers), and checks the
// values.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>

#include "axle/builder/xla_builder.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/host_custom_call.h"
#include "axle/runtime/local_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
// XLA's older include paths forward to the same declarations.
#include "tensorflow/compiler/xla/service/custom_call_status.h"
#include "tensorflow/compiler/xla/service/custom_call_target_registry.h"
#include "xla/service/custom_call_status.h"

// The guide writes the status type both as `XlaCustomCallStatus` and as
// `xla::XlaCustomCallStatus`.
static_assert(std::is_same_v<xla::XlaCustomCallStatus, XlaCustomCallStatus>);
static_assert(std::is_same_v<decltype(xla::CustomCallTargetRegistry::Global()),
                             axle::CustomCallTargetRegistry*>);

void do_it();  // do_custom_call.cc: the guide's builder code

namespace axle {
namespace {

using ::testing::HasSubstr;

// Runs `module` on `args`: "evaluator" is HloEvaluator with the host
// custom-call handler; any other name is a platform, through LocalClient.
absl::StatusOr<Literal> RunModule(const std::string& runner, std::unique_ptr<HloModule> module,
                                  std::vector<const Literal*> args) {
  if (runner == "evaluator") {
    HloEvaluator evaluator;
    InstallHostCustomCalls(&evaluator);
    return evaluator.Evaluate(*module, args);
  }
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform(runner);
  if (!platform.ok()) return platform.status();
  absl::StatusOr<LocalClient*> client = ClientLibrary::GetOrCreateLocalClient(*platform);
  if (!client.ok()) return client.status();
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable =
      (*client)->Compile(std::move(module), ExecutableBuildOptions());
  if (!executable.ok()) return executable.status();
  std::vector<ScopedShapedBuffer> buffers;
  std::vector<const ShapedBuffer*> pointers;
  for (const Literal* arg : args) {
    absl::StatusOr<ScopedShapedBuffer> buffer = (*client)->LiteralToShapedBuffer(*arg, 0);
    if (!buffer.ok()) return buffer.status();
    buffers.push_back(*std::move(buffer));
  }
  for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
  absl::StatusOr<ScopedShapedBuffer> result = (*executable)->Run(pointers, {});
  if (!result.ok()) return result.status();
  return (*client)->ShapedBufferToLiteral(*result);
}

absl::StatusOr<Literal> RunExample(const std::string& runner, const std::string& hlo_file,
                                   std::vector<const Literal*> args) {
  std::ifstream in(std::string(AXLE_SOURCE_DIR) + "/examples/custom_call/" + hlo_file);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseAndReturnUnverifiedModule(text.str(), hlo_file);
  if (!module.ok()) return module.status();
  return RunModule(runner, *std::move(module), std::move(args));
}

// Each test runs on the evaluator and on the cpu platform.
class CustomCallGuide : public ::testing::TestWithParam<std::string> {
 protected:
  absl::StatusOr<Literal> RunExample(const std::string& hlo_file,
                                     std::vector<const Literal*> args) {
    return axle::RunExample(GetParam(), hlo_file, std::move(args));
  }
};

INSTANTIATE_TEST_SUITE_P(Runners, CustomCallGuide, ::testing::Values("evaluator", "cpu"),
                         [](const auto& info) { return std::string(info.param); });

Literal Iota(int64_t n, float scale) {
  Literal literal(ShapeUtil::MakeShape(F32, {n}));
  for (int64_t i = 0; i < n; ++i) literal.data<float>()[i] = scale * static_cast<float>(i);
  return literal;
}

TEST_P(CustomCallGuide, DoCustomCall) {
  Literal b = Iota(128, 1.0f), c = Iota(2048, 0.25f);
  absl::StatusOr<Literal> result = RunExample("do_it.hlo", {&b, &c});
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 2048; ++i) {
    ASSERT_EQ(result->data<float>()[i], static_cast<float>(i % 128) + 0.25f * i) << i;
  }
}

TEST_P(CustomCallGuide, DoItBuildsTheModuleOfDoItHlo) {
  do_it();  // the guide's function runs (and drops what it built)
  // The same builder calls, keeping the result, give do_it.hlo's module.
  XlaBuilder b("do_it");
  XlaOp param0 = Parameter(&b, 0, ShapeUtil::MakeShape(F32, {128}), "p0");
  XlaOp param1 = Parameter(&b, 1, ShapeUtil::MakeShape(F32, {2048}), "p1");
  CustomCall(&b, "do_custom_call", {param0, param1}, ShapeUtil::MakeShape(F32, {2048}));
  absl::StatusOr<XlaComputation> computation = b.Build();
  ASSERT_TRUE(computation.ok()) << computation.status();

  Literal in0 = Iota(128, 3.0f), in1 = Iota(2048, 0.5f);
  absl::StatusOr<Literal> built = RunModule(GetParam(), computation->CloneModule(), {&in0, &in1});
  ASSERT_TRUE(built.ok()) << built.status();
  absl::StatusOr<Literal> from_text = RunExample("do_it.hlo", {&in0, &in1});
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  EXPECT_EQ(*built, *from_text);
  EXPECT_EQ(built->data<float>()[200], 3.0f * (200 % 128) + 0.5f * 200);
}

TEST_P(CustomCallGuide, DoCustomCallWithStatusSucceeds) {
  Literal b = Iota(128, 2.0f), c = Iota(2048, -1.0f);
  absl::StatusOr<Literal> result = RunExample("do_it_with_status.hlo", {&b, &c});
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 2048; ++i) {
    ASSERT_EQ(result->data<float>()[i], 2.0f * (i % 128) - static_cast<float>(i)) << i;
  }
}

TEST_P(CustomCallGuide, DoCustomCallWithStatusSignalsAnError) {
  Literal b = Iota(128, 1.0f), c = Iota(2048, 1.0f);
  b.data<float>()[7] = NAN;
  absl::StatusOr<Literal> result = RunExample("do_it_with_status.hlo", {&b, &c});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("An error occurred"));
}

TEST_P(CustomCallGuide, TuplesAndATempBuffer) {
  Literal s0 = Iota(32, 1.0f), s1 = Iota(64, 0.5f), s2 = Iota(128, -1.0f), s3 = Iota(256, 3.0f);
  std::vector<Literal> inner;
  inner.push_back(s1.Clone());
  inner.push_back(s2.Clone());
  std::vector<Literal> outer;
  outer.push_back(s0.Clone());
  outer.push_back(Literal::MakeTuple(std::move(inner)));
  outer.push_back(s3.Clone());
  Literal p0 = Literal::MakeTuple(std::move(outer));
  absl::StatusOr<Literal> result = RunExample("do_it_tuple.hlo", {&p0});
  ASSERT_TRUE(result.ok()) << result.status();
  auto temp = [&](int j) { return s1.data<float>()[j % 64] * s2.data<float>()[j % 128]; };
  for (int i = 0; i < 512; ++i) {
    float expected = s0.data<float>()[i % 32] + s3.data<float>()[i % 256] + temp(i) + temp(i + 512);
    ASSERT_EQ(result->data<float>()[i], expected) << i;
  }
}

TEST_P(CustomCallGuide, TypedFfiHandler) {
  Literal b = Iota(128, 0.5f), c = Iota(2048, 2.0f);
  absl::StatusOr<Literal> result = RunExample("do_it_ffi.hlo", {&b, &c});
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 2048; ++i) {
    ASSERT_EQ(result->data<float>()[i], 0.5f * (i % 128) + 2.0f * i) << i;
  }
}

TEST_P(CustomCallGuide, TypedFfiHandlerChecksItsBinding) {
  // The handler takes rank-1 F32 buffers; a rank-2 operand is refused.
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(R"(
    HloModule m
    ENTRY e {
      p0 = f32[2,64] parameter(0)
      p1 = f32[2048] parameter(1)
      ROOT r = f32[2048] custom-call(p0, p1), custom_call_target="do_custom_call",
          api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_TRUE(module.ok()) << module.status();
  Literal b(ShapeUtil::MakeShape(F32, {2, 64})), c = Iota(2048, 1.0f);
  absl::StatusOr<Literal> result = RunModule(GetParam(), *std::move(module), {&b, &c});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("argument 0: Wrong buffer rank: expected 1 but got 2"));
}

}  // namespace
}  // namespace axle
