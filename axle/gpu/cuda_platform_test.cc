//===- cuda_platform_test.cc - The `cuda` platform, with and without a GPU -===//
//
// Without a driver or a GPU (CI, this project's build machines) asking for
// the platform is an Unavailable error naming CUDA; with one, the device's
// pieces (context, streams, events, pooled memory, literal transfers) work.
// Tests that need a device skip with a message where there is none.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axle/builder/xla_builder.h"
#include "axle/core/literal.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/runtime/local_client.h"
#include "axle/runtime/platform.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// Device 0, or null after GTEST_SKIP naming why there is none.
std::unique_ptr<CudaDevice> OpenDeviceOrSkip() {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  if (!device.ok()) return nullptr;
  return *std::move(device);
}

#define AXLE_SKIP_WITHOUT_GPU(device)                                             \
  std::unique_ptr<CudaDevice> device = OpenDeviceOrSkip();                        \
  if ((device) == nullptr) {                                                      \
    GTEST_SKIP() << "no CUDA device: " << CudaDevice::Open(0).status().message(); \
  }

TEST(CudaPlatformTest, LookupNamesCudaAndWhatIsMissing) {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  for (const char* name : {"cuda", "CUDA", "gpu"}) {
    absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform(name);
    if (device.ok()) {
      ASSERT_TRUE(platform.ok()) << name << ": " << platform.status();
      EXPECT_EQ((*platform)->Name(), "CUDA");
      EXPECT_EQ((*platform)->custom_call_platform(), "CUDA");
      continue;
    }
    ASSERT_FALSE(platform.ok()) << name;
    EXPECT_EQ(platform.status().code(), absl::StatusCode::kUnavailable) << name;
    EXPECT_THAT(platform.status().message(), HasSubstr("CUDA")) << name;
    EXPECT_THAT(
        platform.status().message(),
        AnyOf(HasSubstr("no CUDA driver"), HasSubstr("no CUDA device"), HasSubstr("cuInit")))
        << platform.status();
  }
}

TEST(CudaPlatformTest, LiteralsRoundTripThroughTheClient) {
  AXLE_SKIP_WITHOUT_GPU(device);
  auto platform = PlatformUtil::GetPlatform("cuda");
  ASSERT_TRUE(platform.ok()) << platform.status();
  auto client = ClientLibrary::GetOrCreateLocalClient(*platform);
  ASSERT_TRUE(client.ok()) << client.status();
  std::vector<Literal> elements;
  elements.push_back(LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}}));
  elements.push_back(LiteralUtil::CreateR1<int32_t>({5, 6, 7}));
  Literal tuple = LiteralUtil::MakeTuple(std::move(elements));
  auto buffer = (*client)->LiteralToShapedBuffer(tuple, 0);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  auto back = (*client)->ShapedBufferToLiteral(*buffer);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, tuple);
  // Device memory: a host write would crash, the platform's memcpy works.
  se::DeviceMemoryBase first = buffer->buffer({0});
  float host[4] = {};
  ASSERT_TRUE((*platform)->SynchronousMemcpy(host, first, sizeof(host)).ok());
  EXPECT_EQ(host[3], 4.0f);
  // Modules compile and run on it (gpu_executable_test.cc has the rest).
  const Shape shape = ShapeUtil::MakeShape(F32, {4});
  XlaBuilder builder("negate");
  Neg(Parameter(&builder, 0, shape, "x"));
  auto computation = builder.Build();
  ASSERT_TRUE(computation.ok()) << computation.status();
  auto executables = (*client)->Compile(*computation, {&shape}, ExecutableBuildOptions());
  ASSERT_TRUE(executables.ok()) << executables.status();
  auto argument = (*client)->LiteralToShapedBuffer(LiteralUtil::CreateR1<float>({1, -2, 3, -4}), 0);
  ASSERT_TRUE(argument.ok()) << argument.status();
  auto result = executables->front()->Run({&*argument}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  auto negated = (*client)->ShapedBufferToLiteral(*result);
  ASSERT_TRUE(negated.ok()) << negated.status();
  EXPECT_EQ(*negated, LiteralUtil::CreateR1<float>({-1, 2, -3, 4}));
}

TEST(CudaPlatformTest, TheOtherPlatformsStayUsable) {
  // Whether or not the cuda lookup succeeds (it does on a GPU machine), the
  // other platforms are still there.
  (void)PlatformUtil::GetPlatform("cuda");
  absl::StatusOr<se::Platform*> interpreter = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  EXPECT_EQ((*interpreter)->Name(), "Interpreter");
}

TEST(CudaPlatformTest, MissingDriverIsAnError) {
  // Without a GPU this is the machine's own error; with one the device
  // opens. Either way, asking twice gives the same answer.
  absl::StatusOr<int> first = CudaDeviceCount();
  absl::StatusOr<int> second = CudaDeviceCount();
  EXPECT_EQ(first.ok(), second.ok());
  if (!first.ok()) {
    EXPECT_THAT(first.status().message(), HasSubstr("CUDA"));
    EXPECT_EQ(first.status().code(), second.status().code());
  }
}

TEST(CudaDeviceTest, DescribesTheDevice) {
  AXLE_SKIP_WITHOUT_GPU(device);
  EXPECT_FALSE(device->name().empty());
  EXPECT_GE(device->compute_capability_major(), 5);
  EXPECT_GT(device->total_memory(), 0);
  EXPECT_GT(device->multiprocessor_count(), 0);
  EXPECT_THAT(device->ArchName(), HasSubstr("sm_"));
  EXPECT_EQ(CudaDevice::Open(1 << 20).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CudaDeviceTest, PooledMemoryIsAlignedAndReused) {
  AXLE_SKIP_WITHOUT_GPU(device);
  auto stream = CudaStream::Create(*device);
  ASSERT_TRUE(stream.ok()) << stream.status();
  CudaMemoryAllocator allocator(nullptr, *device);
  allocator.OrderFreesOn(stream->get());
  const void* first_address = nullptr;
  {
    auto first = allocator.Allocate(0, 1000);
    ASSERT_TRUE(first.ok()) << first.status();
    first_address = (*first)->opaque();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first_address) % 64, 0u);
    EXPECT_EQ(allocator.bytes_in_use(), 1024);
  }
  EXPECT_EQ(allocator.bytes_in_use(), 0);
  ASSERT_TRUE((*stream)->Synchronize().ok());
  auto again = allocator.Allocate(0, 900);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->opaque(), first_address);
  EXPECT_EQ(allocator.Allocate(1 << 20, 64).status().code(), absl::StatusCode::kInvalidArgument);
  auto huge = allocator.Allocate(0, uint64_t{1} << 50);
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted) << huge.status();
}

TEST(CudaDeviceTest, CopiesAndEventsAreOrdered) {
  AXLE_SKIP_WITHOUT_GPU(device);
  auto stream = CudaStream::Create(*device);
  ASSERT_TRUE(stream.ok()) << stream.status();
  CudaMemoryAllocator allocator(nullptr, *device);
  std::vector<int32_t> input(1 << 16);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<int32_t>(i * 7);
  const uint64_t bytes = input.size() * sizeof(int32_t);
  auto a = allocator.Allocate(0, bytes);
  auto b = allocator.Allocate(0, bytes);
  ASSERT_TRUE(a.ok() && b.ok());
  se::DeviceMemoryBase a_memory = a->cref();
  se::DeviceMemoryBase b_memory = b->cref();
  std::vector<int32_t> output(input.size(), -1);
  ASSERT_TRUE((*stream)->MemcpyHostToDevice(&a_memory, input.data(), bytes).ok());
  ASSERT_TRUE((*stream)->Memset8(&b_memory, 0, bytes).ok());
  ASSERT_TRUE((*stream)->MemcpyDeviceToDevice(&b_memory, a_memory, bytes).ok());
  ASSERT_TRUE((*stream)->MemcpyDeviceToHost(output.data(), b_memory, bytes).ok());
  auto event = CudaEvent::Create(*device);
  ASSERT_TRUE(event.ok()) << event.status();
  ASSERT_TRUE((*stream)->RecordEvent(event->get()).ok());
  ASSERT_TRUE((*event)->Synchronize().ok());
  auto complete = (*event)->IsComplete();
  ASSERT_TRUE(complete.ok());
  EXPECT_TRUE(*complete);
  EXPECT_EQ(output, input);
  EXPECT_EQ((*stream)->MemcpyHostToDevice(&a_memory, input.data(), bytes + 1).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CudaDeviceTest, LiteralsRoundTripThroughDeviceBuffers) {
  AXLE_SKIP_WITHOUT_GPU(device);
  auto stream = CudaStream::Create(*device);
  ASSERT_TRUE(stream.ok()) << stream.status();
  CudaMemoryAllocator allocator(nullptr, *device);
  std::vector<Literal> elements;
  elements.push_back(LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}}));
  elements.push_back(LiteralUtil::CreateR0<int32_t>(-7));
  Literal tuple = LiteralUtil::MakeTuple(std::move(elements));
  auto buffer = AllocateCudaShapedBuffer(tuple.shape(), &allocator, stream->get());
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ASSERT_TRUE(TransferLiteralToCuda(stream->get(), tuple, *buffer).ok());
  auto back = TransferLiteralFromCuda(stream->get(), *buffer);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, tuple);
  // The tuple's index table holds the elements' device addresses.
  void* table[2] = {nullptr, nullptr};
  ASSERT_TRUE((*stream)->MemcpyDeviceToHost(table, buffer->buffer({}), sizeof(table)).ok());
  ASSERT_TRUE((*stream)->Synchronize().ok());
  EXPECT_EQ(table[0], buffer->buffer({0}).opaque());
  EXPECT_EQ(table[1], buffer->buffer({1}).opaque());
  Literal wrong = LiteralUtil::CreateR1<float>({1, 2});
  EXPECT_EQ(TransferLiteralToCuda(stream->get(), wrong, *buffer).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle::gpu
