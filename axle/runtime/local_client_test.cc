// LocalClient / LocalExecutable on the interpreter platform: compiling,
// running, transfers, input/output aliasing (donation, copy protection,
// must-alias), compile-time checks, custom-call failures and concurrency.
#include "axle/runtime/local_client.h"

#include <thread>

#include "absl/strings/match.h"
#include "axle/builder/xla_builder.h"
#include "axle/core/literal_text.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/custom_call_status.h"
#include "axle/runtime/transfer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

LocalClient* Client() {
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform("interpreter");
  CHECK(platform.ok()) << platform.status();
  absl::StatusOr<LocalClient*> client = ClientLibrary::GetOrCreateLocalClient(*platform);
  CHECK(client.ok()) << client.status();
  return *client;
}

std::unique_ptr<LocalExecutable> CompileText(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  auto executable = Client()->Compile(std::move(*module), ExecutableBuildOptions());
  CHECK(executable.ok()) << executable.status();
  return std::move(*executable);
}

absl::Status CompileTextStatus(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  return Client()->Compile(std::move(*module), ExecutableBuildOptions()).status();
}

Literal R1(std::vector<float> values) {
  Literal literal(ShapeUtil::MakeShape(F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.data<float>()[i] = values[i];
  return literal;
}

ScopedShapedBuffer ToDevice(const Literal& literal) {
  auto buffer = Client()->LiteralToShapedBuffer(literal, 0);
  CHECK(buffer.ok()) << buffer.status();
  return std::move(*buffer);
}

Literal FromDevice(const ShapedBuffer& buffer) {
  auto literal = Client()->ShapedBufferToLiteral(buffer);
  CHECK(literal.ok()) << literal.status();
  return std::move(*literal);
}

TEST(LocalClientTest, PlatformsByName) {
  EXPECT_TRUE(PlatformUtil::GetPlatform("interpreter").ok());
  EXPECT_EQ((*PlatformUtil::GetPlatform("Interpreter"))->Name(), "Interpreter");
  absl::Status missing = PlatformUtil::GetPlatform("tpu").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("interpreter"));
}

TEST(LocalClientTest, CompilesAndRunsABuiltComputation) {
  XlaBuilder b("axpy");
  Shape shape = ShapeUtil::MakeShape(F32, {4});
  XlaOp x = Parameter(&b, 0, shape, "x");
  XlaOp y = Parameter(&b, 1, shape, "y");
  Add(Mul(ConstantR0<float>(&b, 2.0f), x), y);
  auto computation = b.Build();
  ASSERT_TRUE(computation.ok()) << computation.status();
  auto executables = Client()->Compile(*computation, {&shape, &shape}, ExecutableBuildOptions());
  ASSERT_TRUE(executables.ok()) << executables.status();
  ASSERT_EQ(executables->size(), 1u);
  ScopedShapedBuffer a = ToDevice(R1({1, 2, 3, 4}));
  ScopedShapedBuffer c = ToDevice(R1({10, 20, 30, 40}));
  auto result = executables->front()->Run({&a, &c}, ExecutableRunOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(FromDevice(*result), R1({12, 24, 36, 48}));
  // Arguments are only lent: still readable.
  EXPECT_EQ(FromDevice(a), R1({1, 2, 3, 4}));
}

TEST(LocalClientTest, CompileChecksArgumentLayouts) {
  XlaBuilder b("neg");
  Shape shape = ShapeUtil::MakeShape(F32, {4});
  Neg(Parameter(&b, 0, shape, "x"));
  auto computation = b.Build();
  ASSERT_TRUE(computation.ok());
  Shape wrong = ShapeUtil::MakeShape(F32, {5});
  absl::Status status =
      Client()->Compile(*computation, {&wrong}, ExecutableBuildOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("f32[4]"));
  status = Client()->Compile(*computation, {}, ExecutableBuildOptions()).status();
  EXPECT_THAT(status.message(), HasSubstr("0 argument layout(s)"));
}

TEST(LocalClientTest, RunChecksArguments) {
  auto executable = CompileText(R"(
HloModule add
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT r = f32[2] add(a, b)
})");
  ScopedShapedBuffer two = ToDevice(R1({1, 2}));
  ScopedShapedBuffer three = ToDevice(R1({1, 2, 3}));
  absl::Status status = executable->Run({&two}, ExecutableRunOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("takes 2 argument(s); got 1"));
  status = executable->Run({&two, &three}, ExecutableRunOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("argument 1 (parameter b) has shape f32[3]"));
  // Still usable.
  auto result = executable->Run({&two, &two}, ExecutableRunOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(FromDevice(*result), R1({2, 4}));
}

TEST(LocalClientTest, LentArgumentsAreCheckedAndReadInPlace) {
  // No output aliases an argument: the run reads the caller's buffers
  // through the caller's ShapedBuffers (no per-run copies of them).
  auto executable = CompileText(R"(
HloModule add
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT r = f32[2] add(a, b)
})");
  ScopedShapedBuffer one = ToDevice(R1({1, 2}));
  ScopedShapedBuffer two = ToDevice(R1({3, 4}));
  ExecutionInput donated = ExecutionInput::Donate(&two);  // `two` is now invalid
  absl::Status status = executable->Run({&one, &two}, ExecutableRunOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("argument 1 (parameter b)"));
  EXPECT_THAT(status.message(), HasSubstr("donated"));
  status = executable->Run({&one, nullptr}, ExecutableRunOptions()).status();
  EXPECT_THAT(status.message(), HasSubstr("argument 1 is null"));
  ExecutableRunOptions elsewhere;
  elsewhere.set_device_ordinal(1);
  status = executable->Run({&one, &one}, elsewhere).status();
  EXPECT_THAT(status.message(), HasSubstr("device ordinal 1 does not exist"));
  auto result = executable->Run({&one, &one}, ExecutableRunOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(FromDevice(*result), R1({2, 4}));
  EXPECT_EQ(FromDevice(one), R1({1, 2}));
}

TEST(LocalClientTest, TransfersTuplesAndLayouts) {
  Literal matrix(ShapeUtil::MakeShapeWithDenseLayout(S32, {2, 3}, {0, 1}));
  for (int i = 0; i < 6; ++i) matrix.data<int32_t>()[i] = i;
  Literal tuple = Literal::MakeTuple({matrix.Clone(), R1({5})});
  ScopedShapedBuffer buffer = ToDevice(tuple);
  // Column-major on the device: element (1,0) = 3 comes second.
  const auto* device = static_cast<const int32_t*>(buffer.buffer({0}).opaque());
  EXPECT_EQ(device[0], 0);
  EXPECT_EQ(device[1], 3);
  EXPECT_EQ(device[2], 1);
  // The tuple's buffer is its index table.
  const auto* table = static_cast<void* const*>(buffer.root_buffer().opaque());
  EXPECT_EQ(table[0], buffer.buffer({0}).opaque());
  EXPECT_EQ(table[1], buffer.buffer({1}).opaque());
  EXPECT_EQ(FromDevice(buffer), tuple);
}

constexpr char kIncrement[] = R"(
HloModule increment, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY entry {
  p = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT out = f32[4] add(p, b)
})";

TEST(ShapedBufferMoveTest, MovedFromBufferIsReportedNotRead) {
  ScopedShapedBuffer original = ToDevice(Literal::MakeTuple({R1({1, 2}), R1({3, 4, 5})}));
  const void* address = original.buffer({1}).opaque();
  ScopedShapedBuffer moved(std::move(original));
  // The shape and the buffers change hands; nothing is copied or freed.
  EXPECT_EQ(moved.buffer({1}).opaque(), address);
  EXPECT_EQ(FromDevice(moved), Literal::MakeTuple({R1({1, 2}), R1({3, 4, 5})}));
  // The moved-from value has no shape and says so when used.
  EXPECT_EQ(original.on_device_shape().element_type(), PRIMITIVE_TYPE_INVALID);  // NOLINT
  absl::Status status = original.CheckValid("argument 0");                       // NOLINT
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("argument 0"));
  EXPECT_THAT(status.message(), HasSubstr("moved away"));
  // One null buffer, at the root; freeing it (destruction, clear, a move
  // into it) frees nothing.
  EXPECT_TRUE(original.root_buffer().is_null());
  EXPECT_EQ(original.buffers().size(), 1);
  // Assigned back, it is whole again.
  original = std::move(moved);  // NOLINT
  EXPECT_EQ(original.buffer({1}).opaque(), address);
  EXPECT_EQ(FromDevice(original), Literal::MakeTuple({R1({1, 2}), R1({3, 4, 5})}));
  // release() is not a move: the released value keeps its shape, with null
  // buffers (the error of a donated value).
  ShapedBuffer released = original.release();
  EXPECT_EQ(released.buffer({1}).opaque(), address);
  EXPECT_EQ(original.on_device_shape(), released.on_device_shape());
  EXPECT_TRUE(original.buffer({1}).is_null());
  EXPECT_THAT(original.CheckValid("argument 0").message(), HasSubstr("is null"));
  original = ScopedShapedBuffer(std::move(released), original.memory_allocator());
  EXPECT_EQ(FromDevice(original), Literal::MakeTuple({R1({1, 2}), R1({3, 4, 5})}));
}

TEST(ShapedBufferMoveTest, RunWithAMovedFromArgumentIsAnError) {
  auto executable = CompileText(kIncrement);
  ScopedShapedBuffer value = ToDevice(R1({1, 2, 3, 4}));
  ScopedShapedBuffer taken(std::move(value));
  // NOLINTNEXTLINE(bugprone-use-after-move): running it is the point.
  absl::Status status = executable->Run({&value}, ExecutableRunOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("argument 0 (parameter p) has shape"));
  auto result = executable->Run({&taken}, ExecutableRunOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(FromDevice(*result), R1({2, 3, 4, 5}));
}

TEST(AliasingTest, DonatedInputIsUpdatedInPlace) {
  auto executable = CompileText(kIncrement);
  ScopedShapedBuffer argument = ToDevice(R1({1, 2, 3, 4}));
  const void* address = argument.root_buffer().opaque();
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&argument));
  auto output = executable->Run(std::move(inputs), ExecutableRunOptions());
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->Result().root_buffer().opaque(), address);
  EXPECT_EQ(output->aliased_indices(), std::vector<ShapeIndex>{ShapeIndex{}});
  EXPECT_EQ(FromDevice(output->Result()), R1({2, 3, 4, 5}));
  // The caller's handle is invalid now.
  EXPECT_TRUE(argument.root_buffer().is_null());
  absl::Status reuse = executable->Run({&argument}, ExecutableRunOptions()).status();
  EXPECT_EQ(reuse.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reuse.message(), HasSubstr("argument 0"));
  EXPECT_THAT(reuse.message(), HasSubstr("donated"));
  EXPECT_THAT(Client()->ShapedBufferToLiteral(argument).status().message(), HasSubstr("donated"));
}

TEST(AliasingTest, DonationChainsAcrossRuns) {
  auto executable = CompileText(kIncrement);
  ScopedShapedBuffer state = ToDevice(R1({0, 0, 0, 0}));
  const void* address = state.root_buffer().opaque();
  for (int step = 0; step < 3; ++step) {
    std::vector<ExecutionInput> inputs;
    inputs.push_back(ExecutionInput::Donate(&state));
    auto output = executable->Run(std::move(inputs), ExecutableRunOptions());
    ASSERT_TRUE(output.ok()) << output.status();
    state = output->ConsumeResult();
  }
  EXPECT_EQ(state.root_buffer().opaque(), address);
  EXPECT_EQ(FromDevice(state), R1({3, 3, 3, 3}));
}

TEST(AliasingTest, AliasedInputNotDonatedIsCopyProtected) {
  auto executable = CompileText(kIncrement);
  ScopedShapedBuffer argument = ToDevice(R1({1, 2, 3, 4}));
  auto result = executable->Run({&argument}, ExecutableRunOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->root_buffer().opaque(), argument.root_buffer().opaque());
  EXPECT_EQ(FromDevice(*result), R1({2, 3, 4, 5}));
  EXPECT_EQ(FromDevice(argument), R1({1, 2, 3, 4}));
  // The same through ExecutionInput without ownership.
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Borrow(argument));
  auto output = executable->Run(std::move(inputs), ExecutableRunOptions());
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_TRUE(output->aliased_indices().empty());
  EXPECT_EQ(FromDevice(argument), R1({1, 2, 3, 4}));
}

TEST(AliasingTest, MustAliasWithoutDonationIsInvalidArgument) {
  auto executable = CompileText(R"(
HloModule increment, input_output_alias={ {}: (0, {}, must-alias) }
ENTRY entry {
  p = f32[2] parameter(0)
  ROOT out = f32[2] negate(p)
})");
  ScopedShapedBuffer argument = ToDevice(R1({1, 2}));
  absl::Status status = executable->Run({&argument}, ExecutableRunOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("must-alias"));
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&argument));
  auto output = executable->Run(std::move(inputs), ExecutableRunOptions());
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(FromDevice(output->Result()), R1({-1, -2}));
}

TEST(AliasingTest, SetUpAliasFromTheBuilderAndTupleOutputs) {
  XlaBuilder b("step");
  Shape shape = ShapeUtil::MakeShape(F32, {2});
  XlaOp w = Parameter(&b, 0, shape, "w");
  XlaOp g = Parameter(&b, 1, shape, "g");
  Tuple(&b, {Sub(w, g), Add(w, g)});
  b.SetUpAlias({0}, 0, {});
  auto computation = b.Build();
  ASSERT_TRUE(computation.ok()) << computation.status();
  EXPECT_THAT(computation->ToString(), HasSubstr("input_output_alias={ {0}: (0, {}"));
  auto executables = Client()->Compile(*computation, {&shape, &shape}, ExecutableBuildOptions());
  ASSERT_TRUE(executables.ok()) << executables.status();
  ScopedShapedBuffer weights = ToDevice(R1({10, 20}));
  ScopedShapedBuffer grads = ToDevice(R1({1, 2}));
  const void* address = weights.root_buffer().opaque();
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&weights));
  inputs.push_back(ExecutionInput::Donate(&grads));
  auto output = executables->front()->Run(std::move(inputs), ExecutableRunOptions());
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->Result().buffer({0}).opaque(), address);
  EXPECT_EQ(FromDevice(output->Result()), Literal::MakeTuple({R1({9, 18}), R1({11, 22})}));
  // The donated gradient buffer was not reused: it comes back to be freed.
  EXPECT_EQ(output->ConsumeToBeReleased().size(), 1u);
}

TEST(AliasingTest, DonatedTupleElement) {
  auto executable = CompileText(R"(
HloModule m, input_output_alias={ {}: (0, {1}) }
ENTRY e {
  p = (f32[2], f32[2]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = f32[2] get-tuple-element(p), index=1
  ROOT r = f32[2] multiply(a, b)
})");
  ScopedShapedBuffer argument = ToDevice(Literal::MakeTuple({R1({2, 3}), R1({4, 5})}));
  const void* address = argument.buffer({1}).opaque();
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&argument));
  auto output = executable->Run(std::move(inputs), ExecutableRunOptions());
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->Result().root_buffer().opaque(), address);
  EXPECT_EQ(FromDevice(output->Result()), R1({8, 15}));
}

TEST(AliasingTest, InvalidConfigsAreCompileErrors) {
  absl::Status status = CompileTextStatus(R"(
HloModule m, input_output_alias={ {}: (1, {}) }
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] negate(p)
})");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("parameter 1"));

  status = CompileTextStatus(R"(
HloModule m, input_output_alias={ {}: (0, {}) }
ENTRY e {
  p = f32[3] parameter(0)
  ROOT r = f32[2] slice(p), slice={[0:2]}
})");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("different sizes"));

  // Buffers of one byte size alias whatever their types, as in XLA
  // (HloInputOutputAliasConfig::Verify compares sizes).
  status = CompileTextStatus(R"(
HloModule m, input_output_alias={ {}: (0, {}) }
ENTRY e {
  p = s32[2] parameter(0)
  ROOT r = f32[2] convert(p)
})");
  EXPECT_TRUE(status.ok()) << status;

  status = CompileTextStatus(R"(
HloModule m, input_output_alias={ {0}: (0, {}), {1}: (0, {}) }
ENTRY e {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  ROOT r = (f32[2], f32[2]) tuple(n, n)
})");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("more than one output"));

  status = CompileTextStatus(R"(
HloModule m, input_output_alias={ {}: (0, {3}) }
ENTRY e {
  p = (f32[2]) parameter(0)
  ROOT r = f32[2] get-tuple-element(p), index=0
})");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("{3}"));
}

// --- Custom calls --------------------------------------------------------

void FailingTarget(void* out, const void** in, const char* opaque, size_t opaque_len,
                   XlaCustomCallStatus* status) {
  float x = *static_cast<const float*>(in[0]);
  if (x < 0) {
    XlaCustomCallStatusSetFailure(status, "negative input", 14);
    return;
  }
  *static_cast<float*>(out) = x * 2;
}
XLA_REGISTER_CUSTOM_CALL_TARGET(FailingTarget, "Host");

void GpuOnlyTarget(void* stream, void** buffers, const char* opaque, size_t opaque_len) {}
XLA_REGISTER_CUSTOM_CALL_TARGET(GpuOnlyTarget, "CUDA");

TEST(CustomCallRuntimeTest, FailureAbortsTheRunAndLeaksNothing) {
  auto executable = CompileText(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] custom-call(p), custom_call_target="FailingTarget",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED
})");
  HostMemoryAllocator allocator;
  ExecutableRunOptions options;
  options.set_allocator(&allocator);
  Literal negative(ShapeUtil::MakeShape(F32, {}));
  negative.data<float>()[0] = -1;
  Literal positive(ShapeUtil::MakeShape(F32, {}));
  positive.data<float>()[0] = 3;
  {
    ScopedShapedBuffer bad = *TransferLiteralToDevice(negative, &allocator);
    absl::Status status = executable->Run({&bad}, options).status();
    EXPECT_FALSE(status.ok());
    EXPECT_THAT(status.message(), HasSubstr("negative input"));
    ScopedShapedBuffer good = *TransferLiteralToDevice(positive, &allocator);
    auto result = executable->Run({&good}, options);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(FromDevice(*result).data<float>()[0], 6);
  }
  // Everything the runs allocated went back.
  EXPECT_EQ(allocator.bytes_in_use(), 0);
}

TEST(CustomCallRuntimeTest, DonatedBufferIsFreedWhenTheRunFails) {
  auto executable = CompileText(R"(
HloModule m, input_output_alias={ {}: (0, {}) }
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] custom-call(p), custom_call_target="FailingTarget",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED
})");
  HostMemoryAllocator allocator;
  ExecutableRunOptions options;
  options.set_allocator(&allocator);
  Literal negative(ShapeUtil::MakeShape(F32, {}));
  negative.data<float>()[0] = -1;
  ScopedShapedBuffer bad = *TransferLiteralToDevice(negative, &allocator);
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&bad));
  EXPECT_FALSE(executable->Run(std::move(inputs), options).ok());
  EXPECT_EQ(allocator.bytes_in_use(), 0);
}

TEST(CustomCallRuntimeTest, UnknownTargetIsACompileError) {
  absl::Status status = CompileTextStatus(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] custom-call(p), custom_call_target="NoSuchTarget"
})");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("'NoSuchTarget'"));
  EXPECT_THAT(status.message(), HasSubstr("\"Host\""));
}

TEST(CustomCallRuntimeTest, PythonHostCallbackIsUnimplementedNamingIt) {
  // jax.debug.print as JAX 0.11 lowers it on CPU.
  absl::Status status = CompileTextStatus(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  t = token[] after-all()
  cb = (token[]) custom-call(t, p), custom_call_target="xla_ffi_python_cpu_callback", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, backend_config={index = 0 : ui64}
  ROOT r = f32[] negate(p)
})");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("'xla_ffi_python_cpu_callback'"));
  EXPECT_THAT(status.message(), HasSubstr("Python host callback"));
  EXPECT_THAT(status.message(), HasSubstr("%cb"));
}

// Sharding annotations are computed (removed) by every platform's compiler.
TEST(CustomCallRuntimeTest, ShardingAnnotationsNeedNoTarget) {
  auto executable = CompileText(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  s = f32[2] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  ROOT r = f32[2] negate(s)
})");
  ScopedShapedBuffer argument = ToDevice(R1({1, -2}));
  auto result = executable->Run({&argument}, ExecutableRunOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(FromDevice(*result), R1({-1, 2}));
}

TEST(CustomCallRuntimeTest, CudaConventionIsACompileErrorOnHost) {
  absl::Status status = CompileTextStatus(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT r = f32[] custom-call(p), custom_call_target="GpuOnlyTarget"
})");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("GpuOnlyTarget"));
  EXPECT_THAT(status.message(), HasSubstr("CUDA"));
}

// --- Threads ---------------------------------------------------------------

TEST(ConcurrencyTest, OneExecutableFromEightThreads) {
  auto executable = CompileText(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[64,32] parameter(0)
  t = f32[64,32] tanh(p)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(t, z), dimensions={1}, to_apply=add
})");
  Literal input(ShapeUtil::MakeShape(F32, {64, 32}));
  for (int i = 0; i < 64 * 32; ++i) input.data<float>()[i] = 0.001f * (i % 97) - 0.03f;
  ScopedShapedBuffer argument = ToDevice(input);
  Literal expected = FromDevice(*executable->Run({&argument}, ExecutableRunOptions()));
  constexpr int kThreads = 8;
  std::vector<Literal> results(kThreads);
  std::vector<absl::Status> statuses(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 4; ++iteration) {
        auto result = executable->Run({&argument}, ExecutableRunOptions());
        if (!result.ok()) {
          statuses[t] = result.status();
          return;
        }
        auto literal = TransferLiteralFromDevice(*result);
        statuses[t] = literal.status();
        if (literal.ok()) results[t] = std::move(*literal);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(statuses[t].ok()) << statuses[t];
    EXPECT_EQ(results[t], expected) << "thread " << t;
  }
}

}  // namespace
}  // namespace axle
