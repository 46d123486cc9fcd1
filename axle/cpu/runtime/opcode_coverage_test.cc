//===- opcode_coverage_test.cc - Every interpreter opcode on cpu -----------===//
//
// For every opcode of the opcode table (axle/hlo/ir/hlo_opcode.h) that the
// interpreter runs, a small representative module: compiled on cpu, it must
// agree with the interpreter; for the opcodes listed in kUnimplementedOnCpu
// it must fail to compile with Unimplemented naming the op. That list only
// shrinks: an op on it that compiles fails the test until it is moved off.
// The opcodes a one-device module cannot run alone are listed in
// kNotRunByInterpreter: send/recv need several devices (multi_device_test.cc),
// infeed/outfeed a host that fills and drains the queues (feed_test.cc).
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/runtime/custom_call_registry.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// out = in[0] * 2 (f32[8]).
void CpuCoverageDouble(void* out, const void** in) {
  for (int i = 0; i < 8; ++i) static_cast<float*>(out)[i] = 2 * static_cast<const float*>(in[0])[i];
}
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCoverageDouble, "Host");

const std::set<std::string> kNotRunByInterpreter = {"send",      "send-done", "recv",
                                                    "recv-done", "infeed",    "outfeed"};

// Still Unimplemented on cpu (the message names the op).
const std::set<std::string> kUnimplementedOnCpu = {};

constexpr const char* kComputations = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
}
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
add_both {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  s = f32[] add(x, y)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
negate_scalar {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
)";

std::string Module(absl::string_view entry) {
  return absl::StrCat("HloModule m\n", kComputations, "\nENTRY e {\n", entry, "\n}\n");
}
std::string Unary(absl::string_view op, absl::string_view in, absl::string_view out,
                  absl::string_view attrs = "") {
  return Module(
      absl::StrCat("  p = ", in, "[8] parameter(0)\n  ROOT r = ", out, "[8] ", op, "(p)", attrs));
}
std::string Binary(absl::string_view op, absl::string_view in, absl::string_view out,
                   absl::string_view attrs = "") {
  return Module(absl::StrCat("  p = ", in, "[8] parameter(0)\n  q = ", in,
                             "[8] parameter(1)\n  ROOT r = ", out, "[8] ", op, "(p, q)", attrs));
}

// The representative module of each opcode, by its text name.
std::map<std::string, std::string> Cases() {
  std::map<std::string, std::string> cases;
  for (const char* op : {"abs",
                         "acos",
                         "acosh",
                         "asin",
                         "asinh",
                         "atan",
                         "atanh",
                         "cbrt",
                         "ceil",
                         "cosine",
                         "cosh",
                         "erf",
                         "exponential",
                         "exponential-minus-one",
                         "floor",
                         "log",
                         "log-plus-one",
                         "logistic",
                         "negate",
                         "round-nearest-afz",
                         "round-nearest-even",
                         "rsqrt",
                         "sign",
                         "sine",
                         "sinh",
                         "sqrt",
                         "tan",
                         "tanh",
                         "copy",
                         "real",
                         "imag"}) {
    cases[op] = Unary(op, "f32", "f32");
  }
  cases["is-finite"] = Unary("is-finite", "f32", "pred");
  cases["convert"] = Unary("convert", "f32", "s32");
  cases["bitcast-convert"] = Unary("bitcast-convert", "f32", "s32");
  cases["reduce-precision"] =
      Unary("reduce-precision", "f32", "f32", ", exponent_bits=5, mantissa_bits=10");
  for (const char* op : {"not", "count-leading-zeros", "popcnt"})
    cases[op] = Unary(op, "s32", "s32");
  for (const char* op : {"add", "atan2", "divide", "maximum", "minimum", "multiply", "power",
                         "remainder", "subtract"}) {
    cases[op] = Binary(op, "f32", "f32");
  }
  for (const char* op :
       {"and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical"}) {
    cases[op] = Binary(op, "s32", "s32");
  }
  cases["complex"] = Binary("complex", "f32", "c64");
  cases["compare"] = Binary("compare", "f32", "pred", ", direction=LT");
  cases["stochastic-convert"] = Module(
      "  p = f32[8] parameter(0)\n  q = u32[8] parameter(1)\n"
      "  ROOT r = s8[8] stochastic-convert(p, q)");
  cases["select"] = Module(
      "  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n"
      "  c = pred[8] compare(p, q), direction=GT\n  ROOT r = f32[8] select(c, p, q)");
  cases["clamp"] = Module(
      "  p = f32[8] parameter(0)\n  lo = f32[] constant(0.5)\n  hi = f32[] constant(1.25)\n"
      "  ROOT r = f32[8] clamp(lo, p, hi)");
  cases["parameter"] = Module("  ROOT p = f32[8] parameter(0)");
  cases["constant"] = Module("  ROOT c = f32[3] constant({1, 2.5, -3})");
  cases["iota"] = Module("  ROOT i = s32[2,4] iota(), iota_dimension=1");
  cases["broadcast"] =
      Module("  p = f32[3] parameter(0)\n  ROOT r = f32[2,3] broadcast(p), dimensions={1}");
  cases["reshape"] = Module("  p = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] reshape(p)");
  cases["bitcast"] = Module("  p = f32[2,3] parameter(0)\n  ROOT r = f32[6] bitcast(p)");
  cases["transpose"] =
      Module("  p = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] transpose(p), dimensions={1,0}");
  cases["reverse"] =
      Module("  p = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] reverse(p), dimensions={1}");
  cases["slice"] = Module("  p = f32[8] parameter(0)\n  ROOT r = f32[3] slice(p), slice={[1:7:2]}");
  cases["dynamic-slice"] = Module(
      "  p = f32[8] parameter(0)\n  i = s32[] constant(6)\n"
      "  ROOT r = f32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}");
  cases["dynamic-update-slice"] = Module(
      "  p = f32[8] parameter(0)\n  u = f32[3] parameter(1)\n  i = s32[] constant(2)\n"
      "  ROOT r = f32[8] dynamic-update-slice(p, u, i)");
  cases["concatenate"] = Module(
      "  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n"
      "  ROOT r = f32[5] concatenate(p, q), dimensions={0}");
  cases["pad"] = Module(
      "  p = f32[3] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[8] pad(p, z), padding=1_2_1");
  cases["get-dimension-size"] =
      Module("  p = f32[2,3] parameter(0)\n  ROOT r = s32[] get-dimension-size(p), dimensions={1}");
  cases["set-dimension-size"] = Module(
      "  p = f32[4] parameter(0)\n  n = s32[] constant(4)\n"
      "  ROOT r = f32[4] set-dimension-size(p, n), dimensions={0}");
  cases["dynamic-reshape"] = Module(
      "  p = f32[2,3] parameter(0)\n  a = s32[] constant(3)\n  b = s32[] constant(2)\n"
      "  ROOT r = f32[3,2] dynamic-reshape(p, a, b)");
  cases["tuple"] = Module(
      "  p = f32[8] parameter(0)\n  q = s32[2] parameter(1)\n  ROOT t = (f32[8], s32[2]) tuple(p, "
      "q)");
  cases["get-tuple-element"] = Module(
      "  p = f32[8] parameter(0)\n  q = s32[2] parameter(1)\n  t = (f32[8], s32[2]) tuple(p, q)\n"
      "  ROOT g = s32[2] get-tuple-element(t), index=1");
  cases["after-all"] = Module(
      "  p = f32[8] parameter(0)\n  t = token[] after-all()\n"
      "  ROOT r = f32[8] add-dependency(p, t)");
  cases["add-dependency"] = cases["after-all"];
  cases["opt-barrier"] = Module(
      "  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n  t = (f32[8], f32[8]) tuple(p, q)\n"
      "  b = (f32[8], f32[8]) opt-barrier(t)\n  g = f32[8] get-tuple-element(b), index=0\n"
      "  ROOT n = f32[8] negate(g)");
  cases["domain"] = Module(
      "  p = f32[8] parameter(0)\n  d = f32[8] domain(p), domain={kind=\"sharding\", "
      "entry={maximal device=0}, exit={maximal device=1}}\n  ROOT n = f32[8] negate(d)");
  cases["map"] = Module(
      "  p = f32[8] parameter(0)\n  ROOT r = f32[8] map(p), dimensions={0}, "
      "to_apply=negate_scalar");
  cases["reduce"] = Module(
      "  p = f32[2,4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[2] reduce(p, z), dimensions={1}, to_apply=add");
  cases["reduce-window"] = Module(
      "  p = f32[8] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[4] reduce-window(p, z), window={size=2 stride=2}, to_apply=add");
  cases["select-and-scatter"] = Module(
      "  p = f32[8] parameter(0)\n  s = f32[4] parameter(1)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[8] select-and-scatter(p, s, z), window={size=2 stride=2}, select=ge, "
      "scatter=add");
  cases["sort"] =
      Module("  p = f32[8] parameter(0)\n  ROOT r = f32[8] sort(p), dimensions={0}, to_apply=lt");
  cases["gather"] = Module(
      "  p = f32[4,3] parameter(0)\n  i = s32[2,1] constant({{2},{0}})\n"
      "  ROOT r = f32[2,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}");
  cases["scatter"] = Module(
      "  p = f32[4,3] parameter(0)\n  i = s32[2,1] constant({{2},{0}})\n  u = f32[2,3] "
      "parameter(1)\n"
      "  ROOT r = f32[4,3] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add");
  cases["dot"] = Module(
      "  p = f32[2,3] parameter(0)\n  q = f32[3,4] parameter(1)\n"
      "  ROOT r = f32[2,4] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  cases["convolution"] = Module(
      "  p = f32[1,8,1] parameter(0)\n  k = f32[3,1,1] parameter(1)\n"
      "  ROOT r = f32[1,6,1] convolution(p, k), window={size=3}, dim_labels=b0f_0io->b0f");
  cases["fusion"] = absl::StrCat(
      "HloModule m\nfused {\n  a = f32[8] parameter(0)\n  b = f32[8] parameter(1)\n"
      "  s = f32[8] add(a, b)\n  ROOT e = f32[8] exponential(s)\n}\n",
      "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n"
      "  ROOT r = f32[8] fusion(p, q), kind=kLoop, calls=fused\n}\n");
  cases["call"] = Module(
      "  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n"
      "  ROOT r = f32[] call(p, q), to_apply=add");
  cases["conditional"] = Module(
      "  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n  c = pred[] compare(p, q), "
      "direction=LT\n"
      "  ROOT r = f32[] conditional(c, p, q), true_computation=negate_scalar, "
      "false_computation=negate_scalar");
  cases["while"] = absl::StrCat(
      "HloModule m\ncond {\n  s = (s32[], f32[8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(3)\n"
      "  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  s = (s32[], f32[8]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
      "  v = f32[8] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n"
      "  j = s32[] add(i, one)\n  w = f32[8] multiply(v, v)\n"
      "  ROOT t = (s32[], f32[8]) tuple(j, w)\n}\n"
      "ENTRY e {\n  p = f32[8] parameter(0)\n  z = s32[] constant(0)\n"
      "  t = (s32[], f32[8]) tuple(z, p)\n  w = (s32[], f32[8]) while(t), condition=cond, "
      "body=body\n"
      "  ROOT r = f32[8] get-tuple-element(w), index=1\n}\n");
  cases["custom-call"] = Module(
      "  p = f32[8] parameter(0)\n"
      "  ROOT r = f32[8] custom-call(p), custom_call_target=\"CpuCoverageDouble\"");
  cases["rng"] = Module(
      "  lo = f32[] constant(0)\n  hi = f32[] constant(1)\n"
      "  ROOT r = f32[8] rng(lo, hi), distribution=rng_uniform");
  cases["rng-bit-generator"] = Module(
      "  s = u64[2] parameter(0)\n"
      "  ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_philox");
  cases["rng-get-and-update-state"] =
      Module("  ROOT r = u64[2] rng-get-and-update-state(), delta=4");
  cases["batch-norm-training"] = Module(
      "  x = f32[4,2] parameter(0)\n  s = f32[2] parameter(1)\n  o = f32[2] parameter(2)\n"
      "  ROOT r = (f32[4,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0.001, "
      "feature_index=1");
  cases["batch-norm-inference"] = Module(
      "  x = f32[4,2] parameter(0)\n  s = f32[2] parameter(1)\n  o = f32[2] parameter(2)\n"
      "  m = f32[2] parameter(3)\n  v = f32[2] parameter(4)\n"
      "  ROOT r = f32[4,2] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=1");
  cases["batch-norm-grad"] = Module(
      "  x = f32[4,2] parameter(0)\n  s = f32[2] parameter(1)\n  m = f32[2] parameter(2)\n"
      "  v = f32[2] parameter(3)\n  d = f32[4,2] parameter(4)\n"
      "  ROOT r = (f32[4,2], f32[2], f32[2]) batch-norm-grad(x, s, m, v, d), epsilon=0.001, "
      "feature_index=1");
  cases["fft"] = Module(
      "  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n  c = c64[8] complex(p, q)\n"
      "  ROOT r = c64[8] fft(c), fft_type=FFT, fft_length={8}");
  cases["cholesky"] = Module(
      "  p = f32[3,3] parameter(0)\n  a = f32[3,3] constant({{4,1,0.5},{1,3,1},{0.5,1,2}})\n"
      "  s = f32[3,3] add(a, p)\n  t = f32[3,3] transpose(s), dimensions={1,0}\n"
      "  y = f32[3,3] add(s, t)\n  ROOT r = f32[3,3] cholesky(y), lower=true");
  cases["triangular-solve"] = Module(
      "  a = f32[3,3] constant({{2,0,0},{1,3,0},{0.5,1,4}})\n  b = f32[3,4] parameter(0)\n"
      "  ROOT r = f32[3,4] triangular-solve(a, b), left_side=true, lower=true, "
      "transpose_a=NO_TRANSPOSE");
  cases["topk"] =
      Module("  p = f32[8] parameter(0)\n  ROOT r = (f32[2], s32[2]) topk(p), k=2, largest=true");
  cases["scan"] = Module(
      "  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = (f32[4], f32[]) scan(p, z), dimensions={0}, num_carries=1, to_apply=add_both");
  cases["ragged-dot"] = Module(
      "  a = f32[6,4] parameter(0)\n  b = f32[2,4,3] parameter(1)\n"
      "  g = s32[2] constant({2, 4})\n"
      "  ROOT r = f32[6,3] ragged-dot(a, b, g), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}");
  cases["scaled-dot"] = Module(
      "  a = f32[2,4] parameter(0)\n  b = f32[4,3] parameter(1)\n  sa = f32[2,1] parameter(2)\n"
      "  sb = f32[1,3] parameter(3)\n"
      "  ROOT r = f32[2,3] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}");
  cases["replica-id"] = Module("  ROOT r = u32[] replica-id()");
  cases["partition-id"] = Module("  ROOT r = u32[] partition-id()");
  cases["all-reduce"] = Module(
      "  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), replica_groups={}, "
      "to_apply=add");
  cases["all-reduce-done"] = Module(
      "  p = f32[8] parameter(0)\n"
      "  s = f32[8] all-reduce-start(p), replica_groups={}, to_apply=add\n"
      "  ROOT r = f32[8] all-reduce-done(s)");
  cases["all-gather"] = Module(
      "  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-gather(p), replica_groups={}, "
      "dimensions={0}");
  cases["all-gather-done"] = Module(
      "  p = f32[8] parameter(0)\n"
      "  s = (f32[8], f32[8]) all-gather-start(p), replica_groups={}, dimensions={0}\n"
      "  ROOT r = f32[8] all-gather-done(s)");
  cases["all-to-all"] = Module(
      "  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-to-all(p), replica_groups={}, "
      "dimensions={0}");
  cases["reduce-scatter"] = Module(
      "  p = f32[8] parameter(0)\n"
      "  ROOT r = f32[8] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add");
  cases["collective-broadcast"] = Module(
      "  p = f32[8] parameter(0)\n  ROOT r = f32[8] collective-broadcast(p), replica_groups={{0}}");
  cases["collective-permute"] = Module(
      "  p = f32[8] parameter(0)\n"
      "  ROOT r = f32[8] collective-permute(p), source_target_pairs={{0,0}}");
  cases["collective-permute-done"] = Module(
      "  p = f32[8] parameter(0)\n"
      "  s = (f32[8], f32[8]) collective-permute-start(p), source_target_pairs={{0,0}}\n"
      "  ROOT r = f32[8] collective-permute-done(s)");
  cases["ragged-all-to-all"] = Module(
      "  p = f32[8] parameter(0)\n  o = f32[8] parameter(1)\n  a = s64[1] constant({0})\n"
      "  n = s64[1] constant({8})\n"
      "  ROOT r = f32[8] ragged-all-to-all(p, o, a, n, a, n), replica_groups={{0}}");
  cases["copy-start"] =
      Module("  p = f32[8] parameter(0)\n  ROOT r = (f32[8], f32[8], u32[]) copy-start(p)");
  cases["copy-done"] = Module(
      "  p = f32[8] parameter(0)\n  s = (f32[8], f32[8], u32[]) copy-start(p)\n"
      "  ROOT r = f32[8] copy-done(s)");
  const std::string wrapped =
      "HloModule m\nwrapped {\n  a = f32[8] parameter(0)\n  ROOT n = f32[8] negate(a)\n}\n";
  cases["async-start"] =
      absl::StrCat(wrapped,
                   "ENTRY e {\n  p = f32[8] parameter(0)\n"
                   "  ROOT s = ((f32[8]), f32[8]) async-start(p), calls=wrapped\n}\n");
  cases["async-update"] = absl::StrCat(wrapped,
                                       "ENTRY e {\n  p = f32[8] parameter(0)\n"
                                       "  s = ((f32[8]), f32[8]) async-start(p), calls=wrapped\n"
                                       "  u = ((f32[8]), f32[8]) async-update(s)\n"
                                       "  ROOT d = f32[8] async-done(u)\n}\n");
  cases["async-done"] = absl::StrCat(wrapped,
                                     "ENTRY e {\n  p = f32[8] parameter(0)\n"
                                     "  s = ((f32[8]), f32[8]) async-start(p), calls=wrapped\n"
                                     "  ROOT d = f32[8] async-done(s)\n}\n");
  // A start op's module is its done op's (a start must have one user).
  for (const char* start : {"all-reduce", "all-gather", "collective-permute", "copy", "async"}) {
    cases[absl::StrCat(start, "-start")] = cases[absl::StrCat(start, "-done")];
  }
  return cases;
}

// Deterministic arguments for the entry's (array) parameters: floats in
// [0.25, 1.75], small integers, alternating preds.
absl::StatusOr<std::vector<Literal>> Arguments(absl::string_view text) {
  AXLE_ASSIGN_OR_RETURN(auto module, ParseAndReturnUnverifiedModule(text));
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : module->entry_computation()->parameter_instructions()) {
    const Shape& shape = parameter->shape();
    Literal f64(ShapeUtil::MakeShape(F64, shape.dimensions()));
    auto data = f64.data<double>();
    const int64_t number = cast<HloParameterInstruction>(parameter)->parameter_number();
    for (size_t i = 0; i < data.size(); ++i) {
      const int64_t k = static_cast<int64_t>(i) * 5 + number * 3;
      data[i] = primitive_util::IsIntegralType(shape.element_type()) ? k % 7
                : shape.element_type() == PRED                       ? k % 2
                                                                     : 0.25 + (k % 13) * 0.125;
    }
    AXLE_ASSIGN_OR_RETURN(Literal converted, f64.Convert(shape.element_type()));
    arguments.push_back(std::move(converted));
  }
  return arguments;
}

// The op an Unimplemented message names for `op`: a done or update op's
// module fails at its start op.
std::string NamedOp(const std::string& op) {
  for (absl::string_view suffix : {"-done", "-update"}) {
    if (absl::EndsWith(op, suffix)) return op.substr(0, op.size() - suffix.size());
  }
  return op;
}

// Compiles `text` on cpu; Unimplemented naming the op for the ops on
// kUnimplementedOnCpu, else the values the interpreter gives. Returns
// whether it was Unimplemented.
bool CheckOp(const std::string& op, const std::string& text) {
  absl::StatusOr<std::vector<Literal>> arguments = Arguments(text);
  if (!arguments.ok()) {
    ADD_FAILURE() << arguments.status() << "\n" << text;
    return false;
  }
  absl::StatusOr<std::unique_ptr<LocalExecutable>> compiled = testing::CompileOn("cpu", text);
  if (kUnimplementedOnCpu.count(op)) {
    if (compiled.ok()) {
      ADD_FAILURE() << op << " compiles on cpu now: take it off kUnimplementedOnCpu";
      return false;
    }
    EXPECT_TRUE(absl::IsUnimplemented(compiled.status())) << compiled.status();
    EXPECT_NE(compiled.status().message().find(NamedOp(op)), absl::string_view::npos)
        << compiled.status();
    return true;
  }
  if (!compiled.ok()) {
    ADD_FAILURE() << compiled.status() << "\n" << text;
    return false;
  }
  absl::StatusOr<Literal> cpu = testing::RunExecutable("cpu", **compiled, *arguments);
  absl::StatusOr<Literal> reference = testing::RunOn("interpreter", text, *arguments);
  if (!cpu.ok() || !reference.ok()) {
    ADD_FAILURE() << "cpu: " << cpu.status() << ", interpreter: " << reference.status();
    return false;
  }
  absl::Status near = LiteralsNear(*reference, *cpu, ErrorSpec(1e-5, 1e-5));
  EXPECT_TRUE(near.ok()) << near << "\n" << text;
  return false;
}

TEST(CpuOpcodeCoverage, EveryInterpreterOpcodeRunsOrIsUnimplementedByName) {
  const std::map<std::string, std::string> cases = Cases();
  int covered = 0, unimplemented = 0;
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    const std::string op(HloOpcodeString(static_cast<HloOpcode>(i)));
    if (kNotRunByInterpreter.count(op)) continue;
    SCOPED_TRACE(op);
    auto found = cases.find(op);
    if (found == cases.end()) {
      ADD_FAILURE() << "no representative module for " << op;
      continue;
    }
    if (CheckOp(op, found->second)) {
      ++unimplemented;
    } else {
      ++covered;
    }
  }
  std::printf(
      "opcodes on cpu: %d run (checked against the interpreter), %d Unimplemented, %zu not run "
      "by the interpreter\n",
      covered, unimplemented, kNotRunByInterpreter.size());
  EXPECT_EQ(covered + unimplemented + static_cast<int>(kNotRunByInterpreter.size()),
            kHloOpcodeCount);
}

}  // namespace
}  // namespace axle
