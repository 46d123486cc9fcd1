//===- narrow_float_ir_test.cc - f32 to 8- and 4-bit floats, inline --------===//
//
// The inline encoder, JIT-compiled for the host at LLVM's O2, gives the
// interpreter's bits (axle/core/types.h) for every 8- and 4-bit float type
// on: every 1024th f32 bit pattern (both signs, every binade, NaNs and
// infinities), and around each of the type's 256 values: the value, the
// f32s next to it, the midpoints to its neighbours (the ties) and the f32s
// next to those.
//
//===----------------------------------------------------------------------===//
#include "axle/llvm_ir/narrow_float_ir.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "axle/core/types.h"
#include "axle/llvm_ir/host_jit_for_tests.h"
#include "gtest/gtest.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::llvm_ir {
namespace {

using EncodeArray = void (*)(const float* in, uint8_t* out, int64_t n);

// A compiled `void f(const float* in, uint8_t* out, int64_t n)` storing the
// inline encoding of in[i] as `type` to out[i].
class CompiledEncoder {
 public:
  explicit CompiledEncoder(PrimitiveType type) {
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("narrow_float_ir_test", *context);
    llvm::IRBuilder<> b(*context);
    llvm::Type* ptr = b.getPtrTy();
    llvm::Function* function = llvm::Function::Create(
        llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getInt64Ty()}, false),
        llvm::Function::ExternalLinkage, "f", module.get());
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(*context, "entry", function);
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(*context, "loop", function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(*context, "exit", function);
    b.SetInsertPoint(entry);
    b.CreateCondBr(b.CreateICmpSGT(function->getArg(2), b.getInt64(0)), loop, exit);
    b.SetInsertPoint(loop);
    llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
    i->addIncoming(b.getInt64(0), entry);
    llvm::Value* x =
        b.CreateLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), function->getArg(0), i));
    b.CreateStore(EmitF32ToNarrowFloatInline(b, type, x),
                  b.CreateInBoundsGEP(b.getInt8Ty(), function->getArg(1), i));
    llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
    i->addIncoming(next, loop);
    b.CreateCondBr(b.CreateICmpSLT(next, function->getArg(2)), loop, exit);
    b.SetInsertPoint(exit);
    b.CreateRetVoid();
    function_ =
        reinterpret_cast<EncodeArray>(JitForHost(std::move(context), std::move(module), jit_));
  }

  std::vector<uint8_t> Run(const std::vector<float>& in) const {
    std::vector<uint8_t> out(in.size());
    if (function_ != nullptr) function_(in.data(), out.data(), static_cast<int64_t>(in.size()));
    return out;
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  EncodeArray function_ = nullptr;
};

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The inputs the header names for type T.
template <typename T>
std::vector<float> Inputs() {
  std::vector<float> in;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 1024) {
    in.push_back(FromBits(static_cast<uint32_t>(bits)));
  }
  std::vector<float> values;
  for (uint32_t code = 0; code < 256; ++code) {
    const auto value = static_cast<float>(T::FromBits(static_cast<uint8_t>(code)));
    if (std::isfinite(value)) values.push_back(value);
  }
  std::sort(values.begin(), values.end());
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    for (float x : {v, std::nextafter(v, kInf), std::nextafter(v, -kInf)}) in.push_back(x);
    if (i + 1 < values.size()) {
      const auto mid = static_cast<float>((double{v} + double{values[i + 1]}) / 2);
      for (float x : {mid, std::nextafter(mid, kInf), std::nextafter(mid, -kInf)}) {
        in.push_back(x);
      }
    }
  }
  for (float x : {0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                  -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::lowest(), std::numeric_limits<float>::denorm_min()}) {
    in.push_back(x);
  }
  return in;
}

template <typename T>
void ExpectInterpretersBits(PrimitiveType type) {
  SCOPED_TRACE(primitive_util::LowercasePrimitiveTypeName(type));
  ASSERT_TRUE(IsInlineEncodableNarrowFloat(type));
  CompiledEncoder encoder(type);
  const std::vector<float> in = Inputs<T>();
  const std::vector<uint8_t> out = encoder.Run(in);
  int failures = 0;
  for (size_t i = 0; i < in.size() && failures < 10; ++i) {
    const auto want = static_cast<uint8_t>(T(in[i]).bits());
    if (out[i] != want) {
      uint32_t bits;
      std::memcpy(&bits, &in[i], sizeof(bits));
      ADD_FAILURE() << "f32 " << in[i] << " (0x" << std::hex << bits << "): inline 0x"
                    << int{out[i]} << ", interpreter 0x" << int{want};
      ++failures;
    }
  }
}

TEST(NarrowFloatIrTest, GivesTheInterpretersBitsForEveryType) {
  ExpectInterpretersBits<float8_e4m3fn>(F8E4M3FN);
  ExpectInterpretersBits<float8_e5m2>(F8E5M2);
  ExpectInterpretersBits<float8_e4m3>(F8E4M3);
  ExpectInterpretersBits<float8_e3m4>(F8E3M4);
  ExpectInterpretersBits<float8_e4m3fnuz>(F8E4M3FNUZ);
  ExpectInterpretersBits<float8_e4m3b11fnuz>(F8E4M3B11FNUZ);
  ExpectInterpretersBits<float8_e5m2fnuz>(F8E5M2FNUZ);
  ExpectInterpretersBits<float8_e8m0fnu>(F8E8M0FNU);
  ExpectInterpretersBits<float4_e2m1fn>(F4E2M1FN);
}

TEST(NarrowFloatIrTest, OnlyNarrowFloatsAreEncodable) {
  for (PrimitiveType type : {F32, F16, BF16, S8, U8, PRED}) {
    EXPECT_FALSE(IsInlineEncodableNarrowFloat(type))
        << primitive_util::LowercasePrimitiveTypeName(type);
  }
}

}  // namespace
}  // namespace axle::llvm_ir
