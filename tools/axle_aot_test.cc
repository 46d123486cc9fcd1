// The classes axle-aot generated at build time for testdata/mlp,
// testdata/cnn and testdata/external_data (its weights in a separate file)
// (tools/CMakeLists.txt), run against the JIT (onnx::Session)
// and the models' reference outputs; loading and running them compiles
// nothing (no module goes through LLVM, none is loaded from an object
// cache: the kernels are the object's own code).
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "axle/core/literal.h"
#include "axle/cpu/jit.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/frontends/onnx/session.h"
#include "cnn_aot.h"
#include "external_data_aot.h"
#include "gtest/gtest.h"
#include "mlp_aot.h"

namespace axle {
namespace {

template <typename Model>
void CheckAgainstJit(const std::string& name, Model& model) {
  ASSERT_TRUE(model.ok()) << model.error();
  static_assert(Model::kNumArgs == 1 && Model::kNumResults == 1);
  const std::string dir = std::string(AXLE_AOT_TESTDATA) + "/" + name;
  absl::StatusOr<Literal> input = onnx::LoadTensor(dir + "/test_data_set_0/input_0.pb");
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_EQ(input->element_count(), Model::kArg0Size);
  std::memcpy(model.arg0_data(), input->untyped_data(), input->size_bytes());
  ASSERT_TRUE(model.Run()) << model.error();

  absl::StatusOr<std::unique_ptr<onnx::Session>> session =
      onnx::Session::Load(dir + "/model.onnx", onnx::Session::Options());
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Literal> inputs;
  inputs.push_back(input->Clone());
  absl::StatusOr<std::vector<Literal>> jit = (*session)->Run(inputs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  ASSERT_EQ(jit->size(), 1u);
  const Literal& expected = (*jit)[0];
  ASSERT_EQ(expected.element_count(), Model::kResult0Size);
  ASSERT_EQ(expected.shape().dimensions().size(), Model::kResult0Shape.size());
  for (size_t d = 0; d < Model::kResult0Shape.size(); ++d) {
    EXPECT_EQ(expected.shape().dimensions()[d], Model::kResult0Shape[d]);
  }
  absl::StatusOr<Literal> reference = onnx::LoadTensor(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(reference.ok()) << reference.status();
  const auto* jit_data = static_cast<const typename Model::Result0Type*>(expected.untyped_data());
  const auto* ref_data = static_cast<const typename Model::Result0Type*>(reference->untyped_data());
  for (int64_t i = 0; i < Model::kResult0Size; ++i) {
    // The same HLO compiled by the same backend: the JIT's numbers exactly.
    ASSERT_EQ(model.result0_data()[i], jit_data[i]) << "element " << i;
    EXPECT_NEAR(model.result0_data()[i], ref_data[i], 1e-4) << "element " << i;
  }
  // A second run on new data agrees too (nothing kept from the first).
  for (int64_t i = 0; i < Model::kArg0Size; ++i) model.arg0_data()[i] *= 0.5F;
  ASSERT_TRUE(model.Run()) << model.error();
  Literal half = input->Clone();
  for (int64_t i = 0; i < Model::kArg0Size; ++i) {
    static_cast<float*>(half.untyped_data())[i] *= 0.5F;
  }
  inputs.clear();
  inputs.push_back(std::move(half));
  jit = (*session)->Run(inputs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  jit_data = static_cast<const typename Model::Result0Type*>((*jit)[0].untyped_data());
  for (int64_t i = 0; i < Model::kResult0Size; ++i) {
    ASSERT_EQ(model.result0_data()[i], jit_data[i]) << "element " << i;
  }
}

TEST(AxleAotTest, LoadingAndRunningCompilesNothing) {
  const cpu::JitStats before = cpu::GetJitStats();
  axle_aot_test::mlp mlp;
  ASSERT_TRUE(mlp.ok()) << mlp.error();
  ASSERT_TRUE(mlp.Run()) << mlp.error();
  axle_aot_test::cnn cnn;
  ASSERT_TRUE(cnn.ok()) << cnn.error();
  ASSERT_TRUE(cnn.Run()) << cnn.error();
  const cpu::JitStats after = cpu::GetJitStats();
  EXPECT_EQ(after.modules_optimized, before.modules_optimized);
  EXPECT_EQ(after.object_cache_hits, before.object_cache_hits);
  EXPECT_EQ(after.modules_optimized, 0);
}

TEST(AxleAotTest, MlpMatchesJit) {
  axle_aot_test::mlp model;
  CheckAgainstJit("mlp", model);
}

TEST(AxleAotTest, NamedAccessorsAreTheNumberedOnes) {
  axle_aot_test::mlp model;
  EXPECT_EQ(model.arg_x_data(), model.arg0_data());
  EXPECT_EQ(model.result_y_data(), model.result0_data());
  static_assert(std::is_same_v<axle_aot_test::mlp::Arg0Type, float>);
  static_assert(axle_aot_test::cnn::kArg0Shape.size() == 4);
}

TEST(AxleAotTest, CnnMatchesJit) {
  axle_aot_test::cnn model;
  CheckAgainstJit("cnn", model);
}

TEST(AxleAotTest, ExternalDataMatchesJit) {
  axle_aot_test::external_data model;
  CheckAgainstJit("external_data", model);
}

}  // namespace
}  // namespace axle
