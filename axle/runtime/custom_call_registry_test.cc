//===- custom_call_registry_test.cc - Registry and XlaCustomCallStatus -----===//
#include "axle/runtime/custom_call_registry.h"

#include <cstring>

#include "absl/strings/match.h"
#include "axle/runtime/custom_call_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

void FirstTarget(void*, const void**) {}
void SecondTarget(void*, const void**) {}
void* Address(void (*fn)(void*, const void**)) { return reinterpret_cast<void*>(fn); }

void RegisteredByMacro(void*, const void**) {}
XLA_REGISTER_CUSTOM_CALL_TARGET(RegisteredByMacro, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM("renamed_target", RegisteredByMacro, "CUDA");
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM("cpu_renamed_target", RegisteredByMacro);

TEST(CustomCallTargetRegistry, MacrosRegisterInTheGlobalRegistry) {
  CustomCallTargetRegistry* registry = CustomCallTargetRegistry::Global();
  void* address = reinterpret_cast<void*>(&RegisteredByMacro);
  EXPECT_EQ(registry->Lookup("RegisteredByMacro", "Host"), address);
  EXPECT_EQ(registry->Lookup("renamed_target", "CUDA"), address);
  EXPECT_EQ(registry->Lookup("renamed_target", "Host"), nullptr);
  EXPECT_EQ(registry->Lookup("cpu_renamed_target", "Host"), address);
  EXPECT_EQ(registry->registered_symbols("Host").count("RegisteredByMacro"), 1u);
}

TEST(CustomCallTargetRegistry, RegistersPerPlatform) {
  CustomCallTargetRegistry registry;
  registry.Register("t", Address(&FirstTarget), "Host");
  registry.Register("t", Address(&SecondTarget), "CUDA");
  EXPECT_EQ(registry.Lookup("t", "Host"), Address(&FirstTarget));
  EXPECT_EQ(registry.Lookup("t", "CUDA"), Address(&SecondTarget));
  EXPECT_EQ(registry.Lookup("t", "ROCM"), nullptr);
  EXPECT_EQ(registry.Lookup("u", "Host"), nullptr);
  EXPECT_THAT(registry.PlatformsOf("t"), ::testing::ElementsAre("CUDA", "Host"));
}

TEST(CustomCallTargetRegistry, RegisteringTheSameFunctionTwiceIsFine) {
  CustomCallTargetRegistry registry;
  registry.Register("t", Address(&FirstTarget), "Host");
  registry.Register("t", Address(&FirstTarget), "Host");
  EXPECT_TRUE(registry.RegisterOrError("t", Address(&FirstTarget), "Host").ok());
  EXPECT_EQ(registry.Lookup("t", "Host"), Address(&FirstTarget));
}

TEST(CustomCallTargetRegistry, ConflictingRegistrationMakesTheTargetUnusable) {
  CustomCallTargetRegistry registry;
  registry.Register("dup", Address(&FirstTarget), "Host");
  registry.Register("dup", Address(&SecondTarget), "Host");
  EXPECT_EQ(registry.Lookup("dup", "Host"), nullptr);
  absl::StatusOr<void*> found = registry.LookupOrError("dup", "Host");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(found.status().message(), HasSubstr("'dup'"));
  EXPECT_THAT(found.status().message(), HasSubstr("two different functions"));
  EXPECT_EQ(registry.registered_symbols("Host").count("dup"), 0u);
  // Other platforms are unaffected.
  registry.Register("dup", Address(&SecondTarget), "CUDA");
  EXPECT_EQ(registry.Lookup("dup", "CUDA"), Address(&SecondTarget));
}

TEST(CustomCallTargetRegistry, RegisterOrErrorRejectsAConflictAndKeepsTheFirst) {
  CustomCallTargetRegistry registry;
  ASSERT_TRUE(registry.RegisterOrError("t", Address(&FirstTarget), "Host").ok());
  absl::Status status = registry.RegisterOrError("t", Address(&SecondTarget), "Host");
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(status.message(), HasSubstr("custom-call target 't' for platform \"Host\""));
  EXPECT_EQ(registry.Lookup("t", "Host"), Address(&FirstTarget));
}

TEST(CustomCallTargetRegistry, UnknownTargetNamesTargetAndPlatform) {
  CustomCallTargetRegistry registry;
  absl::StatusOr<void*> found = registry.LookupOrError("missing", "Host");
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(found.status().message(), HasSubstr("'missing'"));
  EXPECT_THAT(found.status().message(), HasSubstr("\"Host\""));

  registry.Register("gpu_only", Address(&FirstTarget), "CUDA");
  found = registry.LookupOrError("gpu_only", "Host");
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(found.status().message(), HasSubstr("registered for \"CUDA\""));
}

TEST(CustomCallStatus, SuccessByDefault) {
  CustomCallStatus status;
  EXPECT_EQ(status.failure_message(), std::nullopt);
  XlaCustomCallStatusSetSuccess(status.get());
  EXPECT_EQ(status.failure_message(), std::nullopt);
}

TEST(CustomCallStatus, FailureCopiesTheMessage) {
  CustomCallStatus status;
  std::string message = "An error occurred";
  XlaCustomCallStatusSetFailure(status.get(), message.data(), message.size());
  message[0] = 'X';  // the status keeps its own copy
  EXPECT_EQ(status.failure_message(), "An error occurred");
  // Only the first message_len bytes, and never past a NUL.
  XlaCustomCallStatusSetFailure(status.get(), "abcdef", 3);
  EXPECT_EQ(status.failure_message(), "abc");
  XlaCustomCallStatusSetFailure(status.get(), "ab\0cd", 5);
  EXPECT_EQ(status.failure_message(), "ab");
  XlaCustomCallStatusSetFailure(status.get(), "", 0);
  EXPECT_EQ(status.failure_message(), "");  // still a failure
  XlaCustomCallStatusSetSuccess(status.get());
  EXPECT_EQ(status.failure_message(), std::nullopt);
}

}  // namespace
}  // namespace axle
