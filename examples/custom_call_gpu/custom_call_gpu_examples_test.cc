//===- custom_call_gpu_examples_test.cc - XLA's GPU custom calls, run ------===//
//
// Runs the GPU examples of XLA's custom-call guide (the .cu files here,
// compiled by nvcc against compat/include) on the `cuda` platform: the
// guide's modules (examples/custom_call/*.hlo) compiled by the CUDA backend,
// whose custom-call thunk calls each target on its stream with the device
// buffer table, and checks the values. Without a GPU every test skips with
// the platform's message.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

// The cuda platform's client, or the reason there is none.
absl::StatusOr<LocalClient*> CudaClient() {
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform("cuda");
  if (!platform.ok()) return platform.status();
  return ClientLibrary::GetOrCreateLocalClient(*platform);
}

#define AXLE_SKIP_WITHOUT_CUDA(client)                                       \
  absl::StatusOr<LocalClient*> client = CudaClient();                        \
  if (!client.ok()) GTEST_SKIP() << "no cuda platform: " << client.status(); \
  static_assert(true)

absl::StatusOr<Literal> RunOnCuda(LocalClient* client, const std::string& hlo_file,
                                  const std::vector<const Literal*>& args) {
  // $AXLE_SOURCE_DIR where the test runs away from its checkout
  // (scripts/device-check), else the checkout it was built from.
  const char* source_dir = std::getenv("AXLE_SOURCE_DIR");
  std::ifstream in(std::string(source_dir != nullptr ? source_dir : AXLE_SOURCE_DIR) +
                   "/examples/custom_call/" + hlo_file);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", hlo_file));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseAndReturnUnverifiedModule(text.str(), hlo_file);
  if (!module.ok()) return module.status();
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable =
      client->Compile(*std::move(module), ExecutableBuildOptions());
  if (!executable.ok()) return executable.status();
  std::vector<ScopedShapedBuffer> buffers;
  std::vector<const ShapedBuffer*> pointers;
  buffers.reserve(args.size());
  pointers.reserve(args.size());
  for (const Literal* arg : args) {
    absl::StatusOr<ScopedShapedBuffer> buffer = client->LiteralToShapedBuffer(*arg, 0);
    if (!buffer.ok()) return buffer.status();
    buffers.push_back(*std::move(buffer));
  }
  for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
  absl::StatusOr<ScopedShapedBuffer> result = (*executable)->Run(pointers, {});
  if (!result.ok()) return result.status();
  return client->ShapedBufferToLiteral(*result);
}

Literal Iota(int64_t n, float scale) {
  Literal literal(ShapeUtil::MakeShape(F32, {n}));
  for (int64_t i = 0; i < n; ++i) literal.data<float>()[i] = scale * static_cast<float>(i);
  return literal;
}

TEST(CustomCallGuideOnCuda, DoCustomCall) {
  AXLE_SKIP_WITHOUT_CUDA(client);
  Literal b = Iota(128, 1.0f), c = Iota(2048, 0.25f);
  absl::StatusOr<Literal> result = RunOnCuda(*client, "do_it.hlo", {&b, &c});
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 2048; ++i) {
    ASSERT_EQ(result->data<float>()[i], static_cast<float>(i % 128) + 0.25f * i) << i;
  }
}

TEST(CustomCallGuideOnCuda, DoCustomCallWithStatusSucceeds) {
  AXLE_SKIP_WITHOUT_CUDA(client);
  Literal b = Iota(128, 2.0f), c = Iota(2048, -1.0f);
  absl::StatusOr<Literal> result = RunOnCuda(*client, "do_it_with_status.hlo", {&b, &c});
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 2048; ++i) {
    ASSERT_EQ(result->data<float>()[i], 2.0f * (i % 128) - static_cast<float>(i)) << i;
  }
}

TEST(CustomCallGuideOnCuda, DoCustomCallWithStatusSignalsAnError) {
  AXLE_SKIP_WITHOUT_CUDA(client);
  Literal b = Iota(128, 1.0f), c = Iota(2048, 1.0f);
  b.data<float>()[7] = NAN;
  absl::StatusOr<Literal> result = RunOnCuda(*client, "do_it_with_status.hlo", {&b, &c});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("An error occurred"));
  EXPECT_THAT(result.status().message(), HasSubstr("do_custom_call_with_status"));
  // The platform stays usable after a failed run.
  b.data<float>()[7] = 0;
  result = RunOnCuda(*client, "do_it_with_status.hlo", {&b, &c});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->data<float>()[130], 2.0f + 130.0f);
}

TEST(CustomCallGuideOnCuda, TypedFfiHandlerGetsTheStream) {
  AXLE_SKIP_WITHOUT_CUDA(client);
  Literal b = Iota(128, 0.5f), c = Iota(2048, 2.0f);
  absl::StatusOr<Literal> result = RunOnCuda(*client, "do_it_ffi.hlo", {&b, &c});
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 2048; ++i) {
    ASSERT_EQ(result->data<float>()[i], 0.5f * (i % 128) + 2.0f * i) << i;
  }
}

}  // namespace
}  // namespace axle
