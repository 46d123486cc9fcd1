// The `cpu` platform through the client API: results agree with the
// interpreter, aliasing works, unsupported ops are Unimplemented errors.
#include <thread>

#include "axle/base/status_macros.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::ClientFor;
using testing::ExpectCpuAgrees;
using ::testing::HasSubstr;
using testing::RunOn;

Literal Iota(const Shape& shape, float scale, float offset) {
  Literal literal(shape);
  auto data = literal.data<float>();
  for (size_t i = 0; i < data.size(); ++i) data[i] = scale * static_cast<float>(i % 101) + offset;
  return literal;
}

TEST(CpuPlatformTest, IsRegisteredUnderXlasNames) {
  auto platform = PlatformUtil::GetPlatform("cpu");
  ASSERT_TRUE(platform.ok()) << platform.status();
  EXPECT_EQ((*platform)->Name(), "Host");
  EXPECT_EQ(*PlatformUtil::GetPlatform("Host"), *platform);
  EXPECT_EQ(*PlatformUtil::GetDefaultPlatform(), *platform);
}

TEST(CpuPlatformTest, OwnsItsAllocatorStreamAndTransferManager) {
  se::Platform* cpu = *PlatformUtil::GetPlatform("cpu");
  se::Platform* interpreter = *PlatformUtil::GetPlatform("interpreter");
  EXPECT_EQ(cpu->memory_allocator()->platform(), cpu);
  EXPECT_NE(cpu->memory_allocator(), interpreter->memory_allocator());
  EXPECT_NE(*cpu->DefaultStream(0), *interpreter->DefaultStream(0));
  EXPECT_NE(cpu->transfer_manager(), interpreter->transfer_manager());
  LocalClient* client = *ClientLibrary::GetOrCreateLocalClient(cpu);
  EXPECT_EQ(client->backend().memory_allocator(), cpu->memory_allocator());
}

TEST(CpuPlatformTest, FusedElementwiseChainAgreesWithTheInterpreter) {
  Shape shape = ShapeUtil::MakeShape(F32, {64, 33});
  ExpectCpuAgrees(R"(
HloModule chain
ENTRY e {
  a = f32[64,33] parameter(0)
  b = f32[64,33] parameter(1)
  c = f32[64,33] parameter(2)
  ab = f32[64,33] multiply(a, b)
  abc = f32[64,33] add(ab, c)
  zero = f32[] constant(0)
  zeros = f32[64,33] broadcast(zero), dimensions={}
  relu = f32[64,33] maximum(abc, zeros)
  half = f32[] constant(0.5)
  halves = f32[64,33] broadcast(half), dimensions={}
  scaled = f32[64,33] multiply(relu, halves)
  ROOT out = f32[64,33] subtract(scaled, a)
})",
                  {Iota(shape, 0.1f, -3), Iota(shape, -0.05f, 2), Iota(shape, 0.01f, 0)});
}

TEST(CpuPlatformTest, ReductionsTuplesAndTranscendentals) {
  Shape shape = ShapeUtil::MakeShape(F32, {16, 40});
  ExpectCpuAgrees(R"(
HloModule softmaxish
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[16,40] parameter(0)
  t = f32[16,40] tanh(p)
  x = f32[16,40] exponential(t)
  z = f32[] constant(0)
  sum = f32[16] reduce(x, z), dimensions={1}, to_apply=add
  tp = f32[40,16] transpose(x), dimensions={1,0}
  ROOT r = (f32[16], f32[40,16], f32[16,40]) tuple(sum, tp, p)
})",
                  {Iota(shape, 0.03f, -1.5f)});
}

// XLA's copy of a tuple is a deep copy: every element, nested tuples too.
TEST(CpuPlatformTest, CopyOfATupleCopiesEveryElement) {
  ExpectCpuAgrees(R"(
HloModule copy_tuple
ENTRY e {
  a = f32[4] parameter(0)
  b = s32[2,3] parameter(1)
  n = f32[4] negate(a)
  inner = (f32[4], s32[2,3]) tuple(n, b)
  t = (f32[4], (f32[4], s32[2,3])) tuple(a, inner)
  ct = (f32[4], (f32[4], s32[2,3])) copy(t)
  ROOT r = ((f32[4], (f32[4], s32[2,3])), f32[4]) tuple(ct, n)
})",
                  {Iota(ShapeUtil::MakeShape(F32, {4}), 0.5f, -1),
                   LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 5, 6}})});
}

// XLA's pred is one byte wide: four of them bitcast to one f32.
TEST(CpuPlatformTest, BitcastConvertOfPredToF32) {
  ExpectCpuAgrees(R"(
HloModule pred_bits
ENTRY e {
  p = pred[4] parameter(0)
  ROOT f = f32[] bitcast-convert(p)
})",
                  {LiteralUtil::CreateR1<bool>({true, false, false, true})});
}

// A multi-output loop fusion whose outputs have different shapes.
TEST(CpuPlatformTest, MultiOutputFusionWithOutputsOfDifferentShapes) {
  ExpectCpuAgrees(R"(
HloModule two_shapes
fused {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  s = f32[2] slice(n), slice={[1:3]}
  ROOT t = (f32[4], f32[2]) tuple(n, s)
}
ENTRY e {
  a = f32[4] parameter(0)
  ROOT f = (f32[4], f32[2]) fusion(a), kind=kLoop, calls=fused
})",
                  {Iota(ShapeUtil::MakeShape(F32, {4}), 0.25f, 1)});
}

TEST(CpuPlatformTest, DonatedInputIsUpdatedInPlace) {
  LocalClient* client = ClientFor("cpu");
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule increment, input_output_alias={ {}: 0 }
ENTRY entry {
  %p = f32[8] parameter(0)
  %c = f32[] constant(1)
  %b = f32[8] broadcast(%c), dimensions={}
  ROOT %out = f32[8] add(%p, %b)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = client->Compile(std::move(*module), {});
  ASSERT_TRUE(executable.ok()) << executable.status();
  Literal value = Iota(ShapeUtil::MakeShape(F32, {8}), 1, 0);
  ScopedShapedBuffer argument = *client->LiteralToShapedBuffer(value, 0);
  const void* address = argument.root_buffer().opaque();
  std::vector<ExecutionInput> inputs;
  inputs.push_back(ExecutionInput::Donate(&argument));
  auto output = (*executable)->Run(std::move(inputs), {});
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->Result().root_buffer().opaque(), address);
  Literal result = *client->ShapedBufferToLiteral(output->Result());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(result.data<float>()[i], value.data<float>()[i] + 1);
}

// As in XLA, an output may alias a parameter of another shape with the same
// byte size; donated, the output takes the parameter's buffer, not donated,
// the caller's value stays.
TEST(CpuPlatformTest, OutputAliasesAParameterOfAnotherShapeAndTheSameSize) {
  constexpr char kText[] = R"(
HloModule swap, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = bf16[10,11,12] parameter(0)
  t = bf16[11,10,12] transpose(p), dimensions={1,0,2}
  ROOT out = bf16[11,10,12] negate(t)
})";
  Literal values(ShapeUtil::MakeShape(F32, {10, 11, 12}));
  for (size_t i = 0; i < values.data<float>().size(); ++i) {
    values.data<float>()[i] = static_cast<float>(i % 7);
  }
  const Literal argument = *values.Convert(BF16);
  for (const char* platform : {"cpu", "interpreter"}) {
    SCOPED_TRACE(platform);
    LocalClient* client = ClientFor(platform);
    auto module = ParseAndReturnUnverifiedModule(kText);
    ASSERT_TRUE(module.ok()) << module.status();
    auto executable = client->Compile(std::move(*module), {});
    ASSERT_TRUE(executable.ok()) << executable.status();
    auto check = [&](const ShapedBuffer& result) {
      Literal out = *(*client->ShapedBufferToLiteral(result)).Convert(F32);
      ASSERT_EQ(out.shape().dimensions(), (std::vector<int64_t>{11, 10, 12}));
      for (int64_t i = 0; i < 10; ++i) {
        for (int64_t j = 0; j < 11; ++j) {
          for (int64_t k = 0; k < 12; ++k) {
            ASSERT_EQ(out.data<float>()[(j * 10 + i) * 12 + k],
                      -values.data<float>()[(i * 11 + j) * 12 + k]);
          }
        }
      }
    };
    ScopedShapedBuffer kept = *client->LiteralToShapedBuffer(argument, 0);
    auto copied = (*executable)->Run({&kept}, {});
    ASSERT_TRUE(copied.ok()) << copied.status();
    check(*copied);
    EXPECT_EQ(*client->ShapedBufferToLiteral(kept), argument);
    ScopedShapedBuffer donated = *client->LiteralToShapedBuffer(argument, 0);
    const void* address = donated.root_buffer().opaque();
    std::vector<ExecutionInput> inputs;
    inputs.push_back(ExecutionInput::Donate(&donated));
    auto output = (*executable)->Run(std::move(inputs), {});
    ASSERT_TRUE(output.ok()) << output.status();
    EXPECT_EQ(output->Result().root_buffer().opaque(), address);
    check(output->Result());
  }
}

// Many donated arguments, each output reading its own argument and the
// next one's (which the next output takes over): every output lands in its
// argument's buffer with the values computed from the arguments as passed,
// run after run (the executable finds which argument a result buffer is
// in a table sorted per run).
TEST(CpuPlatformTest, ManyDonatedArgumentsReadByTheirNeighbours) {
  LocalClient* client = ClientFor("cpu");
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule ring, input_output_alias={ {0}: (0, {}), {1}: (1, {}), {2}: (2, {}), {3}: (3, {}), {4}: (4, {}), {5}: (5, {}), {6}: (6, {}), {7}: (7, {}), {8}: (8, {}), {9}: (9, {}) }
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  p2 = f32[8] parameter(2)
  p3 = f32[8] parameter(3)
  p4 = f32[8] parameter(4)
  p5 = f32[8] parameter(5)
  p6 = f32[8] parameter(6)
  p7 = f32[8] parameter(7)
  p8 = f32[8] parameter(8)
  p9 = f32[8] parameter(9)
  two = f32[] constant(2)
  t = f32[8] broadcast(two), dimensions={}
  m0 = f32[8] multiply(p0, t)
  o0 = f32[8] add(m0, p1)
  m1 = f32[8] multiply(p1, t)
  o1 = f32[8] add(m1, p2)
  m2 = f32[8] multiply(p2, t)
  o2 = f32[8] add(m2, p3)
  m3 = f32[8] multiply(p3, t)
  o3 = f32[8] add(m3, p4)
  m4 = f32[8] multiply(p4, t)
  o4 = f32[8] add(m4, p5)
  m5 = f32[8] multiply(p5, t)
  o5 = f32[8] add(m5, p6)
  m6 = f32[8] multiply(p6, t)
  o6 = f32[8] add(m6, p7)
  m7 = f32[8] multiply(p7, t)
  o7 = f32[8] add(m7, p8)
  m8 = f32[8] multiply(p8, t)
  o8 = f32[8] add(m8, p9)
  m9 = f32[8] multiply(p9, t)
  o9 = f32[8] add(m9, p0)
  ROOT out = (f32[8], f32[8], f32[8], f32[8], f32[8], f32[8], f32[8], f32[8], f32[8], f32[8]) tuple(o0, o1, o2, o3, o4, o5, o6, o7, o8, o9)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = client->Compile(std::move(*module), {});
  ASSERT_TRUE(executable.ok()) << executable.status();
  constexpr int kArguments = 10;
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(run);
    std::vector<Literal> values;
    std::vector<ScopedShapedBuffer> buffers;
    std::vector<const void*> addresses;
    std::vector<ExecutionInput> inputs;
    inputs.reserve(kArguments);
    for (int i = 0; i < kArguments; ++i) {
      values.push_back(Iota(ShapeUtil::MakeShape(F32, {8}), 1, static_cast<float>(10 * i + run)));
      buffers.push_back(*client->LiteralToShapedBuffer(values.back(), 0));
      addresses.push_back(buffers.back().root_buffer().opaque());
    }
    for (ScopedShapedBuffer& buffer : buffers) inputs.push_back(ExecutionInput::Donate(&buffer));
    auto output = (*executable)->Run(std::move(inputs), {});
    ASSERT_TRUE(output.ok()) << output.status();
    Literal result = *client->ShapedBufferToLiteral(output->Result());
    for (int i = 0; i < kArguments; ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(output->Result().buffer({i}).opaque(), addresses[i]);
      const auto own = values[i].data<float>();
      const auto next = values[(i + 1) % kArguments].data<float>();
      for (int j = 0; j < 8; ++j) {
        EXPECT_EQ(result.data<float>({i})[j], 2 * own[j] + next[j]);
      }
    }
  }
}

TEST(CpuPlatformTest, OneExecutableFromEightThreads) {
  LocalClient* client = ClientFor("cpu");
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  l = f32[256] logistic(p)
  ROOT r = f32[256] multiply(l, p)
})");
  ASSERT_TRUE(module.ok());
  auto executable = client->Compile(std::move(*module), {});
  ASSERT_TRUE(executable.ok()) << executable.status();
  ScopedShapedBuffer argument =
      *client->LiteralToShapedBuffer(Iota(ShapeUtil::MakeShape(F32, {256}), 0.1f, -5), 0);
  Literal expected = *client->ShapedBufferToLiteral(*(*executable)->Run({&argument}, {}));
  std::vector<Literal> results(8);
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto result = (*executable)->Run({&argument}, {});
      if (result.ok()) results[t] = *client->ShapedBufferToLiteral(*result);
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(results[t], expected) << "thread " << t;
}

}  // namespace
}  // namespace axle
