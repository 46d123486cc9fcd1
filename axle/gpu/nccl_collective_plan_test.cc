//===- nccl_collective_plan_test.cc - NCCL thunk plans, NCCL's loader -------===//
//
// Host-only (no GPU): what each collective of a multi-device module becomes
// (NCCL call, element type, counts, groups, the clique a device uses), the
// errors for what NCCL cannot do, the program a multi-device module
// compiles to, and the library loader's errors.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/nccl_collective_plan.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_program.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#if AXLE_HAVE_NCCL_H
#include "axle/gpu/nccl_library.h"
#endif

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

// The plan of the entry's root in `text`.
absl::StatusOr<NcclCollectivePlan> PlanOfRoot(const std::string& text,
                                              std::unique_ptr<HloModule>* keep) {
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  *keep = *std::move(module);
  return MakeNcclCollectivePlan(*(*keep)->entry_computation()->root_instruction());
}

std::string Reducer(const std::string& type, const std::string& op) {
  return absl::StrCat("r {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT c = ", type, "[] ", op, "(a, b)\n}\n");
}

TEST(NcclCollectivePlanTest, AllReduceGroupsReductionAndCliques) {
  std::unique_ptr<HloModule> module;
  auto plan = PlanOfRoot(absl::StrCat("HloModule m, replica_count=4\n", Reducer("f32", "add"),
                                      R"(ENTRY e {
  x = f32[8] parameter(0)
  ROOT s = f32[8] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=r
})"),
                         &module);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->kind, NcclCollectiveKind::kAllReduce);
  EXPECT_EQ(plan->reduction, NcclReduction::kSum);
  ASSERT_EQ(plan->buffers.size(), 1u);
  EXPECT_EQ(plan->buffers[0].element, NcclElement::kFloat32);
  EXPECT_EQ(plan->buffers[0].operand_count, 8);
  EXPECT_EQ(NcclCollectivePlanToString(*plan), "all-reduce sum float32[8->8] groups {{0,2},{1,3}}");
  auto clique = NcclCliqueOf(*plan, 3);
  ASSERT_TRUE(clique.ok()) << clique.status();
  EXPECT_EQ(clique->ToString(), "{1,3} rank 1");
  EXPECT_FALSE(NcclCliqueOf(*plan, 7).ok());
}

TEST(NcclCollectivePlanTest, ReductionsNcclHasAndTheOnesItLacks) {
  struct Case {
    const char* type;
    const char* op;
    const char* plan;  // empty: Unimplemented
  };
  const Case cases[] = {
      {"s32", "maximum", "all-reduce max int32[4->4]"},
      {"u8", "minimum", "all-reduce min uint8[4->4]"},
      {"bf16", "multiply", "all-reduce prod bfloat16[4->4]"},
      {"pred", "and", "all-reduce min uint8[4->4]"},
      {"pred", "or", "all-reduce max uint8[4->4]"},
      {"c64", "add", "all-reduce sum float32[8->8]"},
      {"s32", "and", ""},
      {"u32", "xor", ""},
      {"s16", "add", ""},
      {"c64", "multiply", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.type, " ", c.op));
    std::unique_ptr<HloModule> module;
    auto plan = PlanOfRoot(
        absl::StrCat("HloModule m, replica_count=2\n", Reducer(c.type, c.op),
                     "ENTRY e {\n  x = ", c.type, "[4] parameter(0)\n  ROOT s = ", c.type,
                     "[4] all-reduce(x), replica_groups={}, to_apply=r\n}\n"),
        &module);
    if (std::string(c.plan).empty()) {
      ASSERT_FALSE(plan.ok());
      EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
      EXPECT_THAT(plan.status().message(), HasSubstr("NCCL has no"));
      EXPECT_THAT(plan.status().message(), HasSubstr(c.type));
      continue;
    }
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(NcclCollectivePlanToString(*plan), absl::StrCat(c.plan, " groups {{0,1}}"));
  }
}

TEST(NcclCollectivePlanTest, DataMovementIsBytes) {
  std::unique_ptr<HloModule> module;
  auto gather = PlanOfRoot(R"(HloModule m, replica_count=2
ENTRY e {
  x = s16[1,3] parameter(0)
  ROOT g = s16[2,3] all-gather(x), replica_groups={{0,1}}, dimensions={0}
})",
                           &module);
  ASSERT_TRUE(gather.ok()) << gather.status();
  EXPECT_EQ(NcclCollectivePlanToString(*gather), "all-gather uint8[6->12] groups {{0,1}}");
  // Along dimension 1 of [1,3]: the major dimension has size 1, contiguous.
  auto minor = PlanOfRoot(R"(HloModule m, replica_count=2
ENTRY e {
  x = f32[1,3] parameter(0)
  ROOT g = f32[1,6] all-gather(x), replica_groups={{0,1}}, dimensions={1}
})",
                          &module);
  ASSERT_TRUE(minor.ok()) << minor.status();
  // Along dimension 1 of [2,3]: not contiguous, not yet.
  auto strided = PlanOfRoot(R"(HloModule m, replica_count=2
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT g = f32[2,6] all-gather(x), replica_groups={{0,1}}, dimensions={1}
})",
                            &module);
  ASSERT_FALSE(strided.ok());
  EXPECT_EQ(strided.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(strided.status().message(), HasSubstr("contiguous"));
}

TEST(NcclCollectivePlanTest, ReduceScatterAllToAllBroadcast) {
  std::unique_ptr<HloModule> module;
  auto scatter = PlanOfRoot(absl::StrCat("HloModule m, replica_count=2\n", Reducer("f32", "add"),
                                         R"(ENTRY e {
  x = f32[4,2] parameter(0)
  ROOT s = f32[2,2] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=r
})"),
                            &module);
  ASSERT_TRUE(scatter.ok()) << scatter.status();
  EXPECT_EQ(NcclCollectivePlanToString(*scatter),
            "reduce-scatter sum float32[8->4] groups {{0,1}}");
  auto all_to_all = PlanOfRoot(R"(HloModule m, replica_count=2
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT a = (f32[4], f32[4]) all-to-all(x, y), replica_groups={{1,0}}
})",
                               &module);
  ASSERT_TRUE(all_to_all.ok()) << all_to_all.status();
  EXPECT_EQ(NcclCollectivePlanToString(*all_to_all),
            "all-to-all uint8[16->16] uint8[16->16] groups {{1,0}} tuple");
  auto clique = NcclCliqueOf(*all_to_all, 0);
  ASSERT_TRUE(clique.ok()) << clique.status();
  EXPECT_EQ(clique->ToString(), "{1,0} rank 1");
  auto broadcast = PlanOfRoot(R"(HloModule m, replica_count=2
ENTRY e {
  x = u32[3] parameter(0)
  ROOT b = u32[3] collective-broadcast(x), replica_groups={{0,1}}
})",
                              &module);
  ASSERT_TRUE(broadcast.ok()) << broadcast.status();
  EXPECT_EQ(NcclCollectivePlanToString(*broadcast),
            "collective-broadcast uint8[12->12] groups {{0,1}}");
}

TEST(NcclCollectivePlanTest, PermutePeersUseTheWholeGrid) {
  std::unique_ptr<HloModule> module;
  auto plan = PlanOfRoot(R"(HloModule m, replica_count=3
ENTRY e {
  x = f32[2] parameter(0)
  ROOT p = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2}}
})",
                         &module);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(NcclCollectivePlanToString(*plan),
            "collective-permute uint8[8->8] pairs {{0,1},{1,2}}");
  auto clique = NcclCliqueOf(*plan, 2);
  ASSERT_TRUE(clique.ok()) << clique.status();
  EXPECT_EQ(clique->ToString(), "{0,1,2} rank 2");
  NcclPermutePeers first = NcclPermutePeersOf(*plan, 0);
  EXPECT_EQ(first.source, -1);
  EXPECT_EQ(first.target, 1);
  NcclPermutePeers last = NcclPermutePeersOf(*plan, 2);
  EXPECT_EQ(last.source, 1);
  EXPECT_EQ(last.target, -1);
}

// A module of two devices compiles (no device needed) to NCCL thunks and
// device-id thunks; its -start/-done pair becomes the synchronous op.
TEST(NcclCollectivePlanTest, MultiDeviceModuleCompilesToNcclThunks) {
  auto module = ParseAndReturnUnverifiedModule(
      absl::StrCat("HloModule m, replica_count=2\n", Reducer("f32", "add"), R"(ENTRY e {
  x = f32[8] parameter(0)
  id = u32[] replica-id()
  c = f32[] convert(id)
  b = f32[8] broadcast(c), dimensions={}
  y = f32[8] add(x, b)
  s = f32[8] all-reduce-start(y), replica_groups={}, to_apply=r
  d = f32[8] all-reduce-done(s)
  ROOT p = f32[8] collective-permute(d), source_target_pairs={{0,1},{1,0}}
})"));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get());
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = GpuProgramToString(*program);
  EXPECT_THAT(text, HasSubstr("device-id %id"));
  EXPECT_THAT(text, HasSubstr("nccl all-reduce sum float32[8->8] groups {{0,1}}"));
  EXPECT_THAT(text, HasSubstr("nccl collective-permute uint8[32->32] pairs {{0,1},{1,0}}"));
}

// NCCL has no 16-bit integers: the compiler widens those all-reduces and
// reduce-scatters to 32 bits (XLA:GPU's AllReducePromotion), so a module
// whose plan alone is Unimplemented compiles.
TEST(NcclCollectivePlanTest, SixteenBitIntegerReductionsCompileIn32Bits) {
  auto module = ParseAndReturnUnverifiedModule(
      absl::StrCat("HloModule m, replica_count=2\n", Reducer("s16", "add"),
                   "u {\n  a = u16[] parameter(0)\n  b = u16[] parameter(1)\n"
                   "  ROOT c = u16[] maximum(a, b)\n}\n",
                   R"(ENTRY e {
  x = s16[4] parameter(0)
  y = u16[4,2] parameter(1)
  s = s16[4] all-reduce(x), replica_groups={}, to_apply=r
  m = u16[2,2] reduce-scatter(y), replica_groups={{0,1}}, dimensions={0}, to_apply=u
  ROOT t = (s16[4], u16[2,2]) tuple(s, m)
})"));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get());
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = GpuProgramToString(*program);
  EXPECT_THAT(text, HasSubstr("nccl all-reduce sum int32[4->4] groups {{0,1}}"));
  EXPECT_THAT(text, HasSubstr("nccl reduce-scatter max uint32[8->4] groups {{0,1}}"));
}

// With collectives_on_one_device a one-device module keeps them (one rank);
// without, they become copies.
TEST(NcclCollectivePlanTest, OneDeviceModuleKeepsCollectivesOnlyWhenAsked) {
  const std::string text = absl::StrCat("HloModule m\n", Reducer("f32", "add"), R"(ENTRY e {
  x = f32[8] parameter(0)
  ROOT s = f32[8] all-reduce(x), replica_groups={{0}}, to_apply=r
})");
  GpuPrepareOptions keep;
  keep.collectives_on_one_device = true;
  auto kept = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(kept.ok()) << kept.status();
  absl::StatusOr<GpuProgram> with = CompileGpuProgram(kept->get(), PtxOptions(), keep);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_THAT(GpuProgramToString(*with),
              HasSubstr("nccl all-reduce sum float32[8->8] groups {{0}}"));
  auto lowered = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<GpuProgram> without =
      CompileGpuProgram(lowered->get(), PtxOptions(), GpuPrepareOptions());
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_THAT(GpuProgramToString(*without), ::testing::Not(HasSubstr("nccl")));
}

TEST(NcclCollectivePlanTest, NonCollectiveIsUnimplemented) {
  std::unique_ptr<HloModule> module;
  auto copy = PlanOfRoot(R"(HloModule m, replica_count=2
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] copy(x)
})",
                         &module);
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(copy.status().message(), HasSubstr("copy"));
}

#if AXLE_HAVE_NCCL_H
TEST(NcclLibraryTest, MissingLibraryNamesNcclAndTheVariable) {
  absl::StatusOr<const NcclLibrary*> library = NcclLibrary::Open("/nonexistent/libnccl.so.2");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(library.status().message(), HasSubstr("NCCL unavailable"));
  EXPECT_THAT(library.status().message(), HasSubstr("/nonexistent/libnccl.so.2"));
  EXPECT_THAT(library.status().message(), HasSubstr("AXLE_NCCL"));
}

TEST(NcclLibraryTest, LibraryWithoutNcclSymbolsIsUnavailable) {
  // libm loads but has no NCCL function.
  absl::StatusOr<const NcclLibrary*> library = NcclLibrary::Open("libm.so.6");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(library.status().message(), HasSubstr("lacks ncclGetVersion"));
}

// The toolkit's NCCL (where this machine has it) resolves every function
// and names its errors; no GPU is needed for either.
TEST(NcclLibraryTest, ToolkitLibraryResolvesAndNamesErrors) {
  absl::StatusOr<const NcclLibrary*> library = NcclLibrary::Get();
  if (!library.ok()) GTEST_SKIP() << "no NCCL here: " << library.status().message();
  EXPECT_GE((*library)->version(), 21400);
  absl::Status status = (*library)->ToStatus(ncclInvalidArgument, "ncclAllReduce");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("NCCL ncclAllReduce: "));
  EXPECT_TRUE((*library)->ToStatus(ncclSuccess, "x").ok());
  EXPECT_EQ((*library)->ToStatus(ncclRemoteError, "ncclRecv").code(),
            absl::StatusCode::kUnavailable);
}
#endif

}  // namespace
}  // namespace axle::gpu
