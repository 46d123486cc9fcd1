//===- rng_bit_generator_thunk.cc - rng-bit-generator as a GPU kernel -----===//
#include "axle/gpu/rng_bit_generator_thunk.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/eval/rng_bit_generator.h"
#include "axle/gpu/kernel_builder.h"
#include "axle/gpu/ptx_module.h"
#include "axle/gpu/ptx_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

struct RngGeometry {
  bool threefry = false;
  int64_t state_size = 2;
  int bits = 32;
  int64_t elements = 0;
  // Threefry below 64 bits: the split dimension's outer, length and inner
  // sizes.
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;
  // Counter blocks (threads) generated.
  int64_t blocks = 0;
};

class RngEmitter {
 public:
  explicit RngEmitter(llvm::Module* module) : kb_(module), b_(kb_.b()) {}

  // bits(state, bits): a thread per block. state(state, new_state, i64
  // blocks): the new state.
  absl::Status Emit(const RngGeometry& g);

 private:
  llvm::Value* Low(llvm::Value* v) { return b_.CreateTrunc(v, b_.getInt32Ty()); }
  llvm::Value* High(llvm::Value* v) {
    return b_.CreateTrunc(b_.CreateLShr(v, 32), b_.getInt32Ty());
  }
  llvm::Value* I32(uint32_t v) { return b_.getInt32(v); }
  llvm::Value* Rotate(llvm::Value* v, int distance) {
    return b_.CreateOr(b_.CreateShl(v, distance), b_.CreateLShr(v, 32 - distance));
  }
  std::array<llvm::Value*, 2> Threefry(llvm::Value* key0, llvm::Value* key1, llvm::Value* c0,
                                       llvm::Value* c1);
  std::array<llvm::Value*, 4> Philox(llvm::Value* key0, llvm::Value* key1,
                                     std::array<llvm::Value*, 4> c);
  // The 128-bit {low, high} plus `n` (i64s).
  std::pair<llvm::Value*, llvm::Value*> Add128(llvm::Value* low, llvm::Value* high, llvm::Value* n);
  void Store(llvm::Value* out, int bits, llvm::Value* index, llvm::Value* value);
  // The state's key words and 64-bit counter(s).
  struct State {
    llvm::Value* key0;
    llvm::Value* key1;
    llvm::Value* counter_low;
    llvm::Value* counter_high;
    llvm::Value* word0;
  };
  State LoadState(llvm::Value* state, const RngGeometry& g);

  KernelBuilder kb_;
  llvm::IRBuilder<>& b_;
};

std::array<llvm::Value*, 2> RngEmitter::Threefry(llvm::Value* key0, llvm::Value* key1,
                                                 llvm::Value* c0, llvm::Value* c1) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  llvm::Value* ks[3] = {key0, key1, b_.CreateXor(b_.CreateXor(I32(0x1BD11BDA), key0), key1)};
  llvm::Value* x0 = b_.CreateAdd(c0, ks[0]);
  llvm::Value* x1 = b_.CreateAdd(c1, ks[1]);
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 = b_.CreateAdd(x0, x1);
      x1 = Rotate(x1, kRotations[(group % 2) * 4 + r]);
      x1 = b_.CreateXor(x1, x0);
    }
    x0 = b_.CreateAdd(x0, ks[(group + 1) % 3]);
    x1 = b_.CreateAdd(x1, b_.CreateAdd(ks[(group + 2) % 3], I32(static_cast<uint32_t>(group + 1))));
  }
  return {x0, x1};
}

std::array<llvm::Value*, 4> RngEmitter::Philox(llvm::Value* key0, llvm::Value* key1,
                                               std::array<llvm::Value*, 4> c) {
  llvm::Value* k0 = key0;
  llvm::Value* k1 = key1;
  for (int round = 0; round < 10; ++round) {
    llvm::Value* p0 = b_.CreateMul(b_.getInt64(0xD2511F53), b_.CreateZExt(c[0], b_.getInt64Ty()));
    llvm::Value* p1 = b_.CreateMul(b_.getInt64(0xCD9E8D57), b_.CreateZExt(c[2], b_.getInt64Ty()));
    c = {b_.CreateXor(b_.CreateXor(High(p1), c[1]), k0), Low(p1),
         b_.CreateXor(b_.CreateXor(High(p0), c[3]), k1), Low(p0)};
    k0 = b_.CreateAdd(k0, I32(0x9E3779B9));
    k1 = b_.CreateAdd(k1, I32(0xBB67AE85));
  }
  return c;
}

std::pair<llvm::Value*, llvm::Value*> RngEmitter::Add128(llvm::Value* low, llvm::Value* high,
                                                         llvm::Value* n) {
  llvm::Value* sum = b_.CreateAdd(low, n);
  llvm::Value* carry = b_.CreateZExt(b_.CreateICmpULT(sum, low), b_.getInt64Ty());
  return {sum, b_.CreateAdd(high, carry)};
}

void RngEmitter::Store(llvm::Value* out, int bits, llvm::Value* index, llvm::Value* value) {
  llvm::Type* type = b_.getIntNTy(static_cast<unsigned>(bits));
  b_.CreateStore(b_.CreateZExtOrTrunc(value, type), b_.CreateInBoundsGEP(type, out, index));
}

RngEmitter::State RngEmitter::LoadState(llvm::Value* state, const RngGeometry& g) {
  llvm::Type* u64 = b_.getInt64Ty();
  State s;
  s.word0 = b_.CreateLoad(u64, state);
  llvm::Value* word1 = b_.CreateLoad(u64, b_.CreateInBoundsGEP(u64, state, b_.getInt64(1)));
  s.key0 = Low(s.word0);
  s.key1 = High(s.word0);
  s.counter_low = word1;
  // Philox's 128-bit counter: {state[1], state[2]}, or {state[1], state[0]}.
  s.counter_high = g.state_size >= 3
                       ? b_.CreateLoad(u64, b_.CreateInBoundsGEP(u64, state, b_.getInt64(2)))
                       : s.word0;
  return s;
}

absl::Status RngEmitter::Emit(const RngGeometry& g) {
  kb_.BeginKernel("rng_bits", 2, 0, kThreadsPerBlock);
  llvm::Value* i = kb_.GlobalThreadIndex();
  AXLE_RETURN_IF_ERROR(
      kb_.If(b_.CreateICmpULT(i, kb_.I64(g.blocks)), "block", [&]() -> absl::Status {
        const State s = LoadState(kb_.pointer(0), g);
        llvm::Value* out = kb_.pointer(1);
        if (g.threefry) {
          llvm::Value* c = b_.CreateAdd(s.counter_low, i);
          const std::array<llvm::Value*, 2> x = Threefry(s.key0, s.key1, Low(c), High(c));
          if (g.bits == 64) {
            Store(out, 64, i,
                  b_.CreateOr(b_.CreateZExt(x[0], b_.getInt64Ty()),
                              b_.CreateShl(b_.CreateZExt(x[1], b_.getInt64Ty()), 32)));
            return absl::OkStatus();
          }
          const int64_t half = (g.length + 1) / 2;
          llvm::Value* o = b_.CreateUDiv(i, kb_.I64(half * g.inner));
          llvm::Value* j = b_.CreateURem(b_.CreateUDiv(i, kb_.I64(g.inner)), kb_.I64(half));
          llvm::Value* q = b_.CreateURem(i, kb_.I64(g.inner));
          for (int w = 0; w < 2; ++w) {
            llvm::Value* position = b_.CreateAdd(b_.CreateMul(j, kb_.I64(2)), kb_.I64(w));
            AXLE_RETURN_IF_ERROR(kb_.If(
                b_.CreateICmpULT(position, kb_.I64(g.length)), "half", [&]() -> absl::Status {
                  llvm::Value* at = b_.CreateAdd(
                      b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, kb_.I64(g.length)), position),
                                   kb_.I64(g.inner)),
                      q);
                  Store(out, g.bits, at, x[w]);
                  return absl::OkStatus();
                }));
          }
          return absl::OkStatus();
        }
        const auto [c0, c1] = Add128(s.counter_low, s.counter_high, i);
        const std::array<llvm::Value*, 4> x =
            Philox(s.key0, s.key1, {Low(c0), High(c0), Low(c1), High(c1)});
        const size_t per_block = g.bits == 64 ? 2 : 4;
        for (size_t k = 0; k < per_block; ++k) {
          llvm::Value* at = b_.CreateAdd(b_.CreateMul(i, kb_.I64(static_cast<int64_t>(per_block))),
                                         kb_.I64(static_cast<int64_t>(k)));
          llvm::Value* value =
              g.bits == 64
                  ? b_.CreateOr(b_.CreateZExt(x[2 * k], b_.getInt64Ty()),
                                b_.CreateShl(b_.CreateZExt(x[2 * k + 1], b_.getInt64Ty()), 32))
                  : x[k];
          AXLE_RETURN_IF_ERROR(
              kb_.If(b_.CreateICmpULT(at, kb_.I64(g.elements)), "element", [&]() -> absl::Status {
                Store(out, g.bits, at, value);
                return absl::OkStatus();
              }));
        }
        return absl::OkStatus();
      }));
  kb_.EndKernel();

  // The new state: the key kept, the counter advanced by the blocks used.
  kb_.BeginKernel("rng_state", 2, 0, 32);
  AXLE_RETURN_IF_ERROR(
      kb_.If(b_.CreateICmpEQ(kb_.GlobalThreadIndex(), kb_.I64(0)), "first", [&]() -> absl::Status {
        const State s = LoadState(kb_.pointer(0), g);
        llvm::Value* out = kb_.pointer(1);
        llvm::Type* u64 = b_.getInt64Ty();
        llvm::Value* blocks = kb_.I64(g.blocks);
        llvm::Value* low = b_.CreateAdd(s.counter_low, blocks);
        llvm::Value* high = nullptr;
        if (!g.threefry) std::tie(low, high) = Add128(s.counter_low, s.counter_high, blocks);
        b_.CreateStore(s.word0, out);
        b_.CreateStore(low, b_.CreateInBoundsGEP(u64, out, b_.getInt64(1)));
        if (!g.threefry && g.state_size >= 3) {
          b_.CreateStore(high, b_.CreateInBoundsGEP(u64, out, b_.getInt64(2)));
        }
        return absl::OkStatus();
      }));
  kb_.EndKernel();
  return absl::OkStatus();
}

class RngBitGeneratorThunk final : public PtxThunk {
 public:
  RngBitGeneratorThunk(std::string name, GpuThunkValues values, std::string ptx, RngGeometry g)
      : PtxThunk(std::move(name), std::move(values), std::move(ptx), {"rng_bits", "rng_state"}),
        g_(g) {}

  absl::Status Execute(const GpuThunkContext& context) const override {
    const GpuThunkValues& v = values();
    const Argument state = Argument::Pointer(context.address(v.operands[0]));
    AXLE_RETURN_IF_ERROR(LaunchPerItem(context.stream, 0, g_.blocks,
                                       {state, Argument::Pointer(context.address(v.outputs[1]))}));
    return Launch(context.stream, 1, 1, 32,
                  {state, Argument::Pointer(context.address(v.outputs[0]))});
  }

 private:
  RngGeometry g_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeRngBitGeneratorThunk(
    const HloInstruction& instruction, GpuThunkValues values, const PtxOptions& options) {
  const auto* rng = dyn_cast<HloRngBitGeneratorInstruction>(&instruction);
  const Shape& shape = instruction.shape();
  if (rng == nullptr || instruction.operand_count() != 1 || !shape.IsTuple() ||
      shape.tuple_shapes_size() != 2 || !instruction.operand(0)->shape().IsArray() ||
      instruction.operand(0)->shape().element_type() != U64 ||
      instruction.operand(0)->shape().rank() != 1 ||
      !ShapeUtil::Compatible(shape.tuple_shapes(0), instruction.operand(0)->shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA: rng-bit-generator ", instruction.name(),
                     ": takes a u64[n] state and returns (state, bits), not ", shape.ToString()));
  }
  AXLE_RETURN_IF_ERROR(CheckThunkValues(instruction, values, 1, 2));
  RngGeometry g;
  g.state_size = instruction.operand(0)->shape().dimensions(0);
  const Shape& bits_shape = shape.tuple_shapes(1);
  if (absl::Status valid = CheckRandomBitsShape(rng->algorithm(), g.state_size, bits_shape);
      !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA: ", valid.message(), " (instruction ", instruction.name(), ")"));
  }
  AXLE_RETURN_IF_ERROR(CheckKernelTypes(instruction, {}));
  g.threefry = rng->algorithm() == RNG_THREE_FRY;
  g.bits = primitive_util::BitWidth(bits_shape.element_type());
  g.elements = ShapeUtil::ElementsIn(bits_shape);
  if (g.threefry && g.bits == 64) {
    g.blocks = g.elements;
  } else if (g.threefry) {
    // One dimension split in halves, as the interpreter does.
    const ThreefrySplit split = SplitForThreefry(bits_shape);
    g.outer = split.outer;
    g.length = split.length;
    g.inner = split.inner;
    g.blocks = g.outer * ((g.length + 1) / 2) * g.inner;
  } else {
    const int64_t per_block = g.bits == 64 ? 2 : 4;
    g.blocks = (g.elements + per_block - 1) / per_block;
  }

  llvm::LLVMContext context;
  const std::string module_name = absl::StrCat("rng_bit_generator_", instruction.name());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                        NewNvptxModule(module_name, context, options));
  RngEmitter emitter(module.get());
  AXLE_RETURN_IF_ERROR(emitter.Emit(g));
  AXLE_ASSIGN_OR_RETURN(std::string ptx, CompileNvptxModule(module.get(), module_name, options));
  return std::make_unique<RngBitGeneratorThunk>(instruction.name(), std::move(values),
                                                std::move(ptx), g);
}

}  // namespace axle::gpu
