//===- platform_test_util.h - Running HLO text on a platform, for tests ----===//
//
// Test helpers shared by the cpu platform's tests (and the cpu conformance
// test): compile HLO text for a platform through LocalClient, run it on
// literals, compare with the interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_PLATFORM_TEST_UTIL_H_
#define AXLE_CPU_RUNTIME_PLATFORM_TEST_UTIL_H_

#include <memory>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/literal_comparison.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"

namespace axle::testing {

inline LocalClient* ClientFor(absl::string_view platform) {
  auto found = PlatformUtil::GetPlatform(platform);
  CHECK(found.ok()) << found.status();
  return *ClientLibrary::GetOrCreateLocalClient(*found);
}

inline absl::StatusOr<std::unique_ptr<LocalExecutable>> CompileOn(absl::string_view platform,
                                                                  absl::string_view text) {
  AXLE_ASSIGN_OR_RETURN(auto module, ParseAndReturnUnverifiedModule(text));
  return ClientFor(platform)->Compile(std::move(module), {});
}

// Transfers `arguments`, runs `executable` (compiled for `platform`) on
// them and reads the result back.
inline absl::StatusOr<Literal> RunExecutable(absl::string_view platform,
                                             const LocalExecutable& executable,
                                             const std::vector<Literal>& arguments) {
  LocalClient* client = ClientFor(platform);
  std::vector<ScopedShapedBuffer> buffers;
  std::vector<const ShapedBuffer*> pointers;
  for (const Literal& argument : arguments) {
    AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer buffer, client->LiteralToShapedBuffer(argument, 0));
    buffers.push_back(std::move(buffer));
  }
  for (const auto& buffer : buffers) pointers.push_back(&buffer);
  AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result, executable.Run(pointers, {}));
  return client->ShapedBufferToLiteral(result);
}

inline absl::StatusOr<Literal> RunOn(absl::string_view platform, absl::string_view text,
                                     const std::vector<Literal>& arguments) {
  AXLE_ASSIGN_OR_RETURN(auto executable, CompileOn(platform, text));
  return RunExecutable(platform, *executable, arguments);
}

// f32 values in [-1, 1) that differ from element to element and by seed.
inline Literal SeededF32Values(const Shape& shape, int seed) {
  Literal literal(shape);
  auto data = literal.data<float>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] =
        static_cast<float>((static_cast<int64_t>(i) * 13 + int64_t{seed} * 7) % 23) / 11.f - 1.f;
  }
  return literal;
}

// The module gives the same values on `cpu` as on the interpreter.
inline void ExpectCpuAgrees(absl::string_view text, const std::vector<Literal>& arguments,
                            const ErrorSpec& error = ErrorSpec(1e-5, 1e-5)) {
  absl::StatusOr<Literal> cpu = RunOn("cpu", text, arguments);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  absl::StatusOr<Literal> reference = RunOn("interpreter", text, arguments);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::Status near = LiteralsNear(*reference, *cpu, error);
  EXPECT_TRUE(near.ok()) << near;
}

}  // namespace axle::testing

#endif  // AXLE_CPU_RUNTIME_PLATFORM_TEST_UTIL_H_
