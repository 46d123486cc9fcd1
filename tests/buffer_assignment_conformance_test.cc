//===- buffer_assignment_conformance_test.cc - Buffers for XLA's exec/ corpus ===//
//
// Every exec/ module that parses and verifies gets a buffer assignment, as
// written and after dot-epilogue-fusion + fusion; VerifyBufferAssignment then
// walks the sequential order and checks that no two values live at the same
// time share bytes, that every slice lies in its allocation and that temp
// offsets are 64-byte aligned. Every array value of the entry must have a
// slice, and the temp arena must be no larger than the sum of the
// temporaries (reuse never costs space).
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "axle/cpu/runtime/epilogue_fusion.h"
#include "axle/hlo/analysis/buffer_assignment.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/transforms/instruction_fusion.h"
#include "gtest/gtest.h"
#include "tests/conformance_util.h"

namespace axle {
namespace {

// Checks one module; returns the bytes the temp arena saves over giving every
// temporary its own space.
int64_t CheckModule(const HloModule& module, const std::string& file) {
  auto assignment = AssignBuffers(module);
  if (!assignment.ok()) {
    ADD_FAILURE() << file << ": " << assignment.status();
    return 0;
  }
  absl::Status verified = VerifyBufferAssignment(**assignment);
  EXPECT_TRUE(verified.ok()) << file << ": " << verified << "\n" << (*assignment)->ToString();
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    if (instruction->shape().IsArray()) {
      EXPECT_TRUE((*assignment)->HasSlice(instruction)) << file << ": %" << instruction->name();
    }
  }
  int64_t unshared = 0;
  int64_t temp = (*assignment)->temp_allocation_index();
  if (temp < 0) return 0;
  // One slot per buffer: the values of a buffer share theirs.
  absl::flat_hash_set<std::pair<int64_t, int64_t>> buffers;
  for (const auto& [value, buffer] : (*assignment)->ValuesWithBufferIds()) {
    auto slice = (*assignment)->GetUniqueSlice(value.instruction, value.index);
    if (slice->allocation != temp || !buffers.insert({buffer, 0}).second) continue;
    unshared += (slice->size + 63) / 64 * 64;
  }
  int64_t total = (*assignment)->temp_allocation_total_size();
  EXPECT_LE(total, unshared) << file;
  return unshared - total;
}

TEST(BufferAssignmentConformance, EveryExecModuleGetsAConsistentAssignment) {
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  int checked = 0;
  int64_t saved = 0;
  for (const testing::CorpusEntry& entry : entries) {
    if (!absl::StartsWith(entry.file, "exec/") || entry.expects_error) continue;
    auto module = ParseAndReturnUnverifiedModule(testing::ReadWholeFile(entry.path), entry.file);
    if (!module.ok() || !VerifyHloModule(**module).ok()) continue;
    saved += CheckModule(**module, entry.file);
    cpu::DotEpilogueFusion epilogue;
    InstructionFusion fusion;
    ASSERT_TRUE(epilogue.Run(module->get()).ok());
    ASSERT_TRUE(fusion.Run(module->get()).ok());
    saved += CheckModule(**module, entry.file + " (fused)");
    ++checked;
  }
  std::printf("buffer assignment: %d exec modules checked, reuse saved %lld bytes of temps\n",
              checked, static_cast<long long>(saved));
  EXPECT_GT(checked, 150);
  EXPECT_GT(saved, 0);
}

}  // namespace
}  // namespace axle
