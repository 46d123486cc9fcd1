// Custom calls serialized (program_serialization.h) as their target's
// spec and their plan, loaded back without their module (the target
// resolved again by its registered name, as XLA's AOT does) and run: an
// untyped call with nested tuples and an opaque, and a typed-FFI call
// with attributes, both on parameters (so the scratch copies are
// serialized too). Each agrees bit for bit with the executable and with
// the interpreter. A target that is not registered where the program is
// loaded is NotFound naming it; truncations and corrupted fields are
// errors saying what is wrong.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "axle/cpu/runtime/program_serialization_test_util.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/custom_call_status.h"
#include "axle/runtime/host_ffi.h"
#include "gtest/gtest.h"

// (f32[4], s32[3]) x, f32[4] y -> (f32[4], s32[3]): x.0 + k * y and
// x.1 * 2, k the opaque read as a number.
void AotCcTupleAxpy(void* out, const void** in, const char* opaque, size_t opaque_len,
                    XlaCustomCallStatus*) {
  const float k = std::strtof(std::string(opaque, opaque_len).c_str(), nullptr);
  auto* const* x = static_cast<void* const*>(in[0]);
  const auto* y = static_cast<const float*>(in[1]);
  auto* const* o = static_cast<void* const*>(out);
  for (int i = 0; i < 4; ++i) {
    static_cast<float*>(o[0])[i] = static_cast<const float*>(x[0])[i] + k * y[i];
  }
  for (int i = 0; i < 3; ++i) {
    static_cast<int32_t*>(o[1])[i] = static_cast<const int32_t*>(x[1])[i] * 2;
  }
}
XLA_REGISTER_CUSTOM_CALL_TARGET(AotCcTupleAxpy, "Host");

namespace axle::cpu {
namespace {

// rets[0] = args[0] * scale (f32).
absl::Status AotCcFfiScale(const FfiCallFrame& call) {
  absl::StatusOr<float> scale = call.attributes.Get<float>("scale");
  if (!scale.ok()) return scale.status();
  if (call.args.size() != 1 || call.rets.size() != 1) {
    return absl::InvalidArgumentError("expected 1 arg and 1 ret");
  }
  for (int64_t i = 0; i < call.args[0].element_count(); ++i) {
    call.rets[0].typed_data<float>()[i] = call.args[0].typed_data<float>()[i] * *scale;
  }
  return absl::OkStatus();
}
AXLE_FFI_REGISTER_HANDLER("AotCcFfiScale", kHostPlatformName, AotCcFfiScale);

using ::axle::testing::RunOn;
using ::axle::testing::SeededF32Values;

// Where the fields of custom call "untyped" start in `bytes`: its name,
// then its target's name (the same words appear in the call's name, later).
size_t UntypedFields(const std::string& bytes) {
  const std::string name = "untyped", target = "AotCcTupleAxpy";
  std::string needle = name;
  for (int i = 0; i < 8; ++i) needle.push_back(static_cast<char>(i == 0 ? target.size() : 0));
  needle += target;
  const size_t at = bytes.find(needle);
  return at == std::string::npos ? at : at + name.size();
}

constexpr absl::string_view kCustomCalls = R"(
HloModule custom_calls
ENTRY e {
  a = f32[4] parameter(0)
  b = s32[3] parameter(1)
  y = f32[4] parameter(2)
  x = (f32[4], s32[3]) tuple(a, b)
  untyped = (f32[4], s32[3]) custom-call(x, y), custom_call_target="AotCcTupleAxpy", api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config="2.5"
  u0 = f32[4] get-tuple-element(untyped), index=0
  u1 = s32[3] get-tuple-element(untyped), index=1
  typed = f32[4] custom-call(a), custom_call_target="AotCcFfiScale", api_version=API_VERSION_TYPED_FFI, backend_config="{scale = 3.0 : f32}"
  ROOT t = (f32[4], s32[3], f32[4]) tuple(u0, u1, typed)
})";

std::vector<Literal> CustomCallArguments() {
  Literal b(ShapeUtil::MakeShape(S32, {3}));
  for (int i = 0; i < 3; ++i) static_cast<int32_t*>(b.untyped_data())[i] = 7 * i - 4;
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {4}), 1));
  arguments.push_back(std::move(b));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {4}), 2));
  return arguments;
}

TEST(CustomCallSerializationTest, CustomCallsRoundTrip) {
  ExpectRoundTrip(kCustomCalls, CustomCallArguments());
  ExpectInterpreterAgrees(kCustomCalls, CustomCallArguments());
  // 2.5 and 3 scale exactly: the values are known too.
  absl::StatusOr<Literal> cpu = RunOn("cpu", kCustomCalls, CustomCallArguments());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const std::vector<Literal> cpu_leaves = Leaves(*cpu);
  ASSERT_EQ(cpu_leaves.size(), 3U);
  const float a0 = static_cast<const float*>(CustomCallArguments()[0].untyped_data())[0];
  const float y0 = static_cast<const float*>(CustomCallArguments()[2].untyped_data())[0];
  EXPECT_EQ(static_cast<const float*>(cpu_leaves[0].untyped_data())[0], a0 + 2.5F * y0);
  EXPECT_EQ(static_cast<const int32_t*>(cpu_leaves[1].untyped_data())[2], 20);
  EXPECT_EQ(static_cast<const float*>(cpu_leaves[2].untyped_data())[0], a0 * 3.0F);
}

TEST(CustomCallSerializationTest, AnUnregisteredTargetIsNotFoundWhenLoaded) {
  Compiled compiled = Compile(kCustomCalls);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  // The target's name follows the thunk's name (and its length).
  std::string bytes = serialized->bytes;
  const size_t fields = UntypedFields(bytes);
  ASSERT_NE(fields, std::string::npos);
  bytes[fields + 8 + 13] = 'Z';
  absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> missing = LoadProgram(bytes, resolver);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  EXPECT_NE(missing.status().message().find("AotCcTupleAxpZ"), std::string::npos)
      << missing.status();
  EXPECT_NE(missing.status().message().find("untyped"), std::string::npos) << missing.status();
}

TEST(CustomCallSerializationTest, ACorruptedCustomCallIsAnError) {
  Compiled compiled = Compile(kCustomCalls);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  const std::string& bytes = serialized->bytes;
  // After the name: the target (14 bytes), the api_version, the opaque
  // ("2.5"), the call's name, then the plan: operands (2), the slots
  // (count 7: in[0] a table of 2, in[1], out a table of 2, then the
  // tables' elements; each kind, index, size), the FFI leaves (none),
  // the copies, reads and writes.
  const size_t at = UntypedFields(bytes);
  ASSERT_NE(at, std::string::npos);
  const size_t api = at + 8 + 14;
  ASSERT_EQ(WordAt(bytes, api), static_cast<int64_t>(API_VERSION_STATUS_RETURNING_UNIFIED));
  ASSERT_EQ(WordAt(bytes, api + 8), 3);
  const size_t call_name = api + 8 + 8 + 3;
  const size_t plan = call_name + 8 + WordAt(bytes, call_name);
  ASSERT_EQ(WordAt(bytes, plan), 2);
  ASSERT_EQ(WordAt(bytes, plan + 8), 7);
  const size_t slots = plan + 16;
  ASSERT_EQ(WordAt(bytes, slots), 2);       // in[0]: a table
  ASSERT_EQ(WordAt(bytes, slots + 24), 1);  // in[1]: a value
  const std::vector<Corruption> corruptions = {
      {api, 99, "unknown custom-call api_version 99"},
      {api, -3, "api_version -3"},
      {plan, 1, "partition its slots"},
      {plan, 3, "partition its slots"},
      {slots, 7, "of kind 7"},
      {slots + 8, 0, "of kind 2 at 0"},        // a table that contains itself
      {slots + 16, 3, "partition its slots"},  // a table of 3
      {slots + 16, 9, "of kind 2"},            // a table past the slots
      {slots + 40, 5, "of kind 1"},            // a value of another size
      {slots + 32, 1 << 20, "of kind 1"},      // a value id out of range
  };
  ExpectCorruptionsFail(bytes, resolver, corruptions);
  for (size_t size = at; size < slots + size_t{7} * 24; ++size) {
    EXPECT_FALSE(LoadProgram(bytes.substr(0, size), resolver).ok()) << size;
  }
}

}  // namespace
}  // namespace axle::cpu
