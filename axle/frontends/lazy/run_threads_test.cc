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

// Runs one probe of `choice` whose runs take `pool_ns` on the pool and
// `one_ns` on one thread; checks the probe's order.
void Probe(RunThreadChoice& choice, int pool_threads, int64_t pool_ns, int64_t one_ns) {
  for (int i = 0; i < 2 * RunThreadChoice::kProbeRuns; ++i) {
    RunThreadChoice::Run run = choice.Next();
    ASSERT_GE(run.slot, 0) << i;
    EXPECT_EQ(run.threads, i % 2 == 0 ? pool_threads : 1) << i;
    choice.Record(run, run.threads == 1 ? one_ns : pool_ns);
  }
}

TEST(RunThreadChoiceTest, KeepsTheFasterSettingAndProbesAgain) {
  RunThreadChoice choice(4);
  RunThreadChoice::Run warm = choice.Next();
  EXPECT_EQ(warm.threads, 4);
  EXPECT_EQ(warm.slot, -1);
  Probe(choice, 4, /*pool_ns=*/2000, /*one_ns=*/1000);
  int64_t runs = 1 + 2 * RunThreadChoice::kProbeRuns;
  for (; runs < 1 + RunThreadChoice::kCycleRuns; ++runs) {
    RunThreadChoice::Run run = choice.Next();
    EXPECT_EQ(run.threads, 1);
    EXPECT_EQ(run.slot, -1);
  }
  EXPECT_EQ(choice.chosen_threads(), 1);
  // The next cycle probes again (the load changed: the pool wins now).
  Probe(choice, 4, /*pool_ns=*/500, /*one_ns=*/1000);
  EXPECT_EQ(choice.Next().threads, 4);
  EXPECT_EQ(choice.chosen_threads(), 4);
}

TEST(RunThreadChoiceTest, MedianIgnoresOneSlowRun) {
  RunThreadChoice choice(2);
  choice.Next();
  for (int i = 0; i < 2 * RunThreadChoice::kProbeRuns; ++i) {
    RunThreadChoice::Run run = choice.Next();
    // The pool's first run is disturbed; its others beat one thread.
    const int64_t ns = run.threads == 1 ? 1000 : (i == 0 ? 100000 : 800);
    choice.Record(run, ns);
  }
  EXPECT_EQ(choice.Next().threads, 2);
}

TEST(RunThreadChoiceTest, APoolOfOneHasNothingToChoose) {
  RunThreadChoice choice(1);
  for (int i = 0; i < 3 * RunThreadChoice::kProbeRuns; ++i) {
    RunThreadChoice::Run run = choice.Next();
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
