//===- gpu_thunk_test_util.h - Running one GPU thunk in a test -------------===//
//
// For the tests of Axle's own GPU kernels (sort_thunk_test.cc,
// scatter_thunk_test.cc): the instruction under test is the root of a
// module's entry computation whose operands are its parameters, in order.
//
//   MakeFromText        parses the module and makes the root's thunk with
//                       value ids 0..k-1 for the operands and k.. for the
//                       result's leaves (or the operands' own ids: in place).
//   ExpectPtxasAccepts  ptxas -arch=sm_90 accepts the thunk's PTX (skips
//                       without ptxas).
//   GpuThunkDeviceTest  on a GPU: runs the thunk on device buffers holding
//                       the inputs and compares the result with the
//                       interpreter's (skips, with a message, without one;
//                       with AXLE_GPU_THUNK_DRY_RUN=1 it checks everything
//                       but the run instead).
//   RandomLiteral       deterministic inputs of any array type.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_THUNK_TEST_UTIL_H_
#define AXLE_GPU_GPU_THUNK_TEST_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/core/shape_util.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/cuda_device_test_util.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_thunk.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {

using ThunkFactory = std::function<absl::StatusOr<std::unique_ptr<GpuThunk>>(
    const HloInstruction& instruction, GpuThunkValues values)>;

struct ThunkUnderTest {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<GpuThunk> thunk;
  const HloInstruction* root = nullptr;
  int64_t num_operands = 0;
  int64_t num_outputs = 0;

  const PtxThunk& ptx_thunk() const { return static_cast<const PtxThunk&>(*thunk); }
  const std::string& ptx() const { return ptx_thunk().ptx(); }
};

inline int64_t LeafCount(const Shape& shape) {
  int64_t leaves = 0;
  ShapeUtil::ForEachSubshape(shape, [&](const Shape& subshape, const ShapeIndex&) {
    if (subshape.IsArray()) ++leaves;
  });
  return leaves;
}

// With `in_place`, result leaf i has the value id of operand i.
inline absl::StatusOr<ThunkUnderTest> MakeFromText(const std::string& text,
                                                   const ThunkFactory& factory,
                                                   bool in_place = false) {
  ThunkUnderTest result;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  result.module = *std::move(module);
  result.root = result.module->entry_computation()->root_instruction();
  result.num_operands = result.root->operand_count();
  result.num_outputs = LeafCount(result.root->shape());
  GpuThunkValues values;
  for (int64_t i = 0; i < result.num_operands; ++i) values.operands.push_back(i);
  for (int64_t i = 0; i < result.num_outputs; ++i) {
    values.outputs.push_back(in_place ? i : result.num_operands + i);
  }
  absl::StatusOr<std::unique_ptr<GpuThunk>> thunk = factory(*result.root, std::move(values));
  if (!thunk.ok()) return thunk.status();
  result.thunk = *std::move(thunk);
  return result;
}

inline void ExpectPtxasAccepts(const std::string& ptx) {
  if (absl::StatusOr<std::string> ptxas = PtxasPath(); !ptxas.ok()) {
    GTEST_SKIP() << "ptxas not available: " << ptxas.status().message();
  }
  absl::StatusOr<std::string> cubin = AssemblePtx(ptx, "sm_90");
  ASSERT_TRUE(cubin.ok()) << cubin.status() << "\n" << ptx;
  EXPECT_EQ(cubin->substr(0, 4),
            "\x7f"
            "ELF");
}

// Deterministic values of `shape` from `seed`: floats uniform in [low,
// high), integers uniform in [low, high] (pred: either).
inline Literal RandomLiteral(const Shape& shape, uint32_t seed, double low, double high) {
  Literal literal(shape);
  std::mt19937 random(seed);
  const PrimitiveType type = shape.element_type();
  const int64_t count = ShapeUtil::ElementsIn(shape);
  for (int64_t i = 0; i < count; ++i) {
    if (type == PRED) {
      literal.SetIntegral(i, static_cast<int64_t>(random() & 1));
    } else if (primitive_util::IsIntegralType(type)) {
      std::uniform_int_distribution<int64_t> values(static_cast<int64_t>(low),
                                                    static_cast<int64_t>(high));
      literal.SetIntegral(i, values(random));
    } else if (primitive_util::IsComplexType(type)) {
      std::uniform_real_distribution<double> values(low, high);
      const double re = values(random);
      literal.SetFromComplex128(i, {re, values(random)});
    } else {
      std::uniform_real_distribution<double> values(low, high);
      literal.SetFromDouble(i, values(random));
    }
  }
  return literal;
}

class GpuThunkDeviceTest : public CudaDeviceTest<> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
    if (!device.ok()) {
      // A dry run checks the tests themselves without a GPU: each HLO
      // parses, the interpreter evaluates it and the thunk is made.
      const char* dry = std::getenv("AXLE_GPU_THUNK_DRY_RUN");
      if (dry != nullptr && *dry != '\0' && *dry != '0') {
        dry_run_ = true;
        return;
      }
      GTEST_SKIP() << "no CUDA device: " << device.status().message()
                   << " (AXLE_GPU_THUNK_DRY_RUN=1 checks the tests without one)";
    }
    UseDevice(*std::move(device));
  }

  PtxOptions DeviceOptions() const {
    // sm_90 PTX runs on sm_90 and newer; an older device gets its own.
    PtxOptions options;
    if (device_ != nullptr && device_->compute_capability_major() < 9) {
      options.arch = device_->ArchName();
    }
    return options;
  }

  // Runs the thunk on device buffers holding `inputs` (one per operand of
  // the root); the result as a literal of the root's shape.
  absl::StatusOr<Literal> RunOnDevice(const ThunkUnderTest& test,
                                      const std::vector<Literal>& inputs) {
    GpuThunk& thunk = *test.thunk;
    if (absl::Status status = thunk.Initialize(*device_); !status.ok()) return status;
    std::vector<ScopedShapedBuffer> owned;
    std::vector<se::DeviceMemoryBase> buffers;
    owned.reserve(inputs.size() + 8);
    for (const Literal& input : inputs) {
      absl::StatusOr<ScopedShapedBuffer> buffer =
          AllocateCudaShapedBuffer(input.shape(), allocator_.get(), stream_.get());
      if (!buffer.ok()) return buffer.status();
      if (absl::Status status = TransferLiteralToCuda(stream_.get(), input, *buffer);
          !status.ok()) {
        return status;
      }
      buffers.push_back(buffer->root_buffer());
      owned.push_back(*std::move(buffer));
    }
    const GpuThunkValues uses = thunk.buffer_uses();
    std::vector<Shape> leaf_shapes;
    ShapeUtil::ForEachSubshape(test.root->shape(), [&](const Shape& subshape, const ShapeIndex&) {
      if (subshape.IsArray()) leaf_shapes.push_back(subshape);
    });
    const bool in_place = !uses.outputs.empty() && uses.outputs[0] < test.num_operands;
    std::vector<size_t> output_slots;
    for (size_t i = 0; i < leaf_shapes.size(); ++i) {
      if (in_place) {
        output_slots.push_back(static_cast<size_t>(uses.outputs[i]));
        continue;
      }
      absl::StatusOr<ScopedShapedBuffer> buffer =
          AllocateCudaShapedBuffer(leaf_shapes[i], allocator_.get(), stream_.get());
      if (!buffer.ok()) return buffer.status();
      // Garbage in the result: the thunk must write every element.
      se::DeviceMemoryBase memory = buffer->root_buffer();
      if (absl::Status status = stream_->Memset8(&memory, 0xA5, memory.size()); !status.ok()) {
        return status;
      }
      output_slots.push_back(owned.size());
      buffers.push_back(buffer->root_buffer());
      owned.push_back(*std::move(buffer));
    }
    se::OwningDeviceMemory scratch;
    if (thunk.scratch_bytes() > 0) {
      absl::StatusOr<se::OwningDeviceMemory> memory =
          allocator_->Allocate(device_->ordinal(), static_cast<uint64_t>(thunk.scratch_bytes()));
      if (!memory.ok()) return memory.status();
      scratch = *std::move(memory);
      se::DeviceMemoryBase raw = scratch.cref();
      if (absl::Status status = stream_->Memset8(&raw, 0x5A, raw.size()); !status.ok()) {
        return status;
      }
    }
    GpuThunkContext context;
    context.device = device_.get();
    context.stream = stream_.get();
    context.buffers = buffers;
    context.scratch = scratch.cref();
    if (absl::Status status = thunk.Execute(context); !status.ok()) return status;
    if (absl::Status status = stream_->Synchronize(); !status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("running ", thunk.name(), ": ", status.message()));
    }
    std::vector<Literal> leaves;
    for (size_t slot : output_slots) {
      absl::StatusOr<Literal> leaf = TransferLiteralFromCuda(stream_.get(), owned[slot]);
      if (!leaf.ok()) return leaf.status();
      leaves.push_back(*std::move(leaf));
    }
    if (!test.root->shape().IsTuple()) return std::move(leaves[0]);
    return Literal::MakeTuple(std::move(leaves));
  }

  // Makes the thunk of `text`'s root, runs it on `inputs` and compares with
  // the interpreter (exactly when `error` is null).
  void ExpectMatchesInterpreter(const std::string& text, const ThunkFactory& factory,
                                const std::vector<Literal>& inputs,
                                const ErrorSpec* error = nullptr, bool in_place = false) {
    absl::StatusOr<ThunkUnderTest> test = MakeFromText(text, factory, in_place);
    ASSERT_TRUE(test.ok()) << test.status() << "\n" << text;
    std::vector<const Literal*> arguments;
    for (const Literal& input : inputs) arguments.push_back(&input);
    HloEvaluator evaluator;
    absl::StatusOr<Literal> expected = evaluator.Evaluate(*test->module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    if (dry_run_) return;
    absl::StatusOr<Literal> actual = RunOnDevice(*test, inputs);
    ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << text;
    const absl::Status compared = error == nullptr ? LiteralsEqual(*expected, *actual)
                                                   : LiteralsNear(*expected, *actual, *error);
    EXPECT_TRUE(compared.ok()) << compared << "\nHLO:\n"
                               << text << "\ninputs:\n"
                               << InputsToString(inputs) << "\nexpected (interpreter):\n"
                               << Abbreviated(*expected) << "\nactual (GPU):\n"
                               << Abbreviated(*actual);
  }

  static std::string Abbreviated(const Literal& literal) {
    std::string text = literal.ToString();
    constexpr size_t kMax = 4000;
    if (text.size() > kMax) text = text.substr(0, kMax) + "\n... (truncated)";
    return text;
  }
  static std::string InputsToString(const std::vector<Literal>& inputs) {
    std::string text;
    for (size_t i = 0; i < inputs.size(); ++i) {
      absl::StrAppend(&text, "  operand ", i, ": ", Abbreviated(inputs[i]), "\n");
    }
    return text;
  }

  bool dry_run_ = false;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_THUNK_TEST_UTIL_H_
