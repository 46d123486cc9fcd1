#include "axle/frontends/lazy/run_threads.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "axle/base/thread_pool.h"
#include "axle/core/literal.h"
#include "axle/frontends/lazy/graph_executor.h"
#include "axle/frontends/lazy/ir.h"
#include "axle/frontends/lazy/metrics.h"
#include "gtest/gtest.h"

namespace axle::lazy {
namespace {

// A clock for RunThreadChoice::Next: each run's step takes `pool_ns` on the
// pool and `one_ns` on one thread.
struct Steps {
  int64_t now = 0;
  RunThreadChoice::Run Next(RunThreadChoice& choice, int64_t pool_ns, int64_t one_ns) {
    RunThreadChoice::Run run = choice.Next(now);
    now += run.threads == 1 ? one_ns : pool_ns;
    return run;
  }
};

// Runs one probe; checks its order.
void Probe(RunThreadChoice& choice, Steps& steps, int pool_threads, int64_t pool_ns,
           int64_t one_ns) {
  for (int i = 0; i < 2 * RunThreadChoice::kProbeRuns; ++i) {
    RunThreadChoice::Run run = steps.Next(choice, pool_ns, one_ns);
    EXPECT_EQ(run.slot, i % 2) << i;
    EXPECT_EQ(run.threads, i % 2 == 0 ? pool_threads : 1) << i;
  }
}

TEST(RunThreadChoiceTest, KeepsTheFasterSettingAndProbesAgain) {
  RunThreadChoice choice(4);
  Steps steps;
  RunThreadChoice::Run warm = steps.Next(choice, 2000, 1000);
  EXPECT_EQ(warm.threads, 4);
  EXPECT_EQ(warm.slot, -1);
  Probe(choice, steps, 4, /*pool_ns=*/2000, /*one_ns=*/1000);
  for (int64_t runs = 1 + 2 * RunThreadChoice::kProbeRuns; runs < 1 + RunThreadChoice::kCycleRuns;
       ++runs) {
    RunThreadChoice::Run run = steps.Next(choice, 2000, 1000);
    EXPECT_EQ(run.threads, 1);
    EXPECT_EQ(run.slot, -1);
  }
  EXPECT_EQ(choice.chosen_threads(), 1);
  // The next cycle probes again (the load changed: the pool wins now).
  Probe(choice, steps, 4, /*pool_ns=*/500, /*one_ns=*/1000);
  EXPECT_EQ(steps.Next(choice, 500, 1000).threads, 4);
  EXPECT_EQ(choice.chosen_threads(), 4);
}

TEST(RunThreadChoiceTest, MedianIgnoresOneSlowStep) {
  RunThreadChoice choice(2);
  Steps steps;
  steps.Next(choice, 800, 1000);
  // The pool's first step is disturbed; its others beat one thread's.
  steps.Next(choice, 100000, 1000);
  for (int i = 1; i < 2 * RunThreadChoice::kProbeRuns; ++i) steps.Next(choice, 800, 1000);
  EXPECT_EQ(steps.Next(choice, 800, 1000).threads, 2);
}

TEST(RunThreadChoiceTest, APoolOfOneHasNothingToChoose) {
  RunThreadChoice choice(1);
  for (int i = 0; i < 3 * RunThreadChoice::kProbeRuns; ++i) {
    RunThreadChoice::Run run = choice.Next(i);
    EXPECT_EQ(run.threads, 1);
    EXPECT_EQ(run.slot, -1);
  }
}

// The executor's runs alternate between the settings while it probes, and
// every run computes the same values.
TEST(RunThreadChoiceTest, ExecutorRunsOnBothSettingsWithEqualResults) {
  if (ThreadPool::Default().num_threads() < 2) GTEST_SKIP() << "a pool of one thread";
  GraphExecutor executor;
  std::vector<float> a(4096), b(4096);
  for (int i = 0; i < 4096; ++i) {
    a[i] = 0.25f * static_cast<float>(i % 97);
    b[i] = 1.0f - 0.125f * static_cast<float>(i % 13);
  }
  const int64_t before = metrics::CounterValue("OneThreadRuns").value_or(0);
  std::vector<float> first;
  for (int i = 0; i < 1 + 2 * RunThreadChoice::kProbeRuns; ++i) {
    auto leaf = [](const std::vector<float>& v) {
      return Value{
          Node::MakeDeviceData(std::make_shared<DeviceData>(LiteralUtil::CreateR1<float>(v))), 0};
    };
    Value x = leaf(a);
    Value y = leaf(b);
    const Shape& s = x.shape();
    Value graph = MakeValue("add", {MakeValue("mul", {x, y}, s), x}, s);
    auto result = executor.Execute({graph});
    ASSERT_TRUE(result.ok()) << result.status();
    absl::StatusOr<Literal> literal = (*result)[0]->ToLiteral();
    ASSERT_TRUE(literal.ok()) << literal.status();
    std::vector<float> values(literal->data<float>().begin(), literal->data<float>().end());
    if (i == 0) {
      first = values;
      EXPECT_EQ(first[5], a[5] * b[5] + a[5]);
    } else {
      EXPECT_EQ(values, first) << "run " << i;
    }
  }
  EXPECT_EQ(metrics::CounterValue("OneThreadRuns").value_or(0) - before,
            RunThreadChoice::kProbeRuns);
}

}  // namespace
}  // namespace axle::lazy
