// XLA's aliasing guide (https://openxla.org/xla/aliasing), run on Axle with
// XLA's own API: the `increment` module aliases its output to parameter 0;
// donating the argument through LocalExecutable::RunAsync (asynchronous:
// waited for on the device's stream) updates it in place, lending it
// triggers copy protection. Written against the XLA
// include paths (compat/include), as an XLA user writes it; run on the
// interpreter and on the cpu platform.
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "xla/client/client_library.h"
#include "xla/client/local_client.h"
#include "xla/client/xla_builder.h"
#include "xla/hlo/parser/hlo_parser.h"
#include "xla/literal_util.h"
#include "xla/service/maybe_owning_device_memory.h"
#include "xla/service/platform_util.h"
#include "xla/shape_util.h"
#include "xla/stream_executor/stream.h"

namespace {

namespace se = ::stream_executor;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

xla::LocalClient* GetClient(const std::string& platform_name) {
  se::Platform* platform = xla::PlatformUtil::GetPlatform(platform_name).value();
  return xla::ClientLibrary::GetOrCreateLocalClient(platform).value();
}

// Each test runs on the interpreter and on the cpu platform.
class AliasingGuideTest : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Platforms, AliasingGuideTest, ::testing::Values("interpreter", "cpu"),
                         [](const auto& info) { return std::string(info.param); });

// Runs `executable` on `value`, donating the argument buffer as XLA's guide
// describes: an ExecutionInput owning its memory.
void ExpectInPlaceIncrement(xla::LocalClient* client, xla::LocalExecutable* executable) {
  xla::Literal value = xla::LiteralUtil::CreateR0<float>(41.0f);
  xla::ScopedShapedBuffer argument = client->LiteralToShapedBuffer(value, 0).value();
  const void* address = argument.root_buffer().opaque();

  xla::ExecutionInput input(argument.on_device_shape());
  xla::ShapedBuffer released = argument.release();
  input.SetBuffer({}, xla::MaybeOwningDeviceMemory(se::OwningDeviceMemory(
                          released.root_buffer(), 0, client->backend().memory_allocator())));
  std::vector<xla::ExecutionInput> inputs;
  inputs.push_back(std::move(input));
  xla::ExecutionOutput output =
      executable->RunAsync(std::move(inputs), xla::ExecutableRunOptions()).value();
  // RunAsync returns with the run enqueued on the device's stream; XLA's
  // way to wait for it (ShapedBufferToLiteral below would wait too).
  auto stream = client->backend().BorrowStream(0).value();
  EXPECT_TRUE(stream->BlockHostUntilDone().ok());
  xla::ScopedShapedBuffer result = output.ConsumeResult();
  EXPECT_EQ(result.root_buffer().opaque(), address) << "the update was not in place";
  EXPECT_EQ(client->ShapedBufferToLiteral(result).value().GetFirstElement<float>(), 42.0f);
}

TEST_P(AliasingGuideTest, IncrementFromText) {
  xla::LocalClient* client = GetClient(GetParam());
  std::string text = ReadFile(std::string(AXLE_SOURCE_DIR) + "/examples/aliasing/increment.hlo");
  std::unique_ptr<xla::HloModule> module = xla::ParseAndReturnUnverifiedModule(text).value();
  std::unique_ptr<xla::LocalExecutable> executable =
      client->Compile(std::move(module), xla::ExecutableBuildOptions()).value();
  ExpectInPlaceIncrement(client, executable.get());

  // Not donated: copy protection leaves the argument as it was.
  xla::ScopedShapedBuffer lent =
      client->LiteralToShapedBuffer(xla::LiteralUtil::CreateR0<float>(1.0f), 0).value();
  xla::ScopedShapedBuffer result = executable->Run({&lent}, xla::ExecutableRunOptions()).value();
  EXPECT_NE(result.root_buffer().opaque(), lent.root_buffer().opaque());
  EXPECT_EQ(client->ShapedBufferToLiteral(result).value().GetFirstElement<float>(), 2.0f);
  EXPECT_EQ(client->ShapedBufferToLiteral(lent).value().GetFirstElement<float>(), 1.0f);
}

TEST_P(AliasingGuideTest, IncrementFromTheBuilder) {
  xla::XlaBuilder builder("increment");
  xla::Shape shape = xla::ShapeUtil::MakeShape(xla::F32, {});
  xla::XlaOp p = xla::Parameter(&builder, 0, shape, "p");
  xla::Add(p, xla::ConstantR0<float>(&builder, 1.0f));
  builder.SetUpAlias(/*output_index=*/{}, /*param_number=*/0, /*param_index=*/{});
  xla::XlaComputation computation = builder.Build().value();
  xla::LocalClient* client = GetClient(GetParam());
  std::vector<std::unique_ptr<xla::LocalExecutable>> executables =
      client->Compile(computation, {&shape}, xla::ExecutableBuildOptions()).value();
  ExpectInPlaceIncrement(client, executables.front().get());
}

}  // namespace
