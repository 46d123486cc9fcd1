//===- target_hooks_test.cc - The elemental emitter asks its target --------===//
//
// An emitter given a fake TargetHooks emits the fake's functions, never a
// host's (libm names, Axle's runtime helpers, __divsc3, llvm.prefetch), and
// takes its vector width from the fake's preferred vector width. The IR is
// checked as text and verified; nothing runs.
//
//===----------------------------------------------------------------------===//
#include "axle/llvm_ir/target_hooks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "gtest/gtest.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace axle::llvm_ir {
namespace {

// Emits a call of an external `fake_*` function for every hook and records
// the calls in `log`.
class FakeHooks final : public TargetHooks {
 public:
  llvm::Value* EmitMathCall(llvm::IRBuilderBase& b, MathFunction function,
                            absl::Span<llvm::Value* const> args) const override {
    log.push_back(absl::StrCat("math ", MathFunctionName(function)));
    EXPECT_EQ(static_cast<int>(args.size()), MathFunctionArity(function));
    llvm::Type* type = args[0]->getType();
    std::vector<llvm::Type*> parameters(args.size(), type);
    return Call(b, absl::StrCat("fake_", MathFunctionName(function)),
                llvm::FunctionType::get(type, parameters, false), args);
  }

  llvm::Value* EmitComplexCall(llvm::IRBuilderBase& b, HloOpcode opcode,
                               absl::Span<llvm::Value* const> args) const override {
    log.push_back(absl::StrCat("complex ", HloOpcodeString(opcode)));
    llvm::Type* type = args[0]->getType();
    std::vector<llvm::Type*> parameters(args.size(), type);
    return Call(b, absl::StrCat("fake_complex_", HloOpcodeString(opcode)),
                llvm::FunctionType::get(type, parameters, false), args);
  }

  void EmitPrefetch(llvm::IRBuilderBase& b, llvm::Value* base, llvm::Value* byte_offset,
                    int64_t bytes) const override {
    log.push_back(absl::StrCat("prefetch ", bytes));
    Call(b, "fake_prefetch",
         llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()}, false),
         {b.CreateGEP(b.getInt8Ty(), base, byte_offset), b.getInt64(bytes)});
  }

  int PreferredVectorBits() const override { return 256; }

  mutable std::vector<std::string> log;

 private:
  static llvm::Value* Call(llvm::IRBuilderBase& b, const std::string& name,
                           llvm::FunctionType* type, absl::Span<llvm::Value* const> args) {
    llvm::FunctionCallee callee = b.GetInsertBlock()->getModule()->getOrInsertFunction(name, type);
    return b.CreateCall(callee, llvm::ArrayRef<llvm::Value*>(args.data(), args.size()));
  }
};

// One function `void f(ptr parameter..., ptr out)` storing the element of
// the entry computation's root at the index all zeros, each parameter read
// from its pointer (row-major), emitted with FakeHooks.
struct Emitted {
  std::string ir;
  std::vector<std::string> log;
};

Emitted EmitRoot(const std::string& hlo_text,
                 ElementalIrEmitter::RowReductionHook* row_hook = nullptr) {
  auto hlo_module = ParseAndReturnUnverifiedModule(hlo_text);
  EXPECT_TRUE(hlo_module.ok()) << hlo_module.status();
  if (!hlo_module.ok()) return {};
  const HloComputation& computation = *(*hlo_module)->entry_computation();
  const HloInstruction& root = *computation.root_instruction();

  llvm::LLVMContext context;
  llvm::Module module("target_hooks_test", context);
  llvm::IRBuilder<> b(context);
  std::vector<llvm::Type*> parameters(computation.num_parameters() + 1, b.getPtrTy());
  llvm::Function* function =
      llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), parameters, false),
                             llvm::Function::ExternalLinkage, "f", &module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
  FakeHooks hooks;
  ElementalIrEmitter emitter(&module, &b, hooks);
  if (row_hook != nullptr) {
    row_hook->prefetch_streams = {function->getArg(0)};
    emitter.SetRowReductionHook(row_hook);
  }
  std::vector<ElementGenerator> operands;
  for (const HloInstruction* operand : root.operands()) {
    EXPECT_EQ(operand->opcode(), HloOpcode::kParameter) << operand->name();
    llvm::Value* base = function->getArg(
        static_cast<unsigned>(cast<HloParameterInstruction>(operand)->parameter_number()));
    const Shape shape = operand->shape();
    operands.push_back([&emitter, base, shape](const IrIndex& index) -> llvm::Value* {
      return emitter.LoadElement(base, emitter.Linearize(index, shape.dimensions()),
                                 shape.element_type());
    });
  }
  IrIndex index(root.shape().rank(), b.getInt64(0));
  auto value = emitter.EmitElement(root, operands, index);
  EXPECT_TRUE(value.ok()) << value.status();
  if (!value.ok()) return {};
  emitter.StoreElement(*value, function->getArg(computation.num_parameters()), b.getInt64(0),
                       root.shape().element_type());
  b.CreateRetVoid();
  std::string ir;
  llvm::raw_string_ostream stream(ir);
  EXPECT_FALSE(llvm::verifyModule(module, &stream)) << ir;
  module.print(stream, nullptr);
  return {ir, hooks.log};
}

// The host's names, none of which a fake-hooked emitter may emit.
void ExpectNoHostSymbols(const std::string& ir) {
  for (const char* host :
       {"@tanf", "@tan(", "@acoshf", "@atan2", "@hypot", "@llvm.exp", "@llvm.log", "@llvm.sin",
        "@llvm.cos", "@llvm.pow", "@__divsc3", "@__divdc3", "axle_cpu", "@llvm.prefetch"}) {
    EXPECT_EQ(ir.find(host), std::string::npos) << host << " in\n" << ir;
  }
}

TEST(TargetHooksTest, TranscendentalsCallTheTargetsMathFunctions) {
  for (const char* type : {"f32", "f64"}) {
    for (const char* op : {"tan", "acosh", "cbrt", "sine", "cosine"}) {
      // f32 cbrt is inline IR (math_ir.h).
      if (type[1] == '3' && std::string(op) == "cbrt") continue;
      Emitted emitted =
          EmitRoot(absl::StrCat("HloModule m\nENTRY e {\n  x = ", type,
                                "[4] parameter(0)\n  ROOT r = ", type, "[4] ", op, "(x)\n}\n"));
      ASSERT_EQ(emitted.log.size(), 1u) << op;
      EXPECT_EQ(emitted.log[0].rfind("math ", 0), 0u) << emitted.log[0];
      EXPECT_NE(
          emitted.ir.find("call " + std::string(type[1] == '3' ? "float" : "double") + " @fake_"),
          std::string::npos)
          << emitted.ir;
      ExpectNoHostSymbols(emitted.ir);
    }
  }
  // f64 exp, log, power and atan2 go to the hooks too (f32 exp, log,
  // cbrt and atan2 are inline IR: no call at all).
  Emitted f64 = EmitRoot(R"(HloModule m
ENTRY e {
  x = f64[4] parameter(0)
  y = f64[4] parameter(1)
  ROOT r = f64[4] power(x, y)
})");
  EXPECT_EQ(f64.log, std::vector<std::string>{"math pow"});
  EXPECT_NE(f64.ir.find("call double @fake_pow(double"), std::string::npos) << f64.ir;
  Emitted f32 = EmitRoot(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] exponential(x)
})");
  EXPECT_TRUE(f32.log.empty());
  EXPECT_EQ(f32.ir.find("@fake_"), std::string::npos) << f32.ir;
  ExpectNoHostSymbols(f32.ir);
  Emitted atan2 = EmitRoot(R"(HloModule m
ENTRY e {
  x = f64[4] parameter(0)
  y = f64[4] parameter(1)
  ROOT r = f64[4] atan2(x, y)
})");
  EXPECT_EQ(atan2.log, std::vector<std::string>{"math atan2"});
  ExpectNoHostSymbols(atan2.ir);
  for (const char* op : {"atan2(x, x)", "cbrt(x)"}) {
    Emitted inline_f32 = EmitRoot(absl::StrCat(
        "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] ", op, "\n}\n"));
    EXPECT_TRUE(inline_f32.log.empty()) << op;
    EXPECT_EQ(inline_f32.ir.find("@fake_"), std::string::npos) << inline_f32.ir;
    ExpectNoHostSymbols(inline_f32.ir);
  }
}

TEST(TargetHooksTest, NarrowFloatsRoundInlineWithoutTheTarget) {
  // 8-bit floats (narrow_float_ir.h) and bf16 round in the emitter's own
  // integer IR on every target: no hook, no call.
  for (const char* type : {"f8e4m3fn", "f8e8m0fnu", "f4e2m1fn", "bf16"}) {
    Emitted emitted = EmitRoot(absl::StrCat(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = )",
                                            type, R"([4] convert(x)
})"));
    EXPECT_TRUE(emitted.log.empty()) << type;
    // LLVM's intrinsics only (smax/umin), no function of the target's.
    for (size_t at = emitted.ir.find("call "); at != std::string::npos;
         at = emitted.ir.find("call ", at + 1)) {
      EXPECT_EQ(emitted.ir.compare(emitted.ir.find('@', at), 6, "@llvm."), 0)
          << type << ": " << emitted.ir.substr(at, 60);
    }
    ExpectNoHostSymbols(emitted.ir);
  }
}

TEST(TargetHooksTest, ComplexMathCallsTheTargetsHelpers) {
  Emitted divide = EmitRoot(R"(HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  y = c64[4] parameter(1)
  ROOT r = c64[4] divide(x, y)
})");
  EXPECT_EQ(divide.log, std::vector<std::string>{"complex divide"});
  EXPECT_NE(divide.ir.find("@fake_complex_divide"), std::string::npos) << divide.ir;
  ExpectNoHostSymbols(divide.ir);
  Emitted sqrt = EmitRoot(R"(HloModule m
ENTRY e {
  x = c128[4] parameter(0)
  ROOT r = c128[4] sqrt(x)
})");
  EXPECT_EQ(sqrt.log, std::vector<std::string>{"complex sqrt"});
  EXPECT_NE(sqrt.ir.find("call { double, double } @fake_complex_sqrt"), std::string::npos)
      << sqrt.ir;
  // abs and log of a complex value: hypot and atan2 are the target's; the
  // log of a c64's modulus is the inline f32 log (math_ir.h), a c128's the
  // target's.
  Emitted log = EmitRoot(R"(HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT r = c64[4] log(x)
})");
  std::sort(log.log.begin(), log.log.end());  // the order C++ evaluates arguments in
  EXPECT_EQ(log.log, (std::vector<std::string>{"math atan2", "math hypot"}));
  ExpectNoHostSymbols(log.ir);
  Emitted log128 = EmitRoot(R"(HloModule m
ENTRY e {
  x = c128[4] parameter(0)
  ROOT r = c128[4] log(x)
})");
  std::sort(log128.log.begin(), log128.log.end());
  EXPECT_EQ(log128.log, (std::vector<std::string>{"math atan2", "math hypot", "math log"}));
  ExpectNoHostSymbols(log128.ir);
}

constexpr char kRowMax[] = R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,2048] parameter(0)
  init = f32[] parameter(1)
  ROOT r = f32[4] reduce(x, init), dimensions={1}, to_apply=max
})";

TEST(TargetHooksTest, ForcedVectorWidthIsTheTargetsPreferredWidth) {
  Emitted emitted = EmitRoot(kRowMax);
  // 256 bits of f32.
  EXPECT_NE(emitted.ir.find("!\"llvm.loop.vectorize.width\", i32 8}"), std::string::npos)
      << emitted.ir;
  EXPECT_EQ(emitted.ir.find("i32 16}"), std::string::npos) << emitted.ir;
}

TEST(TargetHooksTest, RowReductionPrefetchesThroughTheTarget) {
  ElementalIrEmitter::RowReductionHook hook;
  Emitted emitted = EmitRoot(kRowMax, &hook);
  EXPECT_TRUE(hook.taken);
  EXPECT_EQ(emitted.log, std::vector<std::string>{
                             absl::StrCat("prefetch ", ElementalIrEmitter::kPrefetchChunkBytes)});
  EXPECT_NE(emitted.ir.find("call void @fake_prefetch(ptr"), std::string::npos) << emitted.ir;
  ExpectNoHostSymbols(emitted.ir);
}

}  // namespace
}  // namespace axle::llvm_ir
