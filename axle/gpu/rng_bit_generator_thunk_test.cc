//===- rng_bit_generator_thunk_test.cc - rng-bit-generator on the GPU ------===//
//
// Everywhere: the PTX of each algorithm and width is accepted by ptxas;
// invalid states are errors naming the instruction. On a GPU (skipped, with
// a message, without one): the bits and the new state equal the
// interpreter's (XLA's definition) bit for bit, for threefry and philox,
// 8- to 64-bit elements, odd shapes (threefry's split dimension), and a
// counter that carries into philox's high word.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/rng_bit_generator_thunk.h"

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_thunk_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

ThunkFactory RngFactory(const PtxOptions& options = PtxOptions()) {
  return [options](const HloInstruction& instruction, GpuThunkValues values) {
    return MakeRngBitGeneratorThunk(instruction, std::move(values), options);
  };
}

std::string Rng(const std::string& algorithm, int64_t state_size, const std::string& bits) {
  return absl::StrReplaceAll(
      R"(
HloModule m
ENTRY e {
  state = u64[$N] parameter(0)
  ROOT r = (u64[$N], $BITS) rng-bit-generator(state), algorithm=$ALGORITHM
})",
      {{"$N", std::to_string(state_size)}, {"$BITS", bits}, {"$ALGORITHM", algorithm}});
}

TEST(RngBitGeneratorThunkPtxTest, Kernels) {
  for (const char* bits : {"u32[7,5]", "f32[1000]", "u64[3,3]", "s8[17]", "bf16[4,9]", "u32[]"}) {
    for (const auto& [algorithm, state] :
         std::vector<std::pair<std::string, int64_t>>{{"rng_three_fry", 2}, {"rng_philox", 3}}) {
      SCOPED_TRACE(absl::StrCat(algorithm, " ", bits));
      auto test = MakeFromText(Rng(algorithm, state, bits), RngFactory());
      ASSERT_TRUE(test.ok()) << test.status();
      EXPECT_EQ(test->ptx_thunk().kernel_names(),
                (std::vector<std::string>{"rng_bits", "rng_state"}));
      ExpectPtxasAccepts(test->ptx());
    }
  }
  auto bad = MakeFromText(Rng("rng_three_fry", 3, "u32[4]"), RngFactory());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("instruction r"));
}

class RngBitGeneratorThunkDeviceTest : public GpuThunkDeviceTest {
 protected:
  void Expect(const std::string& algorithm, const std::vector<uint64_t>& state,
              const std::string& bits) {
    SCOPED_TRACE(absl::StrCat(algorithm, " ", bits, " state[1]=", state[1]));
    Literal literal(ShapeUtil::MakeShape(U64, {static_cast<int64_t>(state.size())}));
    for (size_t i = 0; i < state.size(); ++i) literal.data<uint64_t>()[i] = state[i];
    std::vector<Literal> inputs;
    inputs.push_back(std::move(literal));
    ExpectMatchesInterpreter(Rng(algorithm, static_cast<int64_t>(state.size()), bits),
                             RngFactory(DeviceOptions()), inputs);
  }
};

TEST_F(RngBitGeneratorThunkDeviceTest, MatchesTheInterpreterBitForBit) {
  for (const char* bits :
       {"u32[7,5]", "u32[1001]", "u64[3,3]", "u8[17,3]", "u16[5,5,5]", "u32[]", "s64[1000]"}) {
    Expect("rng_three_fry", {0x0123456789abcdefULL, 42}, bits);
    Expect("rng_philox", {0x0123456789abcdefULL, 42}, bits);
    Expect("rng_philox", {7, 0xfffffffffffffff0ULL, 5}, bits);  // the counter carries
    Expect("rng_default", {7, 0xfffffffffffffff0ULL}, bits);
  }
}

}  // namespace
}  // namespace axle::gpu
