// acos, acosh, asin, asinh, atan, atanh, cosh and sinh on the cpu platform
// agree with the interpreter (f32 and f64, NaN outside the domain).
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(CpuHyperbolicTest, AgreesWithTheInterpreter) {
  for (const char* type : {"f32", "f64"}) {
    std::string text = absl::StrCat("HloModule m\nENTRY e {\n  p = ", type, "[9] parameter(0)\n");
    int i = 0;
    std::string names;
    for (const char* op : {"acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh"}) {
      absl::StrAppend(&text, "  r", i, " = ", type, "[9] ", op, "(p)\n");
      absl::StrAppend(&names, i == 0 ? "" : ", ", "r", i);
      ++i;
    }
    std::string tuple_type = "(";
    for (int j = 0; j < i; ++j) absl::StrAppend(&tuple_type, j == 0 ? "" : ", ", type, "[9]");
    absl::StrAppend(&text, "  ROOT t = ", tuple_type, ") tuple(", names, ")\n}\n");
    Literal input(ShapeUtil::MakeShape(std::string(type) == "f32" ? F32 : F64, {9}));
    const double values[] = {-2.0, -0.9, -0.25, 0.0, 0.3, 0.99, 1.0, 1.7, 4.0};
    for (int j = 0; j < 9; ++j) input.SetFromDouble(j, values[j]);
    SCOPED_TRACE(type);
    std::vector<Literal> arguments;
    arguments.push_back(std::move(input));
    testing::ExpectCpuAgrees(text, arguments, ErrorSpec(1e-6, 1e-6));
  }
}

}  // namespace
}  // namespace axle
