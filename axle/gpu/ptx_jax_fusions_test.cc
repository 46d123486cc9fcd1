//===- ptx_jax_fusions_test.cc - XLA's own fusions of real programs as PTX -===//
//
// Every loop and input fusion XLA:CPU formed in the JAX programs of
// ../shared/jax/ (*.opt.hlo: after XLA's optimizations) is compiled as a
// GPU loop fusion: its PTX must be accepted by ptxas for sm_90, or the
// compile must be an Unimplemented error naming what is missing, or the
// fusion is not one this emitter takes (outputs of different shapes:
// InvalidArgument). Nothing may fail inside LLVM. Skipped where the corpus
// or ptxas is missing.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

#ifndef AXLE_GPU_JAX_DIR
#define AXLE_GPU_JAX_DIR ""
#endif

namespace axle::gpu {
namespace {

std::vector<std::string> Programs() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(AXLE_GPU_JAX_DIR, error)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".opt.hlo";
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  // A placeholder keeps the suite instantiated (and skipped) without them.
  if (names.empty()) names.push_back("none");
  return names;
}

class PtxJaxFusionsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PtxJaxFusionsTest, EveryFusionIsValidPtxOrRefusedByName) {
  const std::string path = absl::StrCat(AXLE_GPU_JAX_DIR, "/", GetParam(), ".opt.hlo");
  std::ifstream file(path);
  if (!file) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  if (!PtxasPath().ok()) GTEST_SKIP() << "ptxas not available: " << PtxasPath().status();
  std::stringstream text;
  text << file.rdbuf();
  auto module = ParseAndReturnUnverifiedModule(text.str(), path);
  ASSERT_TRUE(module.ok()) << module.status();
  int accepted = 0;
  int unimplemented = 0;
  int not_loops = 0;
  for (const HloComputation* computation : (*module)->computations()) {
    for (const HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      const auto* fusion = dyn_cast<HloFusionInstruction>(instruction);
      if (fusion == nullptr || (fusion->fusion_kind() != FusionKind::kLoop &&
                                fusion->fusion_kind() != FusionKind::kInput)) {
        continue;
      }
      SCOPED_TRACE(fusion->name());
      const HloComputation& fused = *fusion->called_computations()[0];
      auto kernel = CompileLoopFusionToPtx(fused, "fusion");
      if (!kernel.ok()) {
        if (kernel.status().code() == absl::StatusCode::kInvalidArgument) {
          ++not_loops;
        } else {
          EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented) << kernel.status();
          ++unimplemented;
          std::cout << "  " << fusion->name() << ": " << kernel.status().message() << "\n";
        }
        continue;
      }
      auto cubin = AssemblePtx(kernel->ptx, "sm_90");
      EXPECT_TRUE(cubin.ok()) << cubin.status();
      accepted += cubin.ok() ? 1 : 0;
    }
  }
  std::cout << GetParam() << ": ptxas accepted " << accepted << ", unimplemented " << unimplemented
            << ", not loop fusions " << not_loops << "\n";
}

INSTANTIATE_TEST_SUITE_P(Programs, PtxJaxFusionsTest, ::testing::ValuesIn(Programs()));

}  // namespace
}  // namespace axle::gpu
