// The xla device from C++: ATen ops on AxleTensorImpl tensors, autograd, the
// CPU fallback, sync and the counters.
#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "axle/frontends/lazy/lazy_tensor.h"
#include "axle/frontends/lazy/metrics.h"
#include "gtest/gtest.h"

namespace axle::torch_device {
namespace {

const at::Device kXla(at::DeviceType::XLA, 0);

// PyTorch seeds its default generator at random in each process, so the
// tests' random inputs would differ from run to run. Every test starts from
// seed 0 instead: its inputs are the same whatever the filter, order or
// --gtest_repeat, and a failure reproduces.
class SeedEachTest : public testing::EmptyTestEventListener {
  void OnTestStart(const testing::TestInfo& /*test*/) override { at::manual_seed(0); }
};
const bool kSeedEachTest = [] {
  testing::UnitTest::GetInstance()->listeners().Append(new SeedEachTest());
  return true;
}();

int64_t Counter(const char* name) { return lazy::metrics::CounterValue(name).value_or(0); }

void ExpectClose(const at::Tensor& device_value, const at::Tensor& expected, double atol = 1e-5) {
  at::Tensor got = device_value.cpu();
  ASSERT_EQ(got.sizes(), expected.sizes());
  EXPECT_TRUE(at::allclose(got, expected, 1e-4, atol)) << got << "\nexpected\n" << expected;
}

TEST(TorchDeviceTest, TensorsLiveOnTheXlaDevice) {
  at::Tensor x = at::ones({2, 3}, at::device(kXla));
  EXPECT_EQ(x.device(), kXla);
  EXPECT_EQ(x.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_FALSE(x.has_storage());
  ExpectClose(x, at::ones({2, 3}));
}

TEST(TorchDeviceTest, ArithmeticMatchesCpu) {
  at::Tensor a = at::randn({4, 3});
  at::Tensor b = at::randn({3});
  at::Tensor x = a.to(kXla);
  at::Tensor y = b.to(kXla);
  ExpectClose((x + y) * 2 - x / 3, (a + b) * 2 - a / 3);
  ExpectClose(at::relu(x), at::relu(a));
  ExpectClose(x.mm(x.t()), a.mm(a.t()));
  ExpectClose(at::addmm(y, x.t(), x, 0.5, 2), at::addmm(b, a.t(), a, 0.5, 2));
  ExpectClose(x.sum(0), a.sum(0));
  ExpectClose(x.mean({1}, true), a.mean({1}, true));
  ExpectClose(x.view({3, 4}).transpose(0, 1), a.view({3, 4}).transpose(0, 1));
  ExpectClose(y.unsqueeze(0).expand({2, 3}), b.unsqueeze(0).expand({2, 3}));
  ExpectClose(at::gelu(x), at::gelu(a));
  ExpectClose(at::where(x > 0, x, y), at::where(a > 0, a, b));
  EXPECT_NEAR(x.sum().item<float>(), a.sum().item<float>(), 1e-4);
}

TEST(TorchDeviceTest, ScalarOperandsOfEachDtypeMatchCpu) {
  // Scalars other than 0 and 1 are parameters of the graph, converted to the
  // operation's dtype on the host.
  at::Tensor a = at::randn({2, 3});
  ExpectClose(a.to(kXla) * 2.5 + 0.3, a * 2.5 + 0.3);
  at::Tensor d = a.to(at::kDouble);
  ExpectClose(d.to(kXla) * 1.1 - 7, d * 1.1 - 7);
  at::Tensor h = a.to(at::kHalf);
  ExpectClose((h.to(kXla) * 2.5).to(at::kFloat), (h * 2.5).to(at::kFloat), 1e-2);
  at::Tensor bf = a.to(at::kBFloat16);
  ExpectClose((bf.to(kXla) * 3).to(at::kFloat), (bf * 3).to(at::kFloat), 1e-2);
  for (at::ScalarType type : {at::kLong, at::kInt, at::kShort, at::kChar, at::kByte}) {
    at::Tensor i = at::arange(6).reshape({2, 3}).to(type);
    at::Tensor got = (i.to(kXla) * 3 + 7).cpu();
    EXPECT_EQ(got.scalar_type(), type);
    EXPECT_TRUE(at::equal(got, i * 3 + 7)) << type << "\n" << got;
  }
  // An integer tensor and a real scalar: the result is real.
  at::Tensor i = at::arange(6).reshape({2, 3});
  ExpectClose(i.to(kXla) * 0.5, i * 0.5);
}

TEST(TorchDeviceTest, CrossEntropyAndItsGradientMatchCpu) {
  at::Tensor logits = at::randn({6, 5});
  at::Tensor target = at::tensor({0, 4, 2, 2, -100, 1}, at::kLong);
  at::Tensor weight = at::rand({5}) + 0.5;
  for (int64_t reduction : {at::Reduction::Mean, at::Reduction::Sum, at::Reduction::None}) {
    at::Tensor xc = logits.clone().set_requires_grad(true);
    at::Tensor xd = logits.to(kXla).set_requires_grad(true);
    at::Tensor lc = at::cross_entropy_loss(xc, target, weight, reduction);
    at::Tensor ld = at::cross_entropy_loss(xd, target.to(kXla), weight.to(kXla), reduction);
    ExpectClose(ld, lc);
    lc.sum().backward();
    ld.sum().backward();
    ExpectClose(xd.grad(), xc.grad());
  }
}

TEST(TorchDeviceTest, LayerNormSoftmaxEmbeddingAndGradientsMatchCpu) {
  at::Tensor a = at::randn({3, 4, 6});
  at::Tensor w = at::randn({6});
  at::Tensor b = at::randn({6});
  at::Tensor table = at::randn({10, 6});
  at::Tensor ids = at::tensor({1, 7, 7, 0, 3, 9}, at::kLong).view({2, 3});
  auto run = [&](const at::Device& device) {
    at::Tensor x = a.to(device).detach().set_requires_grad(true);
    at::Tensor wd = w.to(device).detach().set_requires_grad(true);
    at::Tensor bd = b.to(device).detach().set_requires_grad(true);
    at::Tensor td = table.to(device).detach().set_requires_grad(true);
    at::Tensor y = at::layer_norm(x, {6}, wd, bd, 1e-5);
    at::Tensor e = at::embedding(td, ids.to(device), /*padding_idx=*/7);
    at::Tensor s = at::softmax(y, -1) * e.unsqueeze(0).expand({3, 2, 3, 6}).sum(1).sum(1, true);
    s.sum().backward();
    return std::vector<at::Tensor>{y.detach(), s.detach(), x.grad(),
                                   wd.grad(),  bd.grad(),  td.grad()};
  };
  std::vector<at::Tensor> cpu = run(at::kCPU);
  std::vector<at::Tensor> xla = run(kXla);
  for (size_t i = 0; i < cpu.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectClose(xla[i], cpu[i]);
  }
}

TEST(TorchDeviceTest, SlicesSelectsCatAndTheirGradientsMatchCpu) {
  at::Tensor a = at::randn({5, 6});
  at::Tensor b = at::randn({5, 2});
  auto run = [&](const at::Device& device) {
    at::Tensor x = a.to(device).detach().set_requires_grad(true);
    at::Tensor y = b.to(device).detach().set_requires_grad(true);
    at::Tensor parts = at::cat({x.slice(1, 1, 6, 2), y, x.select(1, -1).unsqueeze(1)}, 1);
    at::Tensor chunks = at::cat(x.split(2, 1), 0);  // narrow -> slice
    (parts * parts).sum().backward();
    (chunks.sum(1) * 3).sum().backward();
    return std::vector<at::Tensor>{parts.detach(), chunks.detach(), x.grad(), y.grad()};
  };
  std::vector<at::Tensor> cpu = run(at::kCPU);
  std::vector<at::Tensor> xla = run(kXla);
  for (size_t i = 0; i < cpu.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectClose(xla[i], cpu[i]);
  }
}

TEST(TorchDeviceTest, BatchNormTrainingAndEvalMatchCpu) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{8, 4}, std::vector<int64_t>{3, 4, 5, 2}}) {
    at::Tensor a = at::randn(shape);
    at::Tensor w = at::randn({4});
    at::Tensor b = at::randn({4});
    // The gradient of the output. Not that of (y * y).sum(): 2y = 2(w*xhat
    // + b) makes the x gradient, w*invstd*(g - mean(g) - xhat*mean(g*xhat)),
    // cancel to 2*w^2*xhat*eps/var (~1e-4), the float error of terms of
    // size |w|*invstd*|g| that depends on the summation order: 2% of random
    // inputs failed on it.
    at::Tensor grad = at::randn(shape);
    auto run = [&](const at::Device& device) {
      at::Tensor x = a.to(device).detach().set_requires_grad(true);
      at::Tensor wd = w.to(device).detach().set_requires_grad(true);
      at::Tensor bd = b.to(device).detach().set_requires_grad(true);
      at::Tensor rm = at::zeros({4}).to(device);
      at::Tensor rv = at::ones({4}).to(device);
      at::Tensor y = at::batch_norm(x, wd, bd, rm, rv, /*training=*/true, 0.1, 1e-5, false);
      (y * grad.to(device)).sum().backward();
      at::Tensor e = at::batch_norm(x.detach(), wd.detach(), bd.detach(), rm, rv,
                                    /*training=*/false, 0.1, 1e-5, false);
      return std::vector<at::Tensor>{y.detach(), x.grad(), wd.grad(), bd.grad(), rm, rv, e};
    };
    std::vector<at::Tensor> cpu = run(at::kCPU);
    std::vector<at::Tensor> xla = run(kXla);
    for (size_t i = 0; i < cpu.size(); ++i) {
      SCOPED_TRACE(i);
      // A weight gradient element is a sum of terms: one that cancels to
      // near 0 carries the float error of the terms, which depends on the
      // summation order (threads). Absolute error is judged against the
      // gradient's scale.
      const double scale = std::max(1.0, cpu[i].abs().max().item<double>());
      ExpectClose(xla[i], cpu[i], 1e-5 * scale);
    }
  }
}

TEST(TorchDeviceTest, Conv2dAndItsGradientsMatchCpu) {
  at::Tensor a = at::randn({2, 3, 7, 6});
  at::Tensor w = at::randn({4, 3, 3, 3});
  at::Tensor b = at::randn({4});
  for (const std::array<int64_t, 3>& config :
       {std::array<int64_t, 3>{1, 1, 1}, {2, 1, 1}, {1, 0, 2}, {2, 2, 1}}) {
    const int64_t stride = config[0], pad = config[1], dil = config[2];
    SCOPED_TRACE(stride * 100 + pad * 10 + dil);
    auto run = [&](const at::Device& device) {
      at::Tensor x = a.to(device).detach().set_requires_grad(true);
      at::Tensor wd = w.to(device).detach().set_requires_grad(true);
      at::Tensor bd = b.to(device).detach().set_requires_grad(true);
      at::Tensor y = at::conv2d(x, wd, bd, {stride, stride}, {pad, pad}, {dil, dil});
      (y * y).sum().backward();
      return std::vector<at::Tensor>{y.detach(), x.grad(), wd.grad(), bd.grad()};
    };
    std::vector<at::Tensor> cpu = run(at::kCPU);
    std::vector<at::Tensor> xla = run(kXla);
    for (size_t i = 0; i < cpu.size(); ++i) {
      SCOPED_TRACE(i);
      // A weight gradient element is a sum of terms in the hundreds: one
      // that cancels to near 0 carries the float error of the terms, which
      // depends on the summation order (threads). Absolute error is judged
      // against the gradient's scale.
      const double scale = std::max(1.0, cpu[i].abs().max().item<double>());
      ExpectClose(xla[i], cpu[i], 1e-5 * scale);
    }
  }
}

TEST(TorchDeviceTest, InPlaceOpsAndSharedDetach) {
  at::Tensor x = at::zeros({3}, at::device(kXla));
  at::Tensor alias = x.detach();
  x.add_(at::ones({3}, at::device(kXla)), 2);
  x.mul_(3);
  ExpectClose(alias, at::full({3}, 6.0));  // detach shares the value
}

TEST(TorchDeviceTest, AutogradRunsOnTheDevice) {
  at::Tensor a = at::randn({3, 4});
  at::Tensor w = at::randn({4, 2});
  at::Tensor x = a.to(kXla);
  at::Tensor wx = w.to(kXla).set_requires_grad(true);
  at::Tensor wc = w.clone().set_requires_grad(true);
  at::relu(x.mm(wx)).sum().backward();
  at::relu(a.mm(wc)).sum().backward();
  ASSERT_TRUE(wx.grad().defined());
  EXPECT_EQ(wx.grad().device(), kXla);
  ExpectClose(wx.grad(), wc.grad());
}

TEST(TorchDeviceTest, UnloweredOpsFallBackToTheCpu) {
  at::Tensor a = at::tensor({3.0f, 1.0f, 2.0f});
  int64_t before = Counter("aten::sort");
  auto [values, indices] = at::sort(a.to(kXla));
  EXPECT_EQ(values.device(), kXla);
  ExpectClose(values, at::tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(Counter("aten::sort") - before, 1);
}

TEST(TorchDeviceTest, StepsCompileOnce) {
  at::Tensor w = at::ones({4}, at::device(kXla));
  ASSERT_TRUE(lazy::SyncLiveTensors().ok());
  int64_t uncached = Counter("UncachedCompile");
  for (int step = 0; step < 5; ++step) {
    w.mul_(at::scalar_tensor(1.5).to(kXla)).add_(1);
    ASSERT_TRUE(lazy::SyncLiveTensors().ok());
  }
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 1);
  float expected = 1;
  for (int step = 0; step < 5; ++step) expected = expected * 1.5f + 1;
  ExpectClose(w, at::full({4}, expected));
}

// An in-place update of a view updates its base and the base's other
// views, as on the CPU.
TEST(TorchDeviceTest, InPlaceUpdatesOfViewsReachTheirBase) {
  at::Tensor a = at::arange(24, at::kFloat).view({4, 6});
  at::Tensor x = a.to(kXla);
  at::Tensor row = x.select(0, 1);
  at::Tensor a_row = a.select(0, 1);
  x.select(1, 0).add_(1);
  a.select(1, 0).add_(1);
  x.view({3, 8}).mul_(2);
  a.view({3, 8}).mul_(2);
  x.t().slice(0, 1, 6, 2).zero_();
  a.t().slice(0, 1, 6, 2).zero_();
  ExpectClose(x, a);
  ExpectClose(row, a_row);
  ASSERT_TRUE(lazy::SyncLiveTensors().ok());
  row.sub_(3);  // after a step: the base is data again
  a_row.sub_(3);
  ExpectClose(x, a);
}

TEST(TorchDeviceTest, ErrorsAreClear) {
  at::Tensor x = at::ones({2, 2}, at::device(kXla));
  try {
    x.mm(at::ones({2, 2}));
    ADD_FAILURE() << "mm of xla and cpu tensors";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("on the xla device"), std::string::npos) << e.what();
  }
  try {
    x.expand({3, 2, 2}).add_(1);  // several elements would be one of x
    ADD_FAILURE() << "in-place update of an expanded view";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("in-place update of an expanded view"), std::string::npos)
        << e.what();
  }
  try {
    at::zeros({2}, at::device(kXla).dtype(at::kComplexFloat));
    ADD_FAILURE() << "complex on the xla device";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not support dtype"), std::string::npos) << e.what();
  }
}

// A Linear/ReLU/Linear MLP trained for 10 steps with SGD and momentum (the
// updates torch.optim.SGD makes), on the CPU and on the device.
std::vector<float> TrainMlp(const at::Device& device, bool sync) {
  at::manual_seed(0);
  std::vector<at::Tensor> params = {at::randn({16, 8}) * 0.3, at::randn({16}) * 0.1,
                                    at::randn({4, 16}) * 0.3, at::randn({4}) * 0.1};
  for (at::Tensor& p : params) p = p.to(device).set_requires_grad(true);
  std::vector<at::Tensor> momentum(params.size());
  std::vector<float> losses;
  for (int step = 0; step < 10; ++step) {
    at::Tensor x = at::randn({32, 8}).to(device);
    at::Tensor y = at::randn({32, 4}).to(device);
    for (at::Tensor& p : params) {
      if (p.grad().defined()) p.mutable_grad().zero_();
    }
    at::Tensor h = at::relu(at::linear(x, params[0], params[1]));
    at::Tensor loss = at::mse_loss(at::linear(h, params[2], params[3]), y);
    loss.backward();
    {
      at::NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i) {
        at::Tensor g = params[i].grad();
        if (!momentum[i].defined()) {
          momentum[i] = g.clone().detach();
        } else {
          momentum[i].mul_(0.9).add_(g);
        }
        params[i].add_(momentum[i], -0.05);
      }
    }
    if (sync) EXPECT_TRUE(lazy::SyncLiveTensors().ok());
    losses.push_back(loss.item<float>());
  }
  return losses;
}

TEST(TorchDeviceTest, MlpTrainsLikeTheCpuWithFewCompiles) {
  std::vector<float> cpu = TrainMlp(at::kCPU, false);
  int64_t uncached = Counter("UncachedCompile");
  std::vector<std::string> before = lazy::metrics::CounterNames();
  std::vector<float> xla = TrainMlp(kXla, true);
  ASSERT_EQ(cpu.size(), xla.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_NEAR(xla[i], cpu[i], 1e-3 * std::abs(cpu[i])) << "step " << i;
  }
  EXPECT_LE(Counter("UncachedCompile") - uncached, 3);
  for (const std::string& name : lazy::metrics::CounterNames()) {
    EXPECT_FALSE(name.rfind("aten::", 0) == 0 && name != "aten::sort") << name << " fell back";
  }
}

}  // namespace
}  // namespace axle::torch_device
