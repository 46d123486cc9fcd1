//===- thunk.cc - One step of a CPU executable -----------------------------===//
#include "axle/cpu/runtime/thunk.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>

#include "absl/container/inlined_vector.h"

namespace axle::cpu {

absl::Status KernelThunk::Execute(const ThunkContext& context) const {
  int threads = context.thread_pool == nullptr ? 1 : context.thread_pool->num_threads();
  if (context.max_threads > 0) threads = std::min(threads, context.max_threads);
  absl::InlinedVector<void*, 8> buffers;
  buffers.reserve(operand_values_.size() + output_values_.size());
  int64_t bytes = 0;
  for (int64_t value : operand_values_) buffers.push_back(context.address(value));
  for (int64_t value : output_values_) buffers.push_back(context.address(value));
  // A chunked fold (CompiledKernel::partials_bytes): its rows are the
  // chunks, and its last row, run after them, combines their partial
  // results (Run keeps them itself).
  const bool chunked = kernel_->partials_bytes() > 0;
  const int64_t rows = kernel_->outer_size() - (chunked ? 1 : 0);
  // Rows [0, rows) across the pool in ranges of at least `min_rows` (for a
  // chunked fold, one range per thread), then a chunked fold's combine.
  auto run_split = [&](int64_t min_rows) {
    alignas(64) std::array<std::byte, CompiledKernel::kMaxPartialsBytes> partials;
    if (chunked) {
      min_rows = (rows + threads - 1) / threads;
      buffers.push_back(partials.data());
    }
    void** data = buffers.data();
    context.thread_pool->ParallelFor(
        rows, min_rows, [&](int64_t begin, int64_t end) { kernel_->RunRange(data, begin, end); },
        context.max_threads);
    if (chunked) kernel_->RunRange(data, rows, rows + 1);
  };
  if (threads < 2 || !context.size_bytes || rows < 2) {
    kernel_->Run(buffers.data());
    return absl::OkStatus();
  }
  for (int64_t value : operand_values_) bytes += context.size_bytes(value);
  for (int64_t value : output_values_) bytes += context.size_bytes(value);
  // Inside a loop whose workers spin (ThreadPool::SpinScope), a small
  // kernel of many expensive elements splits across the pool.
  if (bytes < kMinParallelBytes && split_alignment_ == 0 &&
      expensive_elements_ >= kMinSpinningSplitElements && context.thread_pool->WorkersSpinning()) {
    const int64_t per_row = std::max<int64_t>(1, expensive_elements_ / rows);
    run_split(std::max<int64_t>(1, kMinSpinningBlockElements / per_row));
    return absl::OkStatus();
  }
  // Few bytes: inline, timed for the first runs; split once per thread
  // when even the shortest of those was long.
  const bool compute_bound = bytes < kMinParallelBytes && timed_runs_.load() >= kTimedRuns &&
                             shortest_nanoseconds_.load() >= kMinSplitNanoseconds;
  if (bytes < kMinParallelBytes && !compute_bound) {
    if (timed_runs_.load() >= kTimedRuns) {
      kernel_->Run(buffers.data());
      return absl::OkStatus();
    }
    const auto start = std::chrono::steady_clock::now();
    kernel_->Run(buffers.data());
    const int64_t nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - start)
                                    .count();
    int64_t shortest = shortest_nanoseconds_.load();
    while (nanoseconds < shortest &&
           !shortest_nanoseconds_.compare_exchange_weak(shortest, nanoseconds)) {
    }
    ++timed_runs_;
    return absl::OkStatus();
  }
  // Rows per block so that each block touches at least kMinBlockBytes, or
  // one (aligned) block per thread (SplitOncePerThread, compute-bound).
  const int64_t bytes_per_row = std::max<int64_t>(1, bytes / rows);
  int64_t min_rows = std::max<int64_t>(1, kMinBlockBytes / bytes_per_row);
  if (split_alignment_ > 0 || compute_bound) {
    const int64_t alignment = std::max<int64_t>(1, split_alignment_);
    const int64_t per_thread = (rows + threads - 1) / threads;
    min_rows = (per_thread + alignment - 1) / alignment * alignment;
  }
  run_split(min_rows);
  return absl::OkStatus();
}

void RunRowsInParallel(const CompiledKernel& kernel, void** buffers, const ThunkContext& context,
                       int64_t work_per_row) {
  constexpr int64_t kMinParallelWork = int64_t{1} << 18;
  constexpr int64_t kMinBlockWork = int64_t{1} << 16;
  const int64_t rows = kernel.outer_size();
  work_per_row = std::max<int64_t>(1, work_per_row);
  if (context.thread_pool == nullptr || rows < 2 || rows * work_per_row < kMinParallelWork) {
    kernel.Run(buffers);
    return;
  }
  const int64_t min_rows = std::max<int64_t>(1, kMinBlockWork / work_per_row);
  context.thread_pool->ParallelFor(
      rows, min_rows, [&](int64_t begin, int64_t end) { kernel.RunRange(buffers, begin, end); },
      context.max_threads);
}

}  // namespace axle::cpu
