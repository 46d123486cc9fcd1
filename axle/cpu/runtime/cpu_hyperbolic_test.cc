// acos, acosh, asin, asinh, atan, atanh, cosh and sinh on the cpu platform
// agree with the interpreter (f32 and f64, NaN outside the domain).
#include "absl/strings/str_cat.h"
#include "axle/core/literal_comparison.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

absl::StatusOr<Literal> RunOn(absl::string_view platform_name, const std::string& text,
                              const Literal& argument) {
  auto platform = PlatformUtil::GetPlatform(platform_name);
  if (!platform.ok()) return platform.status();
  auto client = ClientLibrary::GetOrCreateLocalClient(*platform);
  if (!client.ok()) return client.status();
  auto module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  auto executable = (*client)->Compile(std::move(*module), {});
  if (!executable.ok()) return executable.status();
  auto buffer = (*client)->LiteralToShapedBuffer(argument, 0);
  if (!buffer.ok()) return buffer.status();
  auto result = (*executable)->Run({&*buffer}, {});
  if (!result.ok()) return result.status();
  return (*client)->ShapedBufferToLiteral(*result);
}

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
    absl::StatusOr<Literal> expected = RunOn("interpreter", text, input);
    ASSERT_TRUE(expected.ok()) << expected.status();
    absl::StatusOr<Literal> actual = RunOn("cpu", text, input);
    ASSERT_TRUE(actual.ok()) << actual.status();
    absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-6, 1e-6));
    EXPECT_TRUE(near.ok()) << type << ": " << near;
  }
}

}  // namespace
}  // namespace axle
