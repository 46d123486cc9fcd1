//===- gpu_rng_fusion_test.cc - Random-bit loops as one kernel -------------===//
//
// What JAX's threefry2x32 (jax.random.uniform and friends) becomes on the
// CUDA pipeline: a while loop of 5 trips, each 4 rounds of add, rotate and
// xor on two u32 arrays plus a key injection, whose every value is read by
// two or three of the next round's ops. XLA:GPU unrolls the loop and fuses
// the rounds into one kernel; so must the GPU pipeline
// (gpu_while_unroller.h, then instruction_fusion.h reusing a shared
// producer's copy within a fusion, and a GPU size cap that holds the
// rounds). Without a device: the kernel count, and the prepared module
// (unrolled, fused) computes on the interpreter what the loop did. On a
// GPU: the kernel computes what the interpreter does, bit for bit.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/gpu/gpu_thunks.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

// jax.random.uniform(key, (64, 64)) as JAX lowers it (partitionable
// threefry: counters from iotas, the two outputs xor'ed), f32 in [0, 1).
constexpr char kThreefryUniform[] = R"(HloModule threefry_uniform

rounds {
  s = (s32[], u32[64,64], u32[64,64], u32[], u32[], u32[], u32[4], u32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x0 = u32[64,64] get-tuple-element(s), index=1
  x1 = u32[64,64] get-tuple-element(s), index=2
  ka = u32[] get-tuple-element(s), index=3
  kb = u32[] get-tuple-element(s), index=4
  kc = u32[] get-tuple-element(s), index=5
  r = u32[4] get-tuple-element(s), index=6
  q = u32[4] get-tuple-element(s), index=7
  thirty_two = u32[] constant(32)
  a0 = u32[64,64] add(x0, x1)
  rs0 = u32[1] slice(r), slice={[0:1]}
  r0 = u32[] reshape(rs0)
  lb0 = u32[64,64] broadcast(r0), dimensions={}
  sl0 = u32[64,64] shift-left(x1, lb0)
  m0 = u32[] subtract(thirty_two, r0)
  rb0 = u32[64,64] broadcast(m0), dimensions={}
  sr0 = u32[64,64] shift-right-logical(x1, rb0)
  o0 = u32[64,64] or(sl0, sr0)
  b0 = u32[64,64] xor(a0, o0)
  a1 = u32[64,64] add(a0, b0)
  rs1 = u32[1] slice(r), slice={[1:2]}
  r1 = u32[] reshape(rs1)
  lb1 = u32[64,64] broadcast(r1), dimensions={}
  sl1 = u32[64,64] shift-left(b0, lb1)
  m1 = u32[] subtract(thirty_two, r1)
  rb1 = u32[64,64] broadcast(m1), dimensions={}
  sr1 = u32[64,64] shift-right-logical(b0, rb1)
  o1 = u32[64,64] or(sl1, sr1)
  b1 = u32[64,64] xor(a1, o1)
  a2 = u32[64,64] add(a1, b1)
  rs2 = u32[1] slice(r), slice={[2:3]}
  r2 = u32[] reshape(rs2)
  lb2 = u32[64,64] broadcast(r2), dimensions={}
  sl2 = u32[64,64] shift-left(b1, lb2)
  m2 = u32[] subtract(thirty_two, r2)
  rb2 = u32[64,64] broadcast(m2), dimensions={}
  sr2 = u32[64,64] shift-right-logical(b1, rb2)
  o2 = u32[64,64] or(sl2, sr2)
  b2 = u32[64,64] xor(a2, o2)
  a3 = u32[64,64] add(a2, b2)
  rs3 = u32[1] slice(r), slice={[3:4]}
  r3 = u32[] reshape(rs3)
  lb3 = u32[64,64] broadcast(r3), dimensions={}
  sl3 = u32[64,64] shift-left(b2, lb3)
  m3 = u32[] subtract(thirty_two, r3)
  rb3 = u32[64,64] broadcast(m3), dimensions={}
  sr3 = u32[64,64] shift-right-logical(b2, rb3)
  o3 = u32[64,64] or(sl3, sr3)
  b3 = u32[64,64] xor(a3, o3)
  kab = u32[64,64] broadcast(ka), dimensions={}
  y0 = u32[64,64] add(a3, kab)
  kbb = u32[64,64] broadcast(kb), dimensions={}
  y1k = u32[64,64] add(b3, kbb)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ic = u32[] convert(i1)
  icb = u32[64,64] broadcast(ic), dimensions={}
  y1 = u32[64,64] add(y1k, icb)
  ROOT t = (s32[], u32[64,64], u32[64,64], u32[], u32[], u32[], u32[4], u32[4]) tuple(i1, y0, y1, kb, kc, ka, q, r)
}

below_five {
  s = (s32[], u32[64,64], u32[64,64], u32[], u32[], u32[], u32[4], u32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  five = s32[] constant(5)
  ROOT lt = pred[] compare(i, five), direction=LT
}

ENTRY uniform {
  key = u32[2] parameter(0)
  k0s = u32[1] slice(key), slice={[0:1]}
  k0 = u32[] reshape(k0s)
  k1s = u32[1] slice(key), slice={[1:2]}
  k1 = u32[] reshape(k1s)
  parity = u32[] constant(466688986)
  kx = u32[] xor(k0, k1)
  k2 = u32[] xor(kx, parity)
  row = u32[64,64] iota(), iota_dimension=0
  col = u32[64,64] iota(), iota_dimension=1
  width = u32[] constant(64)
  widths = u32[64,64] broadcast(width), dimensions={}
  rows = u32[64,64] multiply(row, widths)
  count = u32[64,64] add(rows, col)
  zero = u32[] constant(0)
  high = u32[64,64] broadcast(zero), dimensions={}
  k0b = u32[64,64] broadcast(k0), dimensions={}
  x0 = u32[64,64] add(high, k0b)
  k1b = u32[64,64] broadcast(k1), dimensions={}
  x1 = u32[64,64] add(count, k1b)
  r = u32[4] constant({13, 15, 26, 6})
  q = u32[4] constant({17, 29, 16, 24})
  start = s32[] constant(0)
  init = (s32[], u32[64,64], u32[64,64], u32[], u32[], u32[], u32[4], u32[4]) tuple(start, x0, x1, k1, k2, k0, r, q)
  w = (s32[], u32[64,64], u32[64,64], u32[], u32[], u32[], u32[4], u32[4]) while(init), condition=below_five, body=rounds
  y0 = u32[64,64] get-tuple-element(w), index=1
  y1 = u32[64,64] get-tuple-element(w), index=2
  bits = u32[64,64] xor(y0, y1)
  nine = u32[] constant(9)
  nines = u32[64,64] broadcast(nine), dimensions={}
  mantissa = u32[64,64] shift-right-logical(bits, nines)
  exponent = u32[] constant(1065353216)
  exponents = u32[64,64] broadcast(exponent), dimensions={}
  one_to_two = u32[64,64] or(mantissa, exponents)
  floats = f32[64,64] bitcast-convert(one_to_two)
  one = f32[] constant(1)
  ones = f32[64,64] broadcast(one), dimensions={}
  ROOT uniform = f32[64,64] subtract(floats, ones)
}
)";

int CountKernels(const GpuThunkSequence& sequence) {
  int count = 0;
  for (const auto& thunk : sequence) {
    count += dynamic_cast<const GpuKernelThunk*>(thunk.get()) != nullptr;
    if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(thunk.get())) {
      count += CountKernels(loop->body()) + CountKernels(loop->condition());
    }
  }
  return count;
}

bool HasLoop(const GpuThunkSequence& sequence) {
  for (const auto& thunk : sequence) {
    if (dynamic_cast<const GpuWhileThunk*>(thunk.get()) != nullptr) return true;
  }
  return false;
}

absl::StatusOr<GpuProgram> Compile(bool unroll, std::unique_ptr<HloModule>* kept) {
  auto module = ParseAndReturnUnverifiedModule(kThreefryUniform);
  if (!module.ok()) return module.status();
  *kept = std::move(module).value();
  GpuPrepareOptions prepare;
  prepare.unroll_loops = unroll;
  return CompileGpuProgram(kept->get(), PtxOptions(), prepare);
}

Literal Key() { return LiteralUtil::CreateR1<uint32_t>({0, 42}); }

absl::StatusOr<Literal> RunOnInterpreter(std::unique_ptr<HloModule> module) {
  auto platform = PlatformUtil::GetPlatform("interpreter");
  if (!platform.ok()) return platform.status();
  LocalClient* client = *ClientLibrary::GetOrCreateLocalClient(*platform);
  auto executable = client->Compile(std::move(module), {});
  if (!executable.ok()) return executable.status();
  auto key = client->LiteralToShapedBuffer(Key(), 0);
  if (!key.ok()) return key.status();
  auto result = (*executable)->Run({&*key}, {});
  if (!result.ok()) return result.status();
  return client->ShapedBufferToLiteral(*result);
}

// Unrolled, the rounds are one kernel (the key derivation, a few scalar
// ops, inside it); the loop kept, a kernel per body op group each trip.
TEST(GpuRngFusionTest, ThreefryIsOneKernel) {
  std::unique_ptr<HloModule> unrolled;
  auto program = Compile(/*unroll=*/true, &unrolled);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_FALSE(HasLoop(program->thunks)) << GpuProgramToString(*program);
  EXPECT_EQ(CountKernels(program->thunks), 1) << GpuProgramToString(*program);
  std::unique_ptr<HloModule> kept;
  auto looped = Compile(/*unroll=*/false, &kept);
  ASSERT_TRUE(looped.ok()) << looped.status();
  EXPECT_TRUE(HasLoop(looped->thunks)) << GpuProgramToString(*looped);
  EXPECT_GT(CountKernels(looped->thunks), 1) << GpuProgramToString(*looped);
}

// The unrolled, fused module computes on the interpreter what the loop
// did, bit for bit.
TEST(GpuRngFusionTest, FusedRoundsComputeWhatTheLoopDid) {
  std::unique_ptr<HloModule> prepared;
  auto program = Compile(/*unroll=*/true, &prepared);
  ASSERT_TRUE(program.ok()) << program.status();
  auto original = ParseAndReturnUnverifiedModule(kThreefryUniform);
  ASSERT_TRUE(original.ok()) << original.status();
  auto expected = RunOnInterpreter(std::move(original).value());
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto actual = RunOnInterpreter(std::move(prepared));
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_TRUE(*expected == *actual) << expected->ToString() << "\nvs\n" << actual->ToString();
  // Uniform in [0, 1), not all alike.
  const auto values = expected->data<float>();
  float low = values[0];
  float high = values[0];
  for (float value : values) {
    low = std::min(low, value);
    high = std::max(high, value);
  }
  EXPECT_GE(low, 0.0f);
  EXPECT_LT(high, 1.0f);
  EXPECT_GT(high - low, 0.5f);
}

// On a GPU: the one kernel computes what the interpreter does.
using GpuRngFusionDeviceTest = test::GpuExecutableTest;

TEST_F(GpuRngFusionDeviceTest, ThreefryMatchesTheInterpreter) {
  std::vector<Literal> arguments;
  arguments.push_back(Key());
  ExpectMatchesInterpreter(kThreefryUniform, ErrorSpec(0, 0), std::move(arguments));
}

}  // namespace
}  // namespace axle::gpu
