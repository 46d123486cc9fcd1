//===- thread_pool_test.cc - Tests of the intra-op thread pool -------------===//
#include "axle/base/thread_pool.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace axle {
namespace {

// Every index of [0, n) is visited exactly once.
void ExpectCoversOnce(ThreadPool& pool, int64_t n, int64_t min_block, int max_threads = 0,
                      ThreadPool::AfterJob after = ThreadPool::AfterJob::kSleep) {
  std::vector<std::atomic<int>> visits(n);
  pool.ParallelFor(
      n, min_block,
      [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, n);
        for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1);
      },
      max_threads, after);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1) << "index " << i << " of " << n;
}

TEST(ThreadPoolTest, CoversRangeOnceForManySizes) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.num_threads(), 4);
  for (int64_t n : {1, 2, 3, 7, 8, 9, 31, 100, 1000, 4097}) {
    for (int64_t min_block : {-5, 0, 1, 3, 64, 10000}) ExpectCoversOnce(pool, n, min_block);
  }
}

TEST(ThreadPoolTest, EmptyAndNegativeRangesRunNothing) {
  ThreadPool pool(2);
  int calls = 0;
  pool.ParallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
  pool.ParallelFor(-3, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPoolTest, OneThreadRunsInlineAsOneBlock) {
  ThreadPool pool(0);  // Treated as 1.
  EXPECT_EQ(pool.num_threads(), 1);
  std::vector<std::pair<int64_t, int64_t>> blocks;
  const std::thread::id caller = std::this_thread::get_id();
  pool.ParallelFor(100, 1, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    blocks.emplace_back(begin, end);
  });
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0], std::make_pair(int64_t{0}, int64_t{100}));
}

TEST(ThreadPoolTest, MinBlockBoundsTheBlockCount) {
  ThreadPool pool(4);
  std::atomic<int> blocks{0};
  std::atomic<int64_t> smallest{1 << 30};
  pool.ParallelFor(100, 40, [&](int64_t begin, int64_t end) {
    blocks.fetch_add(1);
    int64_t size = end - begin;
    int64_t current = smallest.load();
    while (size < current && !smallest.compare_exchange_weak(current, size)) {
    }
  });
  // ceil(100 / 40) = 3 blocks at most; blocks of ceil(100/3) = 34 except the last.
  EXPECT_LE(blocks.load(), 3);
  EXPECT_GE(smallest.load(), 32);
}

TEST(ThreadPoolTest, MaxThreadsOneRunsOnCaller) {
  ThreadPool pool(4);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  pool.ParallelFor(
      1000, 1,
      [&](int64_t, int64_t) {
        if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
      },
      /*max_threads=*/1);
  EXPECT_EQ(elsewhere.load(), 0);
  ExpectCoversOnce(pool, 1000, 1, /*max_threads=*/2);
}

TEST(ThreadPoolTest, NestedCallsRunInline) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> visits(size_t{64} * 64);
  EXPECT_FALSE(ThreadPool::InParallelRegion());
  pool.ParallelFor(64, 1, [&](int64_t begin, int64_t end) {
    EXPECT_TRUE(ThreadPool::InParallelRegion());
    for (int64_t i = begin; i < end; ++i) {
      const std::thread::id outer = std::this_thread::get_id();
      pool.ParallelFor(64, 1, [&](int64_t inner_begin, int64_t inner_end) {
        EXPECT_EQ(std::this_thread::get_id(), outer);
        for (int64_t j = inner_begin; j < inner_end; ++j) visits[i * 64 + j].fetch_add(1);
      });
    }
  });
  EXPECT_FALSE(ThreadPool::InParallelRegion());
  for (auto& v : visits) ASSERT_EQ(v.load(), 1);
}

TEST(ThreadPoolTest, ManyCallersAtOnce) {
  ThreadPool pool(2);
  constexpr int kCallers = 8;
  constexpr int64_t kN = 5000;
  std::vector<int64_t> sums(kCallers, 0);
  std::vector<std::thread> callers;
  callers.reserve(kCallers);
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        std::atomic<int64_t> sum{0};
        pool.ParallelFor(kN, 16, [&](int64_t begin, int64_t end) {
          int64_t local = 0;
          for (int64_t i = begin; i < end; ++i) local += i + c;
          sum.fetch_add(local);
        });
        if (sum.load() != kN * (kN - 1) / 2 + kN * c) return;
        sums[c] += 1;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(sums[c], 50) << "caller " << c;
}

TEST(ThreadPoolTest, WorkersHelpWhenIdle) {
  // With 2 threads and blocks that wait for each other, both threads must
  // take part (a pool that never woke its worker would hang here, so the
  // wait is bounded and the outcome asserted instead).
  ThreadPool pool(2);
  std::atomic<int> arrived{0};
  std::atomic<bool> saw_other{false};
  pool.ParallelFor(2, 1, [&](int64_t, int64_t) {
    arrived.fetch_add(1);
    for (int spin = 0; spin < 200000 && arrived.load() < 2; ++spin) std::this_thread::yield();
    if (arrived.load() == 2) saw_other = true;
  });
  EXPECT_TRUE(saw_other.load());
}

TEST(ThreadPoolTest, SpinScopesKeepResultsAndNest) {
  // Jobs back to back while workers spin between them (a while loop's
  // body), from several callers, then after the scopes close (workers
  // sleep again and must still be woken): every index once each time.
  ThreadPool pool(3);
  {
    ThreadPool::SpinScope outer(&pool);
    ThreadPool::SpinScope inner(&pool);
    ThreadPool::SpinScope none(nullptr);
    for (int round = 0; round < 200; ++round) ExpectCoversOnce(pool, 1 + round % 37, 1);
    std::vector<std::thread> callers;
    callers.reserve(3);
    for (int c = 0; c < 3; ++c) {
      callers.emplace_back([&] {
        ThreadPool::SpinScope scope(&pool);
        for (int round = 0; round < 50; ++round) ExpectCoversOnce(pool, 100, 4);
      });
    }
    for (std::thread& t : callers) t.join();
  }
  for (int round = 0; round < 20; ++round) ExpectCoversOnce(pool, 64, 1);
}

TEST(ThreadPoolTest, JobsThatAskWorkersToSpinAfter) {
  // Jobs whose workers then spin for the next (a run of split
  // convolutions), interleaved with ones whose workers sleep, from one
  // caller and from several: every index once each time.
  ThreadPool pool(3);
  for (int round = 0; round < 200; ++round) {
    ExpectCoversOnce(pool, 1 + round % 29, 1, 0,
                     round % 3 == 0 ? ThreadPool::AfterJob::kSleep : ThreadPool::AfterJob::kSpin);
  }
  std::vector<std::thread> callers;
  callers.reserve(3);
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        ExpectCoversOnce(pool, 100, 4, 0, ThreadPool::AfterJob::kSpin);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int round = 0; round < 20; ++round) ExpectCoversOnce(pool, 64, 1);
}

// IdleWorkerSpinning: never when jobs leave their workers asleep (no
// SpinScope, AfterJob::kSleep), nor while a SpinPause is open; in a
// SpinScope the worker that just ran a block spins for the next job (for
// up to kSpinMicroseconds: seen after some job).
TEST(ThreadPoolTest, IdleWorkerSpinningOnlyInScopesAndNeverWhilePaused) {
  ThreadPool pool(2);
  // Two blocks that wait for each other: the worker runs one of them.
  auto job_with_the_worker = [&pool] {
    std::atomic<int> started{0};
    pool.ParallelFor(2, 1, [&](int64_t, int64_t) {
      started.fetch_add(1);
      while (started.load() < 2) {
      }
    });
    EXPECT_EQ(started.load(), 2);
  };
  for (int round = 0; round < 20; ++round) {
    job_with_the_worker();
    EXPECT_FALSE(pool.IdleWorkerSpinning());
  }
  ThreadPool::SpinScope scope(&pool);
  {
    ThreadPool::SpinPause pause(&pool);
    ThreadPool::SpinPause none(nullptr);
    for (int round = 0; round < 20; ++round) {
      job_with_the_worker();
      EXPECT_FALSE(pool.IdleWorkerSpinning());
    }
  }
  // The spin lasts microseconds: on a loaded machine the caller may miss
  // it often, so it keeps trying (a bound on retries, not on speed).
  bool seen = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!seen && std::chrono::steady_clock::now() < give_up) {
    job_with_the_worker();
    for (int poll = 0; poll < 10000 && !seen; ++poll) seen = pool.IdleWorkerSpinning();
  }
  EXPECT_TRUE(seen);
}

// A TeamRunner on plain threads: records each call's team size and the
// threads that ran body().
std::atomic<int> team_calls{0};
std::atomic<int> team_threads_asked{0};
void RunOnStdThreads(int threads, absl::FunctionRef<void()> body) {
  team_calls.fetch_add(1);
  team_threads_asked.store(threads);
  std::vector<std::thread> team;
  team.reserve(threads);
  for (int i = 1; i < threads; ++i) team.emplace_back([&body] { body(); });
  body();
  for (std::thread& member : team) member.join();
}

// UseTeam: ParallelFor's blocks run on the runner's team, sized as the
// pool's job would be (at most the pool's threads, max_threads and the
// blocks), each index once; a ParallelFor inside a block runs inline;
// UseTeam(nullptr) goes back to the pool's workers.
TEST(ThreadPoolTest, UseTeamRunsBlocksOnTheRunnersTeam) {
  ThreadPool pool(3);
  EXPECT_FALSE(pool.UsesTeam());
  pool.UseTeam(&RunOnStdThreads);
  EXPECT_TRUE(pool.UsesTeam());
  team_calls = 0;
  for (int64_t n : {2, 3, 7, 100, 4097}) ExpectCoversOnce(pool, n, 1);
  EXPECT_EQ(team_calls.load(), 5);
  EXPECT_EQ(team_threads_asked.load(), 3);
  ExpectCoversOnce(pool, 100, 1, /*max_threads=*/2);
  EXPECT_EQ(team_threads_asked.load(), 2);
  ExpectCoversOnce(pool, 2, 1);
  EXPECT_EQ(team_threads_asked.load(), 2);
  // One block, or one thread: no team.
  team_calls = 0;
  ExpectCoversOnce(pool, 1, 1);
  ExpectCoversOnce(pool, 100, 1000);
  ExpectCoversOnce(pool, 100, 1, /*max_threads=*/1);
  EXPECT_EQ(team_calls.load(), 0);
  // Nested: the inner ParallelFor runs inline on the block's thread.
  team_calls = 0;
  std::atomic<int> inner_visits{0};
  pool.ParallelFor(4, 1, [&](int64_t begin, int64_t end) {
    EXPECT_TRUE(ThreadPool::InParallelRegion());
    for (int64_t i = begin; i < end; ++i) {
      pool.ParallelFor(8, 1, [&](int64_t b, int64_t e) { inner_visits.fetch_add(e - b); });
    }
  });
  EXPECT_EQ(inner_visits.load(), 32);
  EXPECT_EQ(team_calls.load(), 1);
  pool.UseTeam(nullptr);
  EXPECT_FALSE(pool.UsesTeam());
  team_calls = 0;
  ExpectCoversOnce(pool, 100, 1);
  EXPECT_EQ(team_calls.load(), 0);
}

// Callers on several threads at once share one team: a caller that finds
// it busy runs inline, and every range is still covered once.
TEST(ThreadPoolTest, UseTeamWithConcurrentCallers) {
  ThreadPool pool(2);
  pool.UseTeam(&RunOnStdThreads);
  std::vector<std::thread> callers;
  callers.reserve(4);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&pool] {
      for (int round = 0; round < 50; ++round) ExpectCoversOnce(pool, 64, 1);
    });
  }
  for (std::thread& t : callers) t.join();
  pool.UseTeam(nullptr);
}

TEST(ThreadPoolTest, ParseNumThreads) {
  EXPECT_EQ(*ThreadPool::ParseNumThreads("1"), 1);
  EXPECT_EQ(*ThreadPool::ParseNumThreads("16"), 16);
  for (const char* bad : {"", "0", "-2", "two", "3x", "100000"}) {
    absl::StatusOr<int> parsed = ThreadPool::ParseNumThreads(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("AXLE_NUM_THREADS"), absl::string_view::npos);
  }
  EXPECT_FALSE(ThreadPool::ParseNumThreads(nullptr).ok());
  EXPECT_GE(ThreadPool::DefaultNumThreads(), 1);
  EXPECT_GE(ThreadPool::Default().num_threads(), 1);
}

}  // namespace
}  // namespace axle
