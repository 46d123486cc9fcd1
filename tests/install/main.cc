// A user program written against XLA's API and include paths, built against
// an installed Axle (see CMakeLists.txt beside it): it registers a custom-call
// target, builds a computation with XlaBuilder that calls it, prints the HLO
// and runs it on the interpreter. Exit code 0 when the values are right.

#include <cstdio>
#include <vector>

#include "axle/runtime/host_custom_call.h"
#include "xla/client/xla_builder.h"
#include "xla/literal_util.h"
#include "xla/service/custom_call_target_registry.h"

// out[i] = 2 * (x[i] + y[i]), for f32[4] operands.
void AddThenDouble(void* out, const void** in) {
  float* result = static_cast<float*>(out);
  const float* x = static_cast<const float*>(in[0]);
  const float* y = static_cast<const float*>(in[1]);
  for (int i = 0; i < 4; ++i) result[i] = 2.0f * (x[i] + y[i]);
}
XLA_REGISTER_CUSTOM_CALL_TARGET(AddThenDouble, "Host");

int main() {
  const xla::Shape vector = xla::ShapeUtil::MakeShape(xla::F32, {4});
  const xla::Shape scalar = xla::ShapeUtil::MakeShape(xla::F32, {});

  xla::XlaBuilder add_builder("add");
  xla::Add(xla::Parameter(&add_builder, 0, scalar, "a"),
           xla::Parameter(&add_builder, 1, scalar, "b"));
  absl::StatusOr<xla::XlaComputation> add = add_builder.Build();
  if (!add.ok()) {
    std::fprintf(stderr, "building add: %s\n", add.status().ToString().c_str());
    return 1;
  }

  // (AddThenDouble(x, y) + [1, 2, 3, 4], sum of it).
  xla::XlaBuilder builder("install_example");
  xla::XlaOp x = xla::Parameter(&builder, 0, vector, "x");
  xla::XlaOp y = xla::Parameter(&builder, 1, vector, "y");
  xla::XlaOp doubled = xla::CustomCall(&builder, "AddThenDouble", {x, y}, vector);
  xla::XlaOp shifted = xla::Add(doubled, xla::ConstantR1<float>(&builder, {1, 2, 3, 4}));
  xla::XlaOp sum = xla::Reduce(shifted, xla::ConstantR0<float>(&builder, 0), *add, {0});
  xla::Tuple(&builder, {shifted, sum});
  absl::StatusOr<xla::XlaComputation> computation = builder.Build();
  if (!computation.ok()) {
    std::fprintf(stderr, "building: %s\n", computation.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", computation->ToString().c_str());

  xla::Literal x_value = xla::LiteralUtil::CreateR1<float>({1, 2, 3, 4});
  xla::Literal y_value = xla::LiteralUtil::CreateR1<float>({0.5f, -1, 10, 0});
  axle::HloEvaluator evaluator;
  axle::InstallHostCustomCalls(&evaluator);
  absl::StatusOr<xla::Literal> result =
      evaluator.Evaluate(computation->module(), {&x_value, &y_value});
  if (!result.ok()) {
    std::fprintf(stderr, "running: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("result: %s\n", result->ToString().c_str());

  // 2 * (x + y) + [1, 2, 3, 4] = [4, 4, 29, 12]; the sum is 49.
  const std::vector<float> expected = {4, 4, 29, 12};
  const xla::Literal& shifted_value = result->tuple_element(0);
  bool ok = true;
  for (int i = 0; i < 4; ++i) ok = ok && shifted_value.data<float>()[i] == expected[i];
  ok = ok && result->tuple_element(1).data<float>()[0] == 49.0f;
  if (!ok) {
    std::fprintf(stderr, "wrong result, expected ([4, 4, 29, 12], 49)\n");
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
