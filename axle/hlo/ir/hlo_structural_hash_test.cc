//===- hlo_structural_hash_test.cc - Structural identity of HLO ------------===//
//
// Every member of every attribute struct takes part in identity and hash:
// two instructions that differ in one member compare unequal and hash
// differently. Names, ids and metadata do not count; shapes with layouts (no
// layout is the default one),
// the generic attributes, operands by position and called computations do.
// Fingerprints are deterministic (fixed values would be brittle; equal
// parses give equal fingerprints).
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/ir/hlo_structural_hash.h"

#include <functional>
#include <memory>
#include <string>

#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

Fingerprint128 HashOf(const HloInstruction& instruction) {
  StructuralHasher hasher;
  HashIgnoringOperands(hasher, instruction);
  return hasher.Finish();
}

// Two default instructions of class T are identical; after `mutate` changes
// one member of the second's attributes they are not, and hash differently.
template <typename T>
void ExpectMemberCounts(HloOpcode opcode,
                        const std::function<void(typename T::Attributes&)>& mutate,
                        const std::string& what) {
  SCOPED_TRACE(what);
  const Shape shape(F32, {4});
  T a(opcode, shape, {});
  T b(opcode, shape, {});
  ASSERT_TRUE(IdenticalIgnoringOperands(a, b));
  ASSERT_EQ(HashOf(a), HashOf(b));
  mutate(*b.mutable_attrs());
  EXPECT_FALSE(IdenticalIgnoringOperands(a, b));
  EXPECT_FALSE(IdenticalIgnoringOperands(b, a));
  EXPECT_NE(HashOf(a), HashOf(b));
}

#define EXPECT_MEMBER_COUNTS(Class, opcode, ...) \
  ExpectMemberCounts<Class>(                     \
      HloOpcode::opcode, [](Class::Attributes& a) { __VA_ARGS__; }, #__VA_ARGS__)

TEST(HloStructuralHashTest, EveryAttributeMemberCounts) {
  EXPECT_MEMBER_COUNTS(HloParameterInstruction, kParameter, a.parameter_number = 1);
  EXPECT_MEMBER_COUNTS(HloParameterInstruction, kParameter,
                       a.parameter_replication = std::vector<bool>{true});
  EXPECT_MEMBER_COUNTS(HloConstantInstruction, kConstant,
                       a.literal = LiteralUtil::CreateR0<float>(1));
  EXPECT_MEMBER_COUNTS(HloConstantInstruction, kConstant, a.elided = true);
  EXPECT_MEMBER_COUNTS(HloGetTupleElementInstruction, kGetTupleElement, a.tuple_index = 1);
  EXPECT_MEMBER_COUNTS(HloIotaInstruction, kIota, a.iota_dimension = 1);
  EXPECT_MEMBER_COUNTS(HloDimensionsInstruction, kBroadcast, a.dimensions = {0});
  EXPECT_MEMBER_COUNTS(HloSortInstruction, kSort, a.sort_dimension = 1);
  EXPECT_MEMBER_COUNTS(HloSortInstruction, kSort, a.is_stable = true);
  EXPECT_MEMBER_COUNTS(HloReshapeInstruction, kReshape, a.inferred_dimension = 0);
  EXPECT_MEMBER_COUNTS(HloSliceInstruction, kSlice, a.starts = {1});
  EXPECT_MEMBER_COUNTS(HloSliceInstruction, kSlice, a.limits = {1});
  EXPECT_MEMBER_COUNTS(HloSliceInstruction, kSlice, a.strides = {1});
  EXPECT_MEMBER_COUNTS(HloDynamicSliceInstruction, kDynamicSlice, a.dynamic_slice_sizes = {2});
  EXPECT_MEMBER_COUNTS(HloPadInstruction, kPad,
                       a.padding_config.add_dimensions()->set_interior_padding(1));
  EXPECT_MEMBER_COUNTS(HloCompareInstruction, kCompare, a.direction = ComparisonDirection::kLt);
  EXPECT_MEMBER_COUNTS(HloCompareInstruction, kCompare, a.type = ComparisonType::kFloatTotalOrder);
  EXPECT_MEMBER_COUNTS(HloDotInstruction, kDot,
                       a.dot_dimension_numbers.add_lhs_contracting_dimensions(1));
  EXPECT_MEMBER_COUNTS(HloDotInstruction, kDot,
                       a.dot_dimension_numbers.add_rhs_batch_dimensions(0));
  EXPECT_MEMBER_COUNTS(HloDotInstruction, kRaggedDot, a.lhs_ragged_dimensions = {1});
  EXPECT_MEMBER_COUNTS(HloDotInstruction, kRaggedDot, a.rhs_group_dimensions = {0});
  EXPECT_MEMBER_COUNTS(HloDotInstruction, kDot,
                       a.precision_config.add_operand_precision(PrecisionConfig::HIGHEST));
  EXPECT_MEMBER_COUNTS(HloDotInstruction, kDot,
                       a.precision_config.set_algorithm(PrecisionConfig::ALG_DOT_BF16_BF16_F32));
  EXPECT_MEMBER_COUNTS(HloConvolutionInstruction, kConvolution,
                       a.window.add_dimensions()->set_size(3));
  EXPECT_MEMBER_COUNTS(HloConvolutionInstruction, kConvolution,
                       a.convolution_dimension_numbers.set_input_feature_dimension(1));
  EXPECT_MEMBER_COUNTS(HloConvolutionInstruction, kConvolution, a.feature_group_count = 2);
  EXPECT_MEMBER_COUNTS(HloConvolutionInstruction, kConvolution, a.batch_group_count = 2);
  EXPECT_MEMBER_COUNTS(HloConvolutionInstruction, kConvolution,
                       a.precision_config.add_operand_precision(PrecisionConfig::HIGH));
  EXPECT_MEMBER_COUNTS(HloWindowInstruction, kReduceWindow,
                       a.window.add_dimensions()->set_window_reversal(true));
  EXPECT_MEMBER_COUNTS(HloGatherInstruction, kGather,
                       a.gather_dimension_numbers.add_offset_dims(1));
  EXPECT_MEMBER_COUNTS(HloGatherInstruction, kGather, a.slice_sizes = {1});
  EXPECT_MEMBER_COUNTS(HloGatherInstruction, kGather, a.indices_are_sorted = true);
  EXPECT_MEMBER_COUNTS(HloScatterInstruction, kScatter,
                       a.scatter_dimension_numbers.set_index_vector_dim(1));
  EXPECT_MEMBER_COUNTS(HloScatterInstruction, kScatter, a.indices_are_sorted = true);
  EXPECT_MEMBER_COUNTS(HloScatterInstruction, kScatter, a.unique_indices = true);
  EXPECT_MEMBER_COUNTS(HloFftInstruction, kFft, a.fft_type = IFFT);
  EXPECT_MEMBER_COUNTS(HloFftInstruction, kFft, a.fft_length = {4});
  EXPECT_MEMBER_COUNTS(HloRngInstruction, kRng, a.distribution = RNG_NORMAL);
  EXPECT_MEMBER_COUNTS(HloRngBitGeneratorInstruction, kRngBitGenerator, a.algorithm = RNG_PHILOX);
  EXPECT_MEMBER_COUNTS(HloTriangularSolveInstruction, kTriangularSolve,
                       a.options.set_left_side(true));
  EXPECT_MEMBER_COUNTS(HloTriangularSolveInstruction, kTriangularSolve,
                       a.options.set_transpose_a(TriangularSolveOptions::ADJOINT));
  EXPECT_MEMBER_COUNTS(HloCholeskyInstruction, kCholesky, a.options.set_lower(true));
  EXPECT_MEMBER_COUNTS(HloReducePrecisionInstruction, kReducePrecision, a.exponent_bits = 5);
  EXPECT_MEMBER_COUNTS(HloReducePrecisionInstruction, kReducePrecision, a.mantissa_bits = 10);
  EXPECT_MEMBER_COUNTS(HloBatchNormInstruction, kBatchNormInference, a.epsilon = 0.001f);
  EXPECT_MEMBER_COUNTS(HloBatchNormInstruction, kBatchNormInference, a.feature_index = 1);
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall, a.custom_call_target = "f");
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall, a.opaque = "o");
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall,
                       a.api_version = API_VERSION_TYPED_FFI);
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall, a.custom_call_has_side_effect = true);
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall,
                       a.output_to_operand_aliasing = {OutputOperandAlias{{0}, 0, {}}});
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall,
                       a.operand_layout_constraints = std::vector<Shape>{Shape(F32, {1})});
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall, a.schedule = SCHEDULE_LATEST);
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall,
                       a.literal = LiteralUtil::CreateR0<int32_t>(3));
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall, a.window = Window());
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall,
                       a.convolution_dimension_numbers = ConvolutionDimensionNumbers());
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall, a.feature_group_count = 2);
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall, a.batch_group_count = 2);
  EXPECT_MEMBER_COUNTS(HloCustomCallInstruction, kCustomCall,
                       a.precision_config.add_operand_precision(PrecisionConfig::HIGH));
  EXPECT_MEMBER_COUNTS(HloFusionInstruction, kFusion, a.kind = FusionKind::kInput);
  EXPECT_MEMBER_COUNTS(HloCollectiveInstruction, kAllReduce, a.replica_groups.emplace_back());
  EXPECT_MEMBER_COUNTS(HloCollectiveInstruction, kAllReduce,
                       a.iota_replica_groups = IotaReplicaGroupList{1, 2, {2}, {}});
  EXPECT_MEMBER_COUNTS(HloCollectiveInstruction, kAllReduce, a.channel_id = 1);
  EXPECT_MEMBER_COUNTS(HloCollectiveInstruction, kAllReduce, a.use_global_device_ids = true);
  EXPECT_MEMBER_COUNTS(HloCollectiveInstruction, kAllReduce, a.constrain_layout = true);
  EXPECT_MEMBER_COUNTS(HloCollectiveInstruction, kAllGather, a.dimensions = {0});
  EXPECT_MEMBER_COUNTS(HloCollectiveInstruction, kCollectivePermute,
                       a.source_target_pairs = {{0, 1}});
  EXPECT_MEMBER_COUNTS(HloSendRecvInstruction, kSend, a.channel_id = 2);
  EXPECT_MEMBER_COUNTS(HloSendRecvInstruction, kSend, a.is_host_transfer = true);
  EXPECT_MEMBER_COUNTS(HloFeedInstruction, kInfeed, a.config = "c");
  EXPECT_MEMBER_COUNTS(HloFeedInstruction, kOutfeed, a.outfeed_shape = Shape(F32, {2}));
  EXPECT_MEMBER_COUNTS(HloTopKInstruction, kTopK, a.k = 3);
  EXPECT_MEMBER_COUNTS(HloTopKInstruction, kTopK, a.largest = false);
  EXPECT_MEMBER_COUNTS(HloScanInstruction, kScan, a.dimensions = {0});
  EXPECT_MEMBER_COUNTS(HloScanInstruction, kScan, a.num_carries = 1);
  EXPECT_MEMBER_COUNTS(HloScanInstruction, kScan, a.is_reverse = true);
  EXPECT_MEMBER_COUNTS(HloScanInstruction, kScan, a.is_associative = true);
  EXPECT_MEMBER_COUNTS(HloAsyncInstruction, kAsyncStart, a.async_execution_thread = "other");
  EXPECT_MEMBER_COUNTS(HloCopyStartInstruction, kCopyStart, a.cross_program_prefetch_index = 0);
}

TEST(HloStructuralHashTest, GenericAttributesCountNamesAndMetadataDoNot) {
  const Shape shape(F32, {4, 2});
  auto a = HloInstruction::Create(HloOpcode::kNegate, shape, {});
  auto b = HloInstruction::Create(HloOpcode::kNegate, shape, {});
  b->SetName("other_name");
  b->mutable_metadata()->set_op_name("jit(f)/neg");
  EXPECT_TRUE(IdenticalIgnoringOperands(*a, *b));
  EXPECT_EQ(HashOf(*a), HashOf(*b));

  std::vector<std::function<void(HloInstruction&)>> changes = {
      [](HloInstruction& i) { i.set_sharding(HloSharding("{replicated}")); },
      [](HloInstruction& i) { (*i.mutable_frontend_attributes())["k"] = "v"; },
      [](HloInstruction& i) { i.set_raw_backend_config_string("{}"); },
      [](HloInstruction& i) {
        i.mutable_raw_attributes()->push_back({"n", "v"});
      },
      [](HloInstruction& i) {
        i.mutable_shape()->set_layout(Layout({0, 1}));
      },
  };
  for (size_t k = 0; k < changes.size(); ++k) {
    SCOPED_TRACE(k);
    auto c = HloInstruction::Create(HloOpcode::kNegate, shape, {});
    changes[k](*c);
    EXPECT_FALSE(IdenticalIgnoringOperands(*a, *c));
    EXPECT_NE(HashOf(*a), HashOf(*c));
  }
  // No layout is the default layout.
  auto with_default = HloInstruction::Create(HloOpcode::kNegate, shape, {});
  with_default->mutable_shape()->set_layout(Layout({1, 0}));
  EXPECT_TRUE(IdenticalIgnoringOperands(*a, *with_default));
  EXPECT_EQ(HashOf(*a), HashOf(*with_default));
  auto abs = HloInstruction::Create(HloOpcode::kAbs, shape, {});
  EXPECT_FALSE(IdenticalIgnoringOperands(*a, *abs));
  EXPECT_NE(HashOf(*a), HashOf(*abs));
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

constexpr char kModule[] = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,8] parameter(0)
  y = f32[16,8] parameter(1)
  m = f32[16,8] multiply(x, y), metadata={op_name="jit(f)/mul"}
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(m, z), dimensions={1}, to_apply=sum
})";

constexpr char kRenamed[] = R"(
HloModule renamed
add_f32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}
ENTRY main {
  zero = f32[] constant(0)
  p1 = f32[16,8] parameter(1)
  p0 = f32[16,8] parameter(0)
  product = f32[16,8] multiply(p0, p1), metadata={op_name="other"}
  ROOT rows = f32[16] reduce(product, zero), dimensions={1}, to_apply=add_f32
})";

// Other names, metadata and instruction order (a fingerprint does not depend
// on the order instructions were added in).
TEST(HloStructuralHashTest, RenamedModulesAreIdentical) {
  auto a = Parse(kModule);
  auto b = Parse(kRenamed);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(ComputationsIdentical(*a->entry_computation(), *b->entry_computation()));
  EXPECT_EQ(FingerprintComputation(*a->entry_computation()),
            FingerprintComputation(*b->entry_computation()));
  EXPECT_EQ(FingerprintModule(*a), FingerprintModule(*b));
  EXPECT_EQ(FingerprintModule(*a), FingerprintModule(*Parse(kModule)));
  EXPECT_EQ(FingerprintModule(*a).ToHex().size(), 32u);
}

TEST(HloStructuralHashTest, StructureCalleesAndConfigCount) {
  auto base = Parse(kModule);
  ASSERT_TRUE(base);
  auto variant = [](const std::string& from, const std::string& to) {
    std::string text = kModule;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::vector<std::string> variants = {
      variant("multiply(x, y)", "multiply(y, x)"),                          // operand order
      variant("ROOT s = f32[] add(a, b)", "ROOT s = f32[] maximum(a, b)"),  // callee
      variant("constant(0)", "constant(1)"),                                // constant value
      variant("f32[16,8] multiply", "f32[16,8]{0,1} multiply"),             // layout
      variant("HloModule m", "HloModule m, input_output_alias={ {}: (0, {}) }"),
      variant("HloModule m", "HloModule m, replica_count=2"),
  };
  for (const std::string& text : variants) {
    SCOPED_TRACE(text);
    auto other = Parse(text);
    ASSERT_TRUE(other);
    EXPECT_NE(FingerprintModule(*base), FingerprintModule(*other));
  }
  // The entry computations alone: equal for the config-only variants.
  auto aliased = Parse(variants[4]);
  EXPECT_TRUE(ComputationsIdentical(*base->entry_computation(), *aliased->entry_computation()));
  auto swapped = Parse(variants[0]);
  EXPECT_FALSE(ComputationsIdentical(*base->entry_computation(), *swapped->entry_computation()));
  auto other_callee = Parse(variants[1]);
  const HloInstruction* reduce = base->entry_computation()->root_instruction();
  const HloInstruction* other_reduce = other_callee->entry_computation()->root_instruction();
  EXPECT_TRUE(IdenticalIgnoringOperands(*reduce, *other_reduce));  // callees aside
  EXPECT_FALSE(InstructionsIdenticalIgnoringOperands(*reduce, *other_reduce));
  EXPECT_NE(FingerprintInstructionIgnoringOperands(*reduce),
            FingerprintInstructionIgnoringOperands(*other_reduce));
}

TEST(HloStructuralHashTest, HasherSeparatesValues) {
  auto digest = [](auto... values) {
    StructuralHasher hasher;
    hasher.Combine(values...);
    return hasher.Finish();
  };
  EXPECT_NE(digest(std::string("ab"), std::string("c")),
            digest(std::string("a"), std::string("bc")));
  EXPECT_NE(digest(1, 2), digest(2, 1));
  EXPECT_NE(digest(std::vector<int64_t>{}), digest(std::vector<int64_t>{0}));
  EXPECT_EQ(digest(std::string("same")), digest(std::string("same")));
}

}  // namespace
}  // namespace axle
