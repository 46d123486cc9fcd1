//===- gpu_modules_test_util.h - HLO modules several GPU tests run --------===//
//
// The counted while loop that gpu_compiler_test.cc, gpu_control_flow_test.cc
// and gpu_graph_test.cc each run: the state (s32[] i, f32[16] a, f32[16] b)
// starts at (0, x, y), the condition is i < 10 (10 trips, a count
// CountWhileTrips finds), and the body's root is (i + 1, next, a): the body
// swaps state leaves, so its root is stored by copies at its end.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_MODULES_TEST_UTIL_H_
#define AXLE_GPU_GPU_MODULES_TEST_UTIL_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace axle::gpu::test {

// What the entry returns: the loop's whole state, or its leaf 1 (`next`).
enum class LoopResult { kState, kNext };

// The counted swapping loop whose body computes `next` (f32[16]) from a and
// b by the instructions `body`; `computations` (a reducer the body calls)
// go before the loop's.
inline std::string CountedSwapLoop(absl::string_view computations, absl::string_view body,
                                   LoopResult result) {
  return absl::StrCat("HloModule counted\n", computations, R"(
cond {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  a = f32[16] get-tuple-element(s), index=1
  b = f32[16] get-tuple-element(s), index=2
)",
                      body, R"(
  ROOT t = (s32[], f32[16], f32[16]) tuple(i1, next, a)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  t = (s32[], f32[16], f32[16]) tuple(zero, x, y)
)",
                      result == LoopResult::kState
                          ? "  ROOT w = (s32[], f32[16], f32[16]) while(t), condition=cond, "
                            "body=body\n"
                          : "  w = (s32[], f32[16], f32[16]) while(t), condition=cond, body=body\n"
                            "  ROOT r = f32[16] get-tuple-element(w), index=1\n",
                      "}\n");
}

// The simplest such loop: next = a + b.
inline std::string WhileSwapModule(LoopResult result) {
  return CountedSwapLoop("", "  next = f32[16] add(a, b)\n", result);
}

}  // namespace axle::gpu::test

#endif  // AXLE_GPU_GPU_MODULES_TEST_UTIL_H_
