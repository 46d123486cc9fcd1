//===- ptx_op_coverage_test.cc - Every elemental op through NVPTX and ptxas -===//
//
// Each op the elemental emitter knows, over the element types it takes,
// compiled as a one-op loop fusion: the PTX must be accepted by ptxas for
// sm_90 (skipped without ptxas), or the compile must be an Unimplemented
// error naming what is missing. No op may make LLVM's NVPTX backend fail
// (an Internal error) or crash.
//
//===----------------------------------------------------------------------===//
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/substitute.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

struct Case {
  std::string name;
  std::string hlo;
};

// The cases of one group: a float type's ops ("f32", "f64", "f16",
// "bf16"), the integer ops ("signed", with pred's; "unsigned"), and
// complex ops ("complex"), and
// conversions, index remapping and inline computations ("other").
std::vector<Case> Cases(const std::string& group) {
  std::vector<Case> cases;
  auto module = [](const std::string& body) { return absl::StrCat("HloModule m\n", body); };
  auto unary = [&](const std::string& op, const std::string& type) {
    cases.push_back({absl::StrCat(op, "_", type),
                     module(absl::Substitute("ENTRY e {\n  x = $1[33] parameter(0)\n"
                                             "  ROOT r = $1[33] $0(x)\n}\n",
                                             op, type))});
  };
  auto binary = [&](const std::string& op, const std::string& type) {
    cases.push_back({absl::StrCat(op, "_", type),
                     module(absl::Substitute("ENTRY e {\n  x = $1[33] parameter(0)\n"
                                             "  y = $1[33] parameter(1)\n"
                                             "  ROOT r = $1[33] $0(x, y)\n}\n",
                                             op, type))});
  };
  auto convert = [&](const std::string& from, const std::string& to) {
    cases.push_back({absl::StrCat("convert_", from, "_", to),
                     module(absl::Substitute("ENTRY e {\n  x = $0[33] parameter(0)\n"
                                             "  ROOT r = $1[33] convert(x)\n}\n",
                                             from, to))});
  };
  for (const char* type : {"f32", "f64", "f16", "bf16"}) {
    if (group != type) continue;
    for (const char* op : {"abs",
                           "negate",
                           "sqrt",
                           "rsqrt",
                           "cbrt",
                           "exponential",
                           "exponential-minus-one",
                           "log",
                           "log-plus-one",
                           "sine",
                           "cosine",
                           "tan",
                           "tanh",
                           "logistic",
                           "erf",
                           "floor",
                           "ceil",
                           "round-nearest-afz",
                           "round-nearest-even",
                           "sign"}) {
      unary(op, type);
    }
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "power", "atan2",
                           "maximum", "minimum"}) {
      binary(op, type);
    }
  }
  if (group == "signed") {
    for (const char* op : {"and", "or", "xor"}) binary(op, "pred");
    unary("not", "pred");
  }
  for (const char* type : {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "s4", "u4"}) {
    if (group != (type[0] == 's' ? "signed" : "unsigned")) continue;
    for (const char* op :
         {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or",
          "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "power"}) {
      binary(op, type);
    }
    for (const char* op : {"negate", "abs", "not", "popcnt", "count-leading-zeros", "sign"}) {
      unary(op, type);
    }
  }
  if (group == "complex") {
    for (const char* type : {"c64", "c128"}) {
      for (const char* op : {"add", "subtract", "multiply"}) binary(op, type);
      for (const char* op : {"negate", "exponential", "log", "sign"}) unary(op, type);
      // Inline from libdevice's real functions (llvm_ir/complex_math.h).
      for (const char* op : {"divide", "power", "atan2"}) binary(op, type);
      for (const char* op : {"sqrt", "rsqrt", "sine", "cosine", "tan", "tanh", "sinh", "cosh",
                             "asin", "acos", "atan", "asinh", "acosh", "atanh",
                             "exponential-minus-one", "log-plus-one", "logistic"}) {
        unary(op, type);
      }
    }
    cases.push_back({"complex_parts_and_compare", module(R"(ENTRY e {
  x = f32[33] parameter(0)
  y = f32[33] parameter(1)
  z = c64[33] complex(x, y)
  w = c64[33] multiply(z, z)
  a = f32[33] abs(w)
  r = f32[33] real(w)
  i = f32[33] imag(w)
  eq = pred[33] compare(z, w), direction=EQ
  s = f32[33] add(r, i)
  t = f32[33] select(eq, a, s)
  ROOT o = c128[33] convert(z)
})")});
    cases.push_back({"complex_reduce", module(R"(add {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}
ENTRY e {
  x = c64[8,100] parameter(0)
  zero = c64[] constant((0, 0))
  ROOT r = c64[8] reduce(x, zero), dimensions={1}, to_apply=add
})")});
    return cases;
  }
  if (group != "other") return cases;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"f32", "s32"},
                                                                                 {"f32", "u8"},
                                                                                 {"f32", "s64"},
                                                                                 {"f64", "u64"},
                                                                                 {"s32", "f32"},
                                                                                 {"u64", "f64"},
                                                                                 {"f64", "f16"},
                                                                                 {"f32", "bf16"},
                                                                                 {"bf16", "f32"},
                                                                                 {"f16", "f64"},
                                                                                 {"pred", "f32"},
                                                                                 {"f32", "pred"},
                                                                                 {"s8", "s64"},
                                                                                 {"u32", "s8"}}) {
    convert(from, to);
  }
  cases.push_back({"compare_select", module(R"(ENTRY e {
  x = f32[33] parameter(0)
  y = f32[33] parameter(1)
  p = pred[33] compare(x, y), direction=GE
  ROOT r = f32[33] select(p, x, y)
})")});
  cases.push_back({"clamp_is_finite", module(R"(ENTRY e {
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  x = f32[33] parameter(0)
  c = f32[33] clamp(lo, x, hi)
  f = pred[33] is-finite(x)
  z = f32[33] broadcast(lo), dimensions={}
  ROOT r = f32[33] select(f, c, z)
})")});
  cases.push_back({"bitcast_convert_reduce_precision", module(R"(ENTRY e {
  x = f32[33] parameter(0)
  p = f32[33] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  ROOT r = s32[33] bitcast-convert(p)
})")});
  cases.push_back({"index_remapping", module(R"(ENTRY e {
  x = f32[6,20] parameter(0)
  y = f32[3,20] parameter(1)
  r = f32[4,5,6] reshape(x)
  t = f32[6,4,5] transpose(r), dimensions={2,0,1}
  v = f32[6,4,5] reverse(t), dimensions={0,2}
  c = f32[9,20] concatenate(x, y), dimensions={0}
  s = f32[4,5] slice(c), slice={[1:9:2], [0:20:4]}
  z = f32[] constant(0)
  p = f32[6,4,5] pad(s, z), padding=1_1x0_0_0x0_0_0
  i = f32[6,4,5] iota(), iota_dimension=1
  a = f32[6,4,5] add(v, p)
  ROOT o = f32[6,4,5] add(a, i)
})")});
  cases.push_back({"dynamic_slice_update", module(R"(ENTRY e {
  x = f32[8,8] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  d = f32[8,8] dynamic-update-slice(x, u, i, j)
  s = f32[4,4] dynamic-slice(d, j, i), dynamic_slice_sizes={4,4}
  ROOT r = f32[4,4] negate(s)
})")});
  cases.push_back({"gather", module(R"(ENTRY e {
  x = f32[5,7] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}
})")});
  cases.push_back({"reduce_window_map_constant", module(R"(max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
twice {
  a = f32[] parameter(0)
  ROOT s = f32[] add(a, a)
}
ENTRY e {
  x = f32[16,16] parameter(0)
  ninf = f32[] constant(-inf)
  w = f32[8,8] reduce-window(x, ninf), window={size=2x2 stride=2x2}, to_apply=max
  k = f32[8,8] constant({...})
  m = f32[8,8] map(w), dimensions={0,1}, to_apply=twice
  ROOT r = f32[8,8] add(m, k)
})")});
  cases.push_back({"variadic_reduce_argmax", module(R"(argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[10,30] parameter(0)
  i = s32[10,30] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[10], s32[10]) reduce(x, i, ninf, zero), dimensions={1}, to_apply=argmax
  v = f32[10] get-tuple-element(r), index=0
  k = s32[10] get-tuple-element(r), index=1
  ROOT t = (f32[10], s32[10]) tuple(v, k)
})")});
  return cases;
}

class PtxOpCoverageTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PtxOpCoverageTest, EveryOpIsValidPtxOrUnimplemented) {
  const bool have_ptxas = PtxasPath().ok();
  int accepted = 0;
  std::vector<std::string> unimplemented;
  const std::vector<Case> cases = Cases(GetParam());
  ASSERT_FALSE(cases.empty());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto module = ParseAndReturnUnverifiedModule(c.hlo);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << c.hlo;
    auto kernel = CompileLoopFusionToPtx(*(*module)->entry_computation(), "k");
    if (!kernel.ok()) {
      EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented) << kernel.status() << "\n"
                                                                          << c.hlo;
      unimplemented.push_back(absl::StrCat(c.name, ": ", kernel.status().message()));
      continue;
    }
    if (!have_ptxas) continue;
    auto cubin = AssemblePtx(kernel->ptx, "sm_90");
    EXPECT_TRUE(cubin.ok()) << cubin.status() << "\n" << c.hlo;
    if (cubin.ok()) ++accepted;
  }
  std::cout << "ptxas accepted " << accepted << " kernels; unimplemented: " << unimplemented.size()
            << "\n";
  for (const std::string& line : unimplemented) std::cout << "  " << line << "\n";
  if (!have_ptxas) GTEST_SKIP() << "ptxas not available: " << PtxasPath().status().message();
}

INSTANTIATE_TEST_SUITE_P(Groups, PtxOpCoverageTest,
                         ::testing::Values("f32", "f64", "f16", "bf16", "signed", "unsigned",
                                           "complex", "other"));

}  // namespace
}  // namespace axle::gpu
