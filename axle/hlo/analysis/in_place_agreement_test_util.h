//===- in_place_agreement_test_util.h - A program's sharing vs. the dump's -===//
//
// For the in-place agreement tests of the cpu and CUDA backends
// (cpu/runtime/in_place_agreement_test.cc, gpu/in_place_agreement_test.cc):
// every two values a backend program keeps in temporaries share memory
// there exactly when they share a buffer in the HLO front of buffer
// assignment (buffer_assignment.h) on the module the program was built from.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_IN_PLACE_AGREEMENT_TEST_UTIL_H_
#define AXLE_HLO_ANALYSIS_IN_PLACE_AGREEMENT_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/analysis/value_slot.h"
#include "gtest/gtest.h"

namespace axle::testing {

// The number of pairs of the program's temporaries (`values`, its value
// slots) that share memory both in the program and in `assignment`; fails
// (naming the pair, with `program_text` and the assignment) where they
// disagree, and where `assignment` does not verify.
inline int64_t CountAgreedSharing(absl::Span<const ValueSlot> values,
                                  const BufferAssignment& assignment,
                                  const std::string& program_text) {
  absl::Status verified = VerifyBufferAssignment(assignment);
  EXPECT_TRUE(verified.ok()) << verified;
  std::map<std::pair<const HloInstruction*, ShapeIndex>, int64_t> buffer_of;
  for (const auto& [value, buffer] : assignment.ValuesWithBufferIds()) {
    buffer_of[{value.instruction, value.index}] = buffer;
  }
  struct Named {
    std::string name;
    int64_t temporary;
    int64_t buffer;
  };
  std::vector<Named> named;
  for (const ValueSlot& slot : values) {
    if (slot.kind != ValueSlot::Kind::kTemporary || slot.instruction == nullptr) continue;
    auto it = buffer_of.find({slot.instruction, slot.index});
    const std::string name =
        absl::StrCat("%", slot.instruction->name(), ShapeIndexToString(slot.index));
    EXPECT_NE(it, buffer_of.end()) << name << " has no buffer";
    if (it != buffer_of.end()) named.push_back({name, slot.temporary, it->second});
  }
  int64_t shared = 0;
  for (size_t i = 0; i < named.size(); ++i) {
    for (size_t j = i + 1; j < named.size(); ++j) {
      const bool in_program = named[i].temporary == named[j].temporary;
      const bool in_dump = named[i].buffer == named[j].buffer;
      EXPECT_EQ(in_program, in_dump) << named[i].name << " and " << named[j].name << "\n"
                                     << assignment.ToString() << "\n"
                                     << program_text;
      shared += in_program && in_dump;
    }
  }
  return shared;
}

}  // namespace axle::testing

#endif  // AXLE_HLO_ANALYSIS_IN_PLACE_AGREEMENT_TEST_UTIL_H_
