// A user program written against XLA's API and include paths, built against
// an installed Axle (see CMakeLists.txt beside it): it registers a custom-call
// target, builds a computation with XlaBuilder that calls it, prints the HLO
// and compiles and runs it on the interpreter through xla::LocalClient, and
// checks that jaxlib's LAPACK targets came with Axle::axle. Exit code 0 when
// the values are right.

#include <cstdio>
#include <vector>

#include "axle/runtime/host_ffi.h"
#include "xla/client/client_library.h"
#include "xla/client/local_client.h"
#include "xla/client/xla_builder.h"
#include "xla/literal_util.h"
#include "xla/service/custom_call_target_registry.h"
#include "xla/service/platform_util.h"

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
  // Compile and run it the way XLA's LocalClient users do.
  auto platform = xla::PlatformUtil::GetPlatform("interpreter");
  if (!platform.ok()) {
    std::fprintf(stderr, "platform: %s\n", platform.status().ToString().c_str());
    return 1;
  }
  xla::LocalClient* client = xla::ClientLibrary::GetOrCreateLocalClient(*platform).value();
  xla::Shape shape = xla::ShapeUtil::MakeShape(xla::F32, {4});
  auto executables = client->Compile(*computation, {&shape, &shape}, xla::ExecutableBuildOptions());
  if (!executables.ok()) {
    std::fprintf(stderr, "compiling: %s\n", executables.status().ToString().c_str());
    return 1;
  }
  xla::ScopedShapedBuffer x_buffer = client->LiteralToShapedBuffer(x_value, 0).value();
  xla::ScopedShapedBuffer y_buffer = client->LiteralToShapedBuffer(y_value, 0).value();
  absl::StatusOr<xla::ScopedShapedBuffer> output =
      executables->front()->Run({&x_buffer, &y_buffer}, xla::ExecutableRunOptions());
  if (!output.ok()) {
    std::fprintf(stderr, "running: %s\n", output.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<xla::Literal> result = client->ShapedBufferToLiteral(*output);
  if (!result.ok()) {
    std::fprintf(stderr, "reading the result: %s\n", result.status().ToString().c_str());
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
  // Axle::axle brings jaxlib's LAPACK custom calls, registered for Host.
  if (!axle::FfiHandlerRegistry::Global()->Find("lapack_spotrf_ffi", "Host").ok()) {
    std::fprintf(stderr, "lapack_spotrf_ffi is not registered\n");
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
