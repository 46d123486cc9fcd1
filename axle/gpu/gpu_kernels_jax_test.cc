//===- gpu_kernels_jax_test.cc - Axle's own kernels on real programs' ops --===//
//
// Every sort, scatter, select-and-scatter, dynamic-update-slice and
// rng-bit-generator in the JAX programs of ../shared/jax/ (*.opt.hlo, after
// XLA's optimizations; inside fusions too) gets its thunk, whose PTX ptxas
// accepts for sm_90, or an Unimplemented error naming what is missing.
// Skipped where the corpus or ptxas is missing.
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
#include "axle/gpu/dynamic_update_slice_thunk.h"
#include "axle/gpu/ptx_thunk.h"
#include "axle/gpu/ptxas.h"
#include "axle/gpu/rng_bit_generator_thunk.h"
#include "axle/gpu/scatter_thunk.h"
#include "axle/gpu/sort_thunk.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

#ifndef AXLE_GPU_JAX_DIR
#define AXLE_GPU_JAX_DIR ""
#endif

namespace axle::gpu {
namespace {

int64_t Leaves(const Shape& shape) {
  int64_t leaves = 0;
  ShapeUtil::ForEachSubshape(shape, [&](const Shape& subshape, const ShapeIndex&) {
    if (subshape.IsArray()) ++leaves;
  });
  return leaves;
}

absl::StatusOr<std::unique_ptr<GpuThunk>> Make(const HloInstruction& instruction) {
  GpuThunkValues values;
  int64_t id = 0;
  for (const HloInstruction* operand : instruction.operands()) {
    for (int64_t i = 0; i < Leaves(operand->shape()); ++i) values.operands.push_back(id++);
  }
  for (int64_t i = 0; i < Leaves(instruction.shape()); ++i) values.outputs.push_back(id++);
  switch (instruction.opcode()) {
    case HloOpcode::kSort:
      return MakeSortThunk(instruction, std::move(values));
    case HloOpcode::kScatter:
      return MakeScatterThunk(instruction, std::move(values));
    case HloOpcode::kSelectAndScatter:
      return MakeSelectAndScatterThunk(instruction, std::move(values));
    case HloOpcode::kDynamicUpdateSlice:
      return MakeDynamicUpdateSliceThunk(instruction, std::move(values));
    case HloOpcode::kRngBitGenerator:
      return MakeRngBitGeneratorThunk(instruction, std::move(values));
    default:
      return absl::NotFoundError("not one of Axle's own kernels");
  }
}

TEST(GpuKernelsJaxTest, EveryInstructionIsValidPtxOrRefusedByName) {
  std::error_code error;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(AXLE_GPU_JAX_DIR, error)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > 8 && file.substr(file.size() - 8) == ".opt.hlo")
      paths.push_back(entry.path());
  }
  if (paths.empty()) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  if (!PtxasPath().ok()) GTEST_SKIP() << "ptxas not available: " << PtxasPath().status();
  std::sort(paths.begin(), paths.end());
  int accepted = 0;
  int unimplemented = 0;
  for (const std::filesystem::path& path : paths) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    auto module = ParseAndReturnUnverifiedModule(text.str(), path.string());
    ASSERT_TRUE(module.ok()) << module.status();
    for (const HloComputation* computation : (*module)->computations()) {
      for (const HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        absl::StatusOr<std::unique_ptr<GpuThunk>> thunk = Make(*instruction);
        if (thunk.status().code() == absl::StatusCode::kNotFound) continue;
        SCOPED_TRACE(absl::StrCat(path.filename().string(), ": ", instruction->name()));
        if (!thunk.ok()) {
          EXPECT_EQ(thunk.status().code(), absl::StatusCode::kUnimplemented) << thunk.status();
          EXPECT_NE(thunk.status().message().find(instruction->name()), std::string::npos)
              << thunk.status();
          ++unimplemented;
          continue;
        }
        const auto& ptx = static_cast<const PtxThunk&>(**thunk).ptx();
        absl::StatusOr<std::string> cubin = AssemblePtx(ptx, "sm_90");
        EXPECT_TRUE(cubin.ok()) << cubin.status();
        ++accepted;
      }
    }
  }
  std::cout << "Axle's own kernels over " << paths.size() << " JAX programs: " << accepted
            << " accepted by ptxas, " << unimplemented << " unimplemented\n";
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace axle::gpu
