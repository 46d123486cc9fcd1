//===- dynamic_update_slice_thunk_test.cc - dynamic-update-slice on the GPU ===//
//
// Everywhere: the kernel's PTX clamps its starts and ptxas accepts it;
// malformed instructions are errors naming them. On a GPU (skipped, with a
// message, without one): in place and into a separate result, with starts
// clamped from below and above, matching the interpreter exactly.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/dynamic_update_slice_thunk.h"

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_thunk_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

ThunkFactory UpdateSliceFactory(const PtxOptions& options = PtxOptions()) {
  return [options](const HloInstruction& instruction, GpuThunkValues values) {
    return MakeDynamicUpdateSliceThunk(instruction, std::move(values), options);
  };
}

std::string UpdateSlice(const std::string& type, const std::string& operand,
                        const std::string& update, const std::string& index_type) {
  return absl::StrReplaceAll(
      R"(
HloModule m
ENTRY e {
  operand = $T[$OPERAND] parameter(0)
  update = $T[$UPDATE] parameter(1)
  i = $I[] parameter(2)
  j = $I[] parameter(3)
  ROOT r = $T[$OPERAND] dynamic-update-slice(operand, update, i, j)
})",
      {{"$T", type}, {"$OPERAND", operand}, {"$UPDATE", update}, {"$I", index_type}});
}

TEST(DynamicUpdateSliceThunkPtxTest, Kernel) {
  for (const char* type : {"f32", "bf16", "pred", "c128", "s8"}) {
    SCOPED_TRACE(type);
    auto test = MakeFromText(UpdateSlice(type, "100,33", "7,5", "s32"), UpdateSliceFactory());
    ASSERT_TRUE(test.ok()) << test.status();
    EXPECT_EQ(test->ptx_thunk().kernel_names(), std::vector<std::string>{"update_slice"});
    EXPECT_THAT(test->ptx(), HasSubstr("93"));  // 100 - 7, the highest start
    ExpectPtxasAccepts(test->ptx());
  }
  auto bad = MakeFromText(UpdateSlice("f32", "10,3", "7,5", "s32"), UpdateSliceFactory());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("dynamic-update-slice r"));
}

class DynamicUpdateSliceThunkDeviceTest : public GpuThunkDeviceTest {
 protected:
  void Expect(const std::string& text, int64_t i, int64_t j, bool in_place) {
    SCOPED_TRACE(absl::StrCat("starts ", i, ", ", j, in_place ? ", in place" : ""));
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    const HloComputation& entry = *(*module)->entry_computation();
    std::vector<Literal> inputs;
    for (int64_t p = 0; p < 2; ++p) {
      inputs.push_back(RandomLiteral(entry.parameter_instruction(p)->shape(),
                                     31 + static_cast<uint32_t>(p), -100, 100));
    }
    for (int64_t start : {i, j}) {
      Literal literal(entry.parameter_instruction(2)->shape());
      literal.SetIntegral(0, start);
      inputs.push_back(std::move(literal));
    }
    ExpectMatchesInterpreter(text, UpdateSliceFactory(DeviceOptions()), inputs, nullptr, in_place);
  }
};

TEST_F(DynamicUpdateSliceThunkDeviceTest, InPlaceAndCopied) {
  for (bool in_place : {true, false}) {
    Expect(UpdateSlice("f32", "100,33", "7,5", "s32"), 3, 4, in_place);
    Expect(UpdateSlice("f32", "100,33", "7,5", "s32"), -5, 40, in_place);  // clamped
    Expect(UpdateSlice("bf16", "64,16", "64,1", "s64"), 9, 15, in_place);
    Expect(UpdateSlice("s8", "9,9", "2,3", "u32"), 4000000000, 1, in_place);  // clamped
    Expect(UpdateSlice("c64", "8,8", "8,8", "s32"), 1, -1, in_place);
  }
}

}  // namespace
}  // namespace axle::gpu
