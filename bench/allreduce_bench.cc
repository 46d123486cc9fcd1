//===- allreduce_bench.cc - Axle's all-reduce against Gloo's own -----------===//
//
//   allreduce-bench [PROCESSES=2] [ELEMENTS=16777216] [ITERATIONS=10]
//
// Forks PROCESSES processes on this machine; each connects twice over
// loopback TCP (Axle's Gloo communicator, and a plain Gloo context) and
// times, in the same run, an f32 sum all-reduce of ELEMENTS elements (16M =
// 64 MB) with
//   axle:  Communicator::AllReduce (fixed-order reduce-scatter + all-gather)
//   gloo:  gloo::AllreduceRingChunked (what Gloo's own benchmark runs)
// and the latency of a 1-element all-reduce with both. Process 0 prints
// the median milliseconds. A benchmark, not a test: nothing is asserted.
//
//   mpirun -n 2 allreduce-bench --mpi [ELEMENTS] [ITERATIONS]
//
// (when built with AXLE_MPI): the same over Open MPI, Axle's MPI
// communicator against MPI_Allreduce (MPI_SUM on MPI_FLOAT).
//
//===----------------------------------------------------------------------===//
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "axle/collectives/communicator.h"
#include "axle/collectives/gloo_communicator.h"
#include "gloo/allreduce_ring_chunked.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/transport/tcp/device.h"
#ifdef AXLE_HAVE_MPI
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "axle/collectives/mpi_communicator.h"
#endif

namespace {

// Median milliseconds of `a` and of `b`, timed alternately (a, b, a, b, ...)
// so that the load of a shared machine falls on both alike.
std::pair<double, double> MedianMs(int iterations, const std::function<void()>& a,
                                   const std::function<void()>& b) {
  std::vector<double> times_a, times_b;
  a();  // warm-up
  b();
  auto time = [](const std::function<void()>& body) {
    auto start = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  for (int i = 0; i < iterations; ++i) {
    times_a.push_back(time(a));
    times_b.push_back(time(b));
  }
  std::sort(times_a.begin(), times_a.end());
  std::sort(times_b.begin(), times_b.end());
  return {times_a[times_a.size() / 2], times_b[times_b.size() / 2]};
}

int Worker(int rank, int size, const std::string& dir, int64_t elements, int iterations) {
  axle::GlooOptions options;
  options.rank = rank;
  options.size = size;
  options.rendezvous_dir = dir + "/axle";
  auto communicator = axle::ConnectGloo(options);
  if (!communicator.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank,
                 std::string(communicator.status().message()).c_str());
    return 1;
  }
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(dir + "/gloo");
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);

  std::vector<int> group(size);
  for (int i = 0; i < size; ++i) group[i] = i;
  auto reducer = *axle::MakeReducer(axle::ReductionKind::kSum, axle::F32);
  std::vector<float> data(elements, 1.0f + rank), out(elements);
  std::vector<float> one(1, 1.0f), one_out(1);
  bool ok = true;
  auto axle_big = [&] {
    ok &= (*communicator)->AllReduce(group, data.data(), out.data(), elements, 4, reducer).ok();
  };
  auto axle_small = [&] {
    ok &= (*communicator)->AllReduce(group, one.data(), one_out.data(), 1, 4, reducer).ok();
  };
  std::vector<float> gloo_data(elements, 1.0f + rank), gloo_one(1, 1.0f);
  gloo::AllreduceRingChunked<float> gloo_big_algorithm(context, {gloo_data.data()},
                                                       static_cast<int>(elements));
  gloo::AllreduceRingChunked<float> gloo_small_algorithm(context, {gloo_one.data()}, 1);
  auto [axle_ms, gloo_ms] = MedianMs(iterations, axle_big, [&] { gloo_big_algorithm.run(); });
  auto [axle_small_ms, gloo_small_ms] =
      MedianMs(iterations * 20, axle_small, [&] { gloo_small_algorithm.run(); });
  double axle_us = 1000 * axle_small_ms, gloo_us = 1000 * gloo_small_ms;
  if (rank == 0) {
    double mb = elements * 4.0 / 1e6;
    std::printf(
        "all-reduce f32 sum, %d processes, %.1f MB: axle %.1f ms, gloo ring-chunked %.1f ms "
        "(axle/gloo %.2fx)\n",
        size, mb, axle_ms, gloo_ms, axle_ms / gloo_ms);
    std::printf("all-reduce of 1 f32: axle %.1f us, gloo ring-chunked %.1f us\n", axle_us, gloo_us);
  }
  return ok ? 0 : 1;
}

#ifdef AXLE_HAVE_MPI
// Run by every rank of mpirun: Axle's MPI communicator against MPI_Allreduce.
int MpiMain(int64_t elements, int iterations) {
  auto communicator = axle::ConnectMpi(std::chrono::seconds(600));
  if (!communicator.ok()) {
    std::fprintf(stderr, "%s\n", std::string(communicator.status().message()).c_str());
    return 1;
  }
  int rank = (*communicator)->rank(), size = (*communicator)->size();
  std::vector<int> group(size);
  for (int i = 0; i < size; ++i) group[i] = i;
  auto reducer = *axle::MakeReducer(axle::ReductionKind::kSum, axle::F32);
  std::vector<float> data(elements, 1.0f + rank), out(elements), mpi_out(elements);
  std::vector<float> one(1, 1.0f), one_out(1), mpi_one(1);
  bool ok = true;
  auto axle_big = [&] {
    ok &= (*communicator)->AllReduce(group, data.data(), out.data(), elements, 4, reducer).ok();
  };
  auto mpi_big = [&] {
    MPI_Allreduce(data.data(), mpi_out.data(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  };
  auto axle_small = [&] {
    ok &= (*communicator)->AllReduce(group, one.data(), one_out.data(), 1, 4, reducer).ok();
  };
  auto mpi_small = [&] {
    MPI_Allreduce(one.data(), mpi_one.data(), 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  };
  auto [axle_ms, mpi_ms] = MedianMs(iterations, axle_big, mpi_big);
  auto [axle_small_ms, mpi_small_ms] = MedianMs(iterations * 20, axle_small, mpi_small);
  if (rank == 0) {
    std::printf(
        "all-reduce f32 sum over MPI, %d processes, %.1f MB: axle %.1f ms, MPI_Allreduce %.1f ms "
        "(axle/mpi %.2fx)\n",
        size, elements * 4.0 / 1e6, axle_ms, mpi_ms, axle_ms / mpi_ms);
    std::printf("all-reduce of 1 f32 over MPI: axle %.1f us, MPI_Allreduce %.1f us\n",
                1000 * axle_small_ms, 1000 * mpi_small_ms);
  }
  return ok ? 0 : 1;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--mpi") {
#ifdef AXLE_HAVE_MPI
    int64_t elements = argc > 2 ? std::atoll(argv[2]) : (int64_t{1} << 24);
    int iterations = argc > 3 ? std::atoi(argv[3]) : 10;
    return MpiMain(elements, iterations);
#else
    std::fprintf(stderr, "allreduce-bench: built without MPI (AXLE_MPI)\n");
    return 1;
#endif
  }
  int size = argc > 1 ? std::atoi(argv[1]) : 2;
  int64_t elements = argc > 2 ? std::atoll(argv[2]) : (int64_t{1} << 24);
  int iterations = argc > 3 ? std::atoi(argv[3]) : 10;
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("axle-allreduce-bench-" + std::to_string(::getpid())))
                        .string();
  std::filesystem::create_directories(dir + "/axle");
  std::filesystem::create_directories(dir + "/gloo");
  std::vector<pid_t> children;
  for (int rank = 0; rank < size; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      int code = Worker(rank, size, dir, elements, iterations);
      std::fflush(stdout);
      _exit(code);
    }
    children.push_back(pid);
  }
  int result = 0;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 1;
  }
  std::filesystem::remove_all(dir);
  return result;
}
