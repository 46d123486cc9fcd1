//===- execute_arrays_test.cc - Executable::ExecuteArrays -------------------===//
//
// The lighter run for arrays to a tuple of arrays (what the lazy-tensor
// executor uses), on the cpu platform (its own ExecuteOnArrays) and on the
// interpreter (the default one, through ExecuteOnBuffers): the same values
// as Run, donation writes in place, lent aliased arguments are copy
// protected, and bad calls are clear errors.
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <string>
#include <vector>

#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/runtime/custom_call_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

// out = (p0 + p1, p0 * p1, p1), out{0} may alias p0.
constexpr char kStep[] = R"(
HloModule step, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  add = f32[4] add(p0, p1)
  mul = f32[4] multiply(p0, p1)
  ROOT out = (f32[4], f32[4], f32[4]) tuple(add, mul, p1)
})";

Literal R1(std::vector<float> values) {
  Literal literal(ShapeUtil::MakeShape(F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.data<float>()[i] = values[i];
  return literal;
}

// A custom call (XLA's cpu convention, f32[4] -> f32[4]) that runs
// `nested_step` on its operand through RunArrays, on the thread of the run
// that called it, and returns output {1} (p0 * p0): a run nested in a run.
LocalExecutable* nested_step = nullptr;
std::string nested_error;

void RunNestedStep(void* out, const void** in) {
  se::DeviceMemoryBase operand(const_cast<void*>(in[0]), 4 * sizeof(float));
  std::vector<MaybeOwningDeviceMemory> arguments;
  arguments.emplace_back(operand);
  arguments.emplace_back(operand);
  std::vector<se::OwningDeviceMemory> results;
  absl::Status status =
      nested_step->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results);
  if (!status.ok() || results.size() != 3) {
    nested_error = status.ok() ? "not 3 results" : std::string(status.message());
    return;
  }
  std::memcpy(out, results[1].cref().opaque(), 4 * sizeof(float));
}
XLA_REGISTER_CUSTOM_CALL_TARGET(RunNestedStep, "Host");

class ExecuteArraysTest : public ::testing::TestWithParam<std::string> {
 protected:
  LocalClient* client() const { return testing::ClientFor(GetParam()); }

  std::unique_ptr<LocalExecutable> Compile(absl::string_view text) const {
    auto executable = testing::CompileOn(GetParam(), text);
    CHECK(executable.ok()) << executable.status();
    return std::move(*executable);
  }

  // `literal` on the device, owned by the returned memory.
  se::OwningDeviceMemory ToDevice(const Literal& literal) const {
    auto buffer = client()->LiteralToShapedBuffer(literal, 0);
    CHECK(buffer.ok()) << buffer.status();
    se::DeviceMemoryAllocator* allocator = buffer->memory_allocator();
    ShapedBuffer released = buffer->release();
    return se::OwningDeviceMemory(released.root_buffer(), 0, allocator);
  }

  Literal FromDevice(se::DeviceMemoryBase memory, int64_t elements) const {
    ShapedBuffer view(ShapeUtil::MakeShape(F32, {elements}), 0);
    view.set_buffer(memory, {});
    auto literal = client()->ShapedBufferToLiteral(view);
    CHECK(literal.ok()) << literal.status();
    return std::move(*literal);
  }
};

TEST_P(ExecuteArraysTest, LentArgumentsGiveRunsValuesAndStayUnchanged) {
  auto executable = Compile(kStep);
  se::OwningDeviceMemory a = ToDevice(R1({1, 2, 3, 4}));
  se::OwningDeviceMemory b = ToDevice(R1({10, 20, 30, 40}));
  std::vector<MaybeOwningDeviceMemory> arguments;
  arguments.emplace_back(a.cref());
  arguments.emplace_back(b.cref());
  std::vector<se::OwningDeviceMemory> results;
  ASSERT_TRUE(
      executable->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results).ok());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(FromDevice(results[0].cref(), 4), R1({11, 22, 33, 44}));
  EXPECT_EQ(FromDevice(results[1].cref(), 4), R1({10, 40, 90, 160}));
  EXPECT_EQ(FromDevice(results[2].cref(), 4), R1({10, 20, 30, 40}));
  // Output {0} aliases p0, which was only lent: copy protected.
  EXPECT_NE(results[0]->opaque(), a->opaque());
  EXPECT_EQ(FromDevice(a.cref(), 4), R1({1, 2, 3, 4}));
  // Each element has a buffer of its own, even the one returning p1.
  EXPECT_NE(results[2]->opaque(), b->opaque());
  EXPECT_NE(results[0]->opaque(), results[1]->opaque());
}

TEST_P(ExecuteArraysTest, DonatedArgumentIsUpdatedInPlaceStepAfterStep) {
  auto executable = Compile(kStep);
  se::OwningDeviceMemory state = ToDevice(R1({0, 0, 0, 0}));
  const void* address = state->opaque();
  se::OwningDeviceMemory b = ToDevice(R1({1, 2, 3, 4}));
  std::vector<se::OwningDeviceMemory> results;
  for (int step = 0; step < 3; ++step) {
    std::vector<MaybeOwningDeviceMemory> arguments;
    arguments.emplace_back(std::move(state));
    arguments.emplace_back(b.cref());
    ASSERT_TRUE(
        executable->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results).ok());
    ASSERT_EQ(results.size(), 3u);
    // The run took the donated buffer: the argument no longer owns it.
    EXPECT_FALSE(arguments[0].HasOwnership());
    state = std::move(results[0]);
  }
  EXPECT_EQ(state->opaque(), address);
  EXPECT_EQ(FromDevice(state.cref(), 4), R1({3, 6, 9, 12}));
}

// out{0} = -p0 may alias p0, which other outputs read elsewhere than at
// the output's index (reverse) and whole (a sum): the run computes out{0}
// in the donated buffer only where nothing reads p0 after it is written.
constexpr char kReadAround[] = R"(
HloModule read_around, input_output_alias={ {0}: (0, {}, may-alias) }
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  n = f32[4] negate(p0)
  r = f32[4] reverse(p0), dimensions={0}
  zero = f32[] constant(0)
  s = f32[] reduce(p0, zero), dimensions={0}, to_apply=add
  sb = f32[4] broadcast(s), dimensions={}
  rs = f32[4] add(r, sb)
  ROOT out = (f32[4], f32[4]) tuple(n, rs)
})";

TEST_P(ExecuteArraysTest, DonatedArgumentReadByOtherOutputsKeepsItsValueUntilRead) {
  auto executable = Compile(kReadAround);
  se::OwningDeviceMemory state = ToDevice(R1({1, 2, 3, 4}));
  std::vector<se::OwningDeviceMemory> results;
  for (int step = 0; step < 2; ++step) {
    std::vector<MaybeOwningDeviceMemory> arguments;
    arguments.emplace_back(std::move(state));
    ASSERT_TRUE(
        executable->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results).ok());
    ASSERT_EQ(results.size(), 2u);
    if (step == 0) {
      EXPECT_EQ(FromDevice(results[0].cref(), 4), R1({-1, -2, -3, -4}));
      EXPECT_EQ(FromDevice(results[1].cref(), 4), R1({14, 13, 12, 11}));
    } else {
      EXPECT_EQ(FromDevice(results[0].cref(), 4), R1({1, 2, 3, 4}));
      EXPECT_EQ(FromDevice(results[1].cref(), 4), R1({-14, -13, -12, -11}));
    }
    state = std::move(results[0]);
  }
}

TEST_P(ExecuteArraysTest, DonatedArgumentNoOutputTakesIsReleased) {
  // No alias: the donated buffer is freed by the run, not returned.
  auto executable = Compile(R"(
HloModule negate
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT out = (f32[4]) tuple(n)
})");
  std::vector<MaybeOwningDeviceMemory> arguments;
  arguments.emplace_back(ToDevice(R1({1, 2, 3, 4})));
  std::vector<se::OwningDeviceMemory> results;
  ASSERT_TRUE(
      executable->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results).ok());
  EXPECT_FALSE(arguments[0].HasOwnership());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(FromDevice(results[0].cref(), 4), R1({-1, -2, -3, -4}));
}

TEST_P(ExecuteArraysTest, MustAliasWithoutDonationIsInvalidArgument) {
  auto executable = Compile(R"(
HloModule increment, input_output_alias={ {0}: (0, {}, must-alias) }
ENTRY e {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  ROOT out = (f32[2]) tuple(n)
})");
  se::OwningDeviceMemory a = ToDevice(R1({1, 2}));
  std::vector<MaybeOwningDeviceMemory> arguments;
  arguments.emplace_back(a.cref());
  std::vector<se::OwningDeviceMemory> results;
  absl::Status status =
      executable->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("must-alias"));
  EXPECT_TRUE(results.empty());
}

TEST_P(ExecuteArraysTest, BadArgumentsAreClearErrors) {
  auto executable = Compile(kStep);
  se::OwningDeviceMemory a = ToDevice(R1({1, 2, 3, 4}));
  se::OwningDeviceMemory small = ToDevice(R1({1, 2}));
  std::vector<se::OwningDeviceMemory> results;

  std::vector<MaybeOwningDeviceMemory> one;
  one.emplace_back(a.cref());
  absl::Status count = executable->RunArrays(absl::MakeSpan(one), ExecutableRunOptions(), &results);
  EXPECT_EQ(count.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(count.message(), HasSubstr("takes 2 argument(s); got 1"));

  std::vector<MaybeOwningDeviceMemory> short_buffer;
  short_buffer.emplace_back(a.cref());
  short_buffer.emplace_back(small.cref());
  absl::Status size =
      executable->RunArrays(absl::MakeSpan(short_buffer), ExecutableRunOptions(), &results);
  EXPECT_EQ(size.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(size.message(), HasSubstr("argument 1"));
  EXPECT_THAT(size.message(), HasSubstr("needs a buffer of 16 bytes; got 8 bytes"));

  std::vector<MaybeOwningDeviceMemory> null_buffer;
  null_buffer.emplace_back(se::DeviceMemoryBase());
  null_buffer.emplace_back(a.cref());
  absl::Status null =
      executable->RunArrays(absl::MakeSpan(null_buffer), ExecutableRunOptions(), &results);
  EXPECT_EQ(null.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(null.message(), HasSubstr("got none"));
  EXPECT_TRUE(results.empty());
}

TEST_P(ExecuteArraysTest, ProgramNotArraysToATupleIsRefused) {
  auto executable = Compile(R"(
HloModule single
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
})");
  se::OwningDeviceMemory a = ToDevice(R1({1, 2, 3, 4}));
  std::vector<MaybeOwningDeviceMemory> arguments;
  arguments.emplace_back(a.cref());
  std::vector<se::OwningDeviceMemory> results;
  absl::Status status =
      executable->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not arrays to a tuple of arrays"));
}

TEST(ExecuteArraysNestedTest, ARunInsideARunOnTheSameThreadKeepsBothArgumentLists) {
  auto step = testing::CompileOn("cpu", kStep);
  ASSERT_TRUE(step.ok()) << step.status();
  nested_step = step->get();
  nested_error.clear();
  // out = (p0 + nested(p1), p1): the outer run's argument list is read
  // again after the nested run.
  auto outer = testing::CompileOn("cpu", R"(
HloModule outer
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  n = f32[4] custom-call(p1), custom_call_target="RunNestedStep"
  add = f32[4] add(p0, n)
  ROOT out = (f32[4], f32[4]) tuple(add, p1)
})");
  ASSERT_TRUE(outer.ok()) << outer.status();
  LocalClient* client = testing::ClientFor("cpu");
  std::vector<se::OwningDeviceMemory> owned;
  for (const Literal& literal : {R1({1, 2, 3, 4}), R1({10, 20, 30, 40})}) {
    auto buffer = client->LiteralToShapedBuffer(literal, 0);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    se::DeviceMemoryAllocator* allocator = buffer->memory_allocator();
    owned.emplace_back(buffer->release().root_buffer(), 0, allocator);
  }
  std::vector<MaybeOwningDeviceMemory> arguments;
  arguments.reserve(owned.size());
  for (const se::OwningDeviceMemory& memory : owned) arguments.emplace_back(memory.cref());
  std::vector<se::OwningDeviceMemory> results;
  absl::Status status =
      (*outer)->RunArrays(absl::MakeSpan(arguments), ExecutableRunOptions(), &results);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(nested_error, "");
  ASSERT_EQ(results.size(), 2u);
  const auto* sum = static_cast<const float*>(results[0].cref().opaque());
  const auto* p1 = static_cast<const float*>(results[1].cref().opaque());
  for (int i = 0; i < 4; ++i) {
    const float x = 10.f * static_cast<float>(i + 1);
    EXPECT_EQ(sum[i], static_cast<float>(i + 1) + x * x) << i;
    EXPECT_EQ(p1[i], x) << i;
  }
  nested_step = nullptr;
}

INSTANTIATE_TEST_SUITE_P(Platforms, ExecuteArraysTest, ::testing::Values("cpu", "interpreter"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace axle
