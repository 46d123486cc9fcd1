//===- multi_device_reductions_test.cc - all-reduce over every kind and type ===//
//
// all-reduce and reduce-scatter among 3 cpu devices with every reduction
// XLA's all-reduce takes (sum, product, min, max; and, or, xor on pred and
// the integers), each also with its parameters swapped (`maximum(y, x)`),
// and user computations that are not one op, over every element type the
// runtimes reduce: pred, the 8..64-bit integers, f16, bf16, f32, f64, two
// f8 types, c64, c128. Each result must be, bit for bit, the interpreter's
// multi-participant mode (multi_device_test_util.h) and the fold
// ((v0 op v1) op v2) that a single-device `map` computes from the three
// devices' values: signed zeros, NaN, infinities and integer wrap-around
// included. A bf16 computation that is one op of its parameters folds in
// f32 and rounds once (XLA:CPU's promotion, all_reduce_promotion.h), so
// its reference map folds the values converted to f32.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/runtime/multi_device_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

constexpr int kDevices = 3;

// A reduction computation: `body` uses the scalar parameters x and y of
// type T and names its root r.
struct Computation {
  std::string name;
  std::string body;
  bool one_op = false;  // one binary op of x and y
};

// The element types, how a device's value of type T is made from its two
// arguments a and b (each T[6] from s64, u64 or f32), and the
// computations T takes.
struct TypeCase {
  std::string type;
  std::string argument;  // s64, u64 or f32
  std::string make;      // HLO lines defining v = T[6] from a and b
  std::vector<Computation> computations;
  bool finite = false;  // no infinities or NaN among the arguments
};

std::vector<Computation> Ops(const std::vector<std::string>& ops) {
  std::vector<Computation> result;
  for (const std::string& op : ops) {
    result.push_back({op, absl::StrCat("ROOT r = T[] ", op, "(x, y)"), true});
    result.push_back({op + "_swapped", absl::StrCat("ROOT r = T[] ", op, "(y, x)"), true});
  }
  return result;
}

// x * y + x: not commutative, so the order of the fold shows.
Computation MultiplyAdd() {
  return {"multiply_add", "m = T[] multiply(x, y)\n  ROOT r = T[] add(m, x)"};
}

std::vector<TypeCase> TypeCases() {
  const std::vector<std::string> arithmetic = {"add", "multiply", "minimum", "maximum"};
  const std::vector<std::string> integer = {"add", "multiply", "minimum", "maximum",
                                            "and", "or",       "xor"};
  std::vector<TypeCase> cases;
  auto integers = [&](const std::string& type, const std::string& argument) {
    TypeCase c{type, argument, "v = T[6] convert(a)", Ops(integer)};
    c.computations.push_back(MultiplyAdd());
    // max(x, y) - 2 * y, with a constant.
    c.computations.push_back(
        {"with_a_constant",
         "m = T[] maximum(x, y)\n  two = T[] constant(2)\n  t = T[] multiply(two, y)\n"
         "  ROOT r = T[] subtract(m, t)"});
    cases.push_back(std::move(c));
  };
  for (const char* type : {"s8", "s16", "s32", "s64"}) integers(type, "s64");
  for (const char* type : {"u8", "u16", "u32", "u64"}) integers(type, "u64");
  TypeCase pred{"pred", "s64",
                "z = s64[6] broadcast(zero), dimensions={}\n  v = T[6] compare(a, z), direction=GT",
                Ops({"and", "or", "xor", "minimum", "maximum"})};
  // x and not y.
  pred.computations.push_back({"and_not", "n = T[] not(y)\n  ROOT r = T[] and(x, n)"});
  cases.push_back(std::move(pred));
  for (const char* type : {"f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2"}) {
    TypeCase c{type, "f32", "v = T[6] convert(a)", Ops(arithmetic)};
    c.computations.push_back(MultiplyAdd());
    // A select on a comparison: the larger magnitude, x on ties.
    c.computations.push_back({"larger_magnitude",
                              "ax = T[] abs(x)\n  ay = T[] abs(y)\n"
                              "  lt = pred[] compare(ax, ay), direction=LT\n"
                              "  ROOT r = T[] select(lt, y, x)"});
    cases.push_back(std::move(c));
  }
  // Finite values: the cpu platform multiplies complex numbers by the
  // formula (as XLA's cpu backend does), the interpreter with std::complex,
  // which recovers infinities (C99 Annex G); they differ on products with
  // an infinity wherever they are computed, collectives or not.
  TypeCase c64{"c64", "f32", "v = T[6] complex(a, b)", Ops({"add", "multiply"}), true};
  c64.computations.push_back(MultiplyAdd());
  cases.push_back(std::move(c64));
  TypeCase c128{"c128", "f32",
                "ad = f64[6] convert(a)\n  bd = f64[6] convert(b)\n  v = T[6] complex(ad, bd)",
                Ops({"add", "multiply"}), true};
  c128.computations.push_back(MultiplyAdd());
  cases.push_back(std::move(c128));
  return cases;
}

// Device d's arguments a and b: signed zeros, NaN and infinities among the
// floats (unless the case wants finite values); values that wrap among the
// integers.
std::vector<Literal> Arguments(const TypeCase& c, int d) {
  const std::string& argument = c.argument;
  if (argument == "f32" && c.finite) {
    const std::vector<std::vector<float>> a = {{0.0f, -0.0f, 1.5f, -2.25f, 3.0f, 1e3f},
                                               {-0.0f, 0.0f, -1.5f, 0.375f, 2.0f, 1e-3f},
                                               {-0.0f, -0.0f, 2.5f, -2.25f, 1.0f, -0.5f}};
    std::vector<Literal> result;
    result.push_back(LiteralUtil::CreateR1<float>(a[d]));
    result.push_back(LiteralUtil::CreateR1<float>(a[(d + 1) % kDevices]));
    return result;
  }
  if (argument == "f32") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<std::vector<float>> a = {{0.0f, -0.0f, 1.5f, -2.25f, nan, 3.0f},
                                               {-0.0f, 0.0f, -1.5f, 0.375f, 2.0f, -inf},
                                               {-0.0f, -0.0f, 2.5f, -2.25f, 1.0f, 0.5f}};
    const std::vector<std::vector<float>> b = {{1.0f, -0.0f, 0.5f, 2.0f, -1.0f, 0.0f},
                                               {-3.0f, 0.0f, 0.25f, nan, 4.0f, 1.0f},
                                               {2.0f, -0.0f, -0.5f, 1.0f, inf, -2.0f}};
    std::vector<Literal> result;
    result.push_back(LiteralUtil::CreateR1<float>(a[d]));
    result.push_back(LiteralUtil::CreateR1<float>(b[d]));
    return result;
  }
  if (argument == "s64") {
    const std::vector<std::vector<int64_t>> a = {
        {-7, 3, 0, 120, std::numeric_limits<int64_t>::max(), 1 << 20},
        {5, -3, 0, 100, 2, 1 << 15},
        {-1, 2, 1, -90, 3, 70000}};
    std::vector<Literal> result;
    result.push_back(LiteralUtil::CreateR1<int64_t>(a[d]));
    result.push_back(LiteralUtil::CreateR1<int64_t>(a[(d + 1) % kDevices]));
    return result;
  }
  const std::vector<std::vector<uint64_t>> a = {
      {250, 3, 0, 0xFFFFu, std::numeric_limits<uint64_t>::max() - 1, 1u << 31},
      {7, 200, 1, 0x8001u, 3, 1u << 30},
      {9, 1, 255, 0x10000u, 5, 3}};
  std::vector<Literal> result;
  result.push_back(LiteralUtil::CreateR1<uint64_t>(a[d]));
  result.push_back(LiteralUtil::CreateR1<uint64_t>(a[(d + 1) % kDevices]));
  return result;
}

std::string ComputationsText(const TypeCase& c) {
  std::string text;
  for (const Computation& computation : c.computations) {
    absl::StrAppend(&text, computation.name,
                    " {\n  x = T[] parameter(0)\n  y = T[] parameter(1)\n  ", computation.body,
                    "\n}\n");
  }
  return text;
}

// Every computation's all-reduce and reduce-scatter of v on 3 replicas.
std::string CollectivesModule(const TypeCase& c) {
  std::string text =
      absl::StrCat("HloModule m, replica_count=3\n", ComputationsText(c),
                   "ENTRY e {\n  a = ", c.argument, "[6] parameter(0)\n  b = ", c.argument,
                   "[6] parameter(1)\n  zero = s64[] constant(0)\n  ", c.make, "\n");
  std::vector<std::string> results;
  for (const Computation& computation : c.computations) {
    const std::string& n = computation.name;
    absl::StrAppend(&text, "  ar_", n, " = T[6] all-reduce(v), replica_groups={}, to_apply=", n,
                    "\n  rs_", n, " = T[2] reduce-scatter(v), dimensions={0}, ",
                    "replica_groups={}, to_apply=", n, "\n");
    results.push_back(absl::StrCat("ar_", n));
    results.push_back(absl::StrCat("rs_", n));
  }
  std::vector<std::string> shapes;
  for (size_t i = 0; i < results.size(); ++i) shapes.push_back(i % 2 == 0 ? "T[6]" : "T[2]");
  absl::StrAppend(&text, "  ROOT t = (", absl::StrJoin(shapes, ", "), ") tuple(",
                  absl::StrJoin(results, ", "), ")\n}\n");
  return absl::StrReplaceAll(text, {{"T[", c.type + "["}});
}

// One device: the three devices' values folded with `map`, in order, and
// the fold's three pieces of 2 (what reduce-scatter gives each device).
std::string ReferenceModule(const TypeCase& c) {
  // bf16 one-op computations fold in f32: the same computations over f32,
  // named NAME_f32.
  const bool promoted = c.type == "bf16";
  std::string wide;
  if (promoted) {
    for (const Computation& computation : c.computations) {
      if (!computation.one_op) continue;
      absl::StrAppend(&wide, computation.name,
                      "_f32 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ",
                      absl::StrReplaceAll(computation.body, {{"T[", "f32["}}), "\n}\n");
    }
  }
  std::string text = absl::StrCat("HloModule reference\n", ComputationsText(c), wide, "ENTRY e {\n",
                                  "  zero = s64[] constant(0)\n");
  std::vector<std::string> results, shapes;
  for (int d = 0; d < kDevices; ++d) {
    std::string make =
        absl::StrReplaceAll(c.make, {{"ad ", absl::StrCat("ad", d, " ")},
                                     {"bd ", absl::StrCat("bd", d, " ")},
                                     {"(ad, bd)", absl::StrCat("(ad", d, ", bd", d, ")")},
                                     {"z ", absl::StrCat("z", d, " ")},
                                     {"(a, z)", absl::StrCat("(a", d, ", z", d, ")")},
                                     {"(a)", absl::StrCat("(a", d, ")")},
                                     {"(b)", absl::StrCat("(b", d, ")")},
                                     {"(a, b)", absl::StrCat("(a", d, ", b", d, ")")},
                                     {"v = ", absl::StrCat("v", d, " = ")}});
    absl::StrAppend(&text, "  a", d, " = ", c.argument, "[6] parameter(", 2 * d, ")\n  b", d, " = ",
                    c.argument, "[6] parameter(", 2 * d + 1, ")\n  ", make, "\n");
  }
  if (promoted) {
    for (int d = 0; d < kDevices; ++d) {
      absl::StrAppend(&text, "  w", d, " = f32[6] convert(v", d, ")\n");
    }
  }
  for (const Computation& computation : c.computations) {
    const std::string& n = computation.name;
    if (promoted && computation.one_op) {
      absl::StrAppend(&text, "  m01_", n, " = f32[6] map(w0, w1), dimensions={0}, to_apply=", n,
                      "_f32\n  w_", n, " = f32[6] map(m01_", n,
                      ", w2), dimensions={0}, to_apply=", n, "_f32\n  f_", n, " = T[6] convert(w_",
                      n, ")\n");
    } else {
      absl::StrAppend(&text, "  m01_", n, " = T[6] map(v0, v1), dimensions={0}, to_apply=", n,
                      "\n  f_", n, " = T[6] map(m01_", n, ", v2), dimensions={0}, to_apply=", n,
                      "\n");
    }
    results.push_back(absl::StrCat("f_", n));
    shapes.push_back("T[6]");
    for (int d = 0; d < kDevices; ++d) {
      absl::StrAppend(&text, "  s", d, "_", n, " = T[2] slice(f_", n, "), slice={[", 2 * d, ":",
                      2 * d + 2, "]}\n");
      results.push_back(absl::StrCat("s", d, "_", n));
      shapes.push_back("T[2]");
    }
  }
  absl::StrAppend(&text, "  ROOT t = (", absl::StrJoin(shapes, ", "), ") tuple(",
                  absl::StrJoin(results, ", "), ")\n}\n");
  return absl::StrReplaceAll(text, {{"T[", c.type + "["}});
}

TEST(CpuMultiDeviceReductions, EveryKindOverEveryTypeIsTheInOrderFold) {
  for (const TypeCase& c : TypeCases()) {
    SCOPED_TRACE(c.type);
    std::vector<std::vector<Literal>> args;
    std::vector<Literal> flat;
    for (int d = 0; d < kDevices; ++d) {
      args.push_back(Arguments(c, d));
      for (Literal& literal : Arguments(c, d)) flat.push_back(std::move(literal));
    }
    std::vector<Literal> results = testing::RunBoth(CollectivesModule(c), args);
    ASSERT_EQ(results.size(), static_cast<size_t>(kDevices)) << CollectivesModule(c);
    absl::StatusOr<Literal> reference = testing::RunOn("interpreter", ReferenceModule(c), flat);
    ASSERT_TRUE(reference.ok()) << reference.status() << "\n" << ReferenceModule(c);
    for (size_t k = 0; k < c.computations.size(); ++k) {
      SCOPED_TRACE(c.computations[k].name);
      const auto first = static_cast<int64_t>(k) * (1 + kDevices);
      const Literal& fold = reference->tuple_element(first);
      for (int d = 0; d < kDevices; ++d) {
        const Literal& all_reduce = results[d].tuple_element(static_cast<int64_t>(2 * k));
        EXPECT_EQ(all_reduce, fold) << "device " << d << ": " << all_reduce << " vs " << fold;
        const Literal& piece = reference->tuple_element(first + 1 + d);
        const Literal& reduce_scatter = results[d].tuple_element(static_cast<int64_t>(2 * k + 1));
        EXPECT_EQ(reduce_scatter, piece)
            << "device " << d << ": " << reduce_scatter << " vs " << piece;
      }
    }
  }
}

}  // namespace
}  // namespace axle
