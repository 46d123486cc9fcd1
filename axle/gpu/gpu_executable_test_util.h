//===- gpu_executable_test_util.h - Running test modules on CUDA ------------===//
//
// What the tests of modules run through LocalClient on platform "cuda" share
// (gpu_executable_test.cc, gpu_control_flow_test.cc): deterministic inputs,
// the fixture that compiles a module for CUDA and for the interpreter and
// compares their results (skipped, with a message, where there is no GPU),
// and the check without a device that test modules compile for CUDA and run
// on the interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_EXECUTABLE_TEST_UTIL_H_
#define AXLE_GPU_GPU_EXECUTABLE_TEST_UTIL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_executable.h"
#include "axle/gpu/tf32.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace test {

// Deterministic values in [-2, 2) (integers in [-50, 50), preds alternating).
inline Literal MakeInput(const Shape& shape, int seed) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      elements.push_back(MakeInput(shape.tuple_shapes(i), seed * 31 + static_cast<int>(i)));
    }
    return LiteralUtil::MakeTuple(std::move(elements));
  }
  Literal literal(shape);
  const int64_t count = shape.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = (i * 7919 + int64_t{seed} * 104729) % 1000;
    switch (shape.element_type()) {
      case F32:
        literal.data<float>()[i] = static_cast<float>(k) / 250.0f - 2.0f;
        break;
      case F64:
        literal.data<double>()[i] = static_cast<double>(k) / 250.0 - 2.0;
        break;
      case S32:
        literal.data<int32_t>()[i] = static_cast<int32_t>(k % 100) - 50;
        break;
      case PRED:
        literal.data<bool>()[i] = (k % 2) == 0;
        break;
      default:
        break;
    }
  }
  return literal;
}

// A module the device tests run.
struct TestModule {
  const char* name;
  const char* text;
  bool on_interpreter;  // runs there on lent arguments (no CUDA custom calls, no donation)
};

// Without a device: each module compiles for CUDA (passes, thunks, PTX),
// optimized and as given (run_backend_only: no inlining, no fusion, as Calls
// runs them), and those marked run on the interpreter, so the device tests'
// modules are known to be well formed.
inline void ExpectModulesCompileWithoutADevice(absl::Span<const TestModule> modules) {
  auto interpreter = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  LocalClient* reference = *ClientLibrary::GetOrCreateLocalClient(*interpreter);
  for (const TestModule& c : modules) {
    SCOPED_TRACE(c.name);
    auto module = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get());
    EXPECT_TRUE(program.ok()) << program.status();
    auto as_given = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(as_given.ok()) << as_given.status();
    absl::StatusOr<GpuProgram> backend_only =
        CompileGpuProgram(as_given->get(), PtxOptions(), /*run_backend_only=*/true);
    EXPECT_TRUE(backend_only.ok()) << backend_only.status();
    if (!c.on_interpreter) continue;
    auto parsed = ParseAndReturnUnverifiedModule(c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto executable = reference->Compile(std::move(parsed).value(), {});
    ASSERT_TRUE(executable.ok()) << executable.status();
    std::vector<Literal> arguments;
    for (const Shape& shape : (*executable)->executable()->parameter_shapes()) {
      arguments.push_back(MakeInput(shape, 1));
    }
    std::vector<ScopedShapedBuffer> buffers;
    std::vector<const ShapedBuffer*> pointers;
    buffers.reserve(arguments.size());
    for (const Literal& argument : arguments) {
      buffers.push_back(*reference->LiteralToShapedBuffer(argument, 0));
    }
    pointers.reserve(buffers.size());
    for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
    auto result = (*executable)->Run(pointers, {});
    EXPECT_TRUE(result.ok()) << result.status();
  }
}

class GpuExecutableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
    if (!device.ok()) GTEST_SKIP() << "no CUDA device: " << device.status().message();
    auto platform = PlatformUtil::GetPlatform("cuda");
    ASSERT_TRUE(platform.ok()) << platform.status();
    auto client = ClientLibrary::GetOrCreateLocalClient(*platform);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *client;
    auto interpreter = PlatformUtil::GetPlatform("interpreter");
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    auto reference = ClientLibrary::GetOrCreateLocalClient(*interpreter);
    ASSERT_TRUE(reference.ok()) << reference.status();
    reference_ = *reference;
  }

  absl::StatusOr<std::unique_ptr<LocalExecutable>> CompileFor(
      LocalClient* client, const std::string& text,
      const ExecutableBuildOptions& options = ExecutableBuildOptions()) {
    auto module = ParseAndReturnUnverifiedModule(text);
    if (!module.ok()) return module.status();
    return client->Compile(std::move(module).value(), options);
  }

  static absl::StatusOr<Literal> RunWith(LocalClient* client, const LocalExecutable& executable,
                                         const std::vector<Literal>& arguments) {
    std::vector<ScopedShapedBuffer> buffers;
    std::vector<const ShapedBuffer*> pointers;
    for (const Literal& argument : arguments) {
      auto buffer = client->LiteralToShapedBuffer(argument, 0);
      if (!buffer.ok()) return buffer.status();
      buffers.push_back(std::move(buffer).value());
    }
    pointers.reserve(buffers.size());
    for (const ScopedShapedBuffer& buffer : buffers) pointers.push_back(&buffer);
    auto result = executable.Run(pointers, {});
    if (!result.ok()) return result.status();
    return client->ShapedBufferToLiteral(*result);
  }

  // Runs `text` on CUDA (twice: the second run reuses the arena) and on the
  // interpreter with arguments made by MakeInput, and compares (results of
  // TF32 products within TF32's bounds).
  void ExpectMatchesInterpreter(const std::string& text, ErrorSpec error = ErrorSpec(1e-5, 1e-5),
                                std::vector<Literal> arguments = {},
                                const ExecutableBuildOptions& options = ExecutableBuildOptions()) {
    auto gpu = CompileFor(client_, text, options);
    ASSERT_TRUE(gpu.ok()) << "compiling for CUDA: " << gpu.status();
    auto interpreter = CompileFor(reference_, text);
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    if (arguments.empty()) {
      const auto& parameters = (*gpu)->executable()->parameter_shapes();
      for (size_t i = 0; i < parameters.size(); ++i) {
        arguments.push_back(MakeInput(parameters[i], static_cast<int>(i) + 1));
      }
    }
    auto expected = RunWith(reference_, **interpreter, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    auto parsed = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    for (int run = 0; run < 2; ++run) {
      auto actual = RunWith(client_, **gpu, arguments);
      ASSERT_TRUE(actual.ok()) << "run " << run << " on CUDA: " << actual.status();
      // f32 dots and convolutions in TF32 as XLA:GPU computes them (tf32.h).
      absl::Status near =
          LiteralsNearAllowingTf32(**parsed, *expected, *actual, error, Tf32Enabled());
      EXPECT_TRUE(near.ok())
          << "run " << run << ": " << near << "\nexpected " << expected->ToString() << "\nactual   "
          << actual->ToString() << "\nprogram:\n"
          << GpuProgramToString(static_cast<const GpuExecutable*>((*gpu)->executable())->program());
    }
  }

  LocalClient* client_ = nullptr;
  LocalClient* reference_ = nullptr;
};

}  // namespace test
}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_EXECUTABLE_TEST_UTIL_H_
