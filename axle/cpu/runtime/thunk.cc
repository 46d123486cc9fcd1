//===- thunk.cc - One step of a CPU executable -----------------------------===//
#include "axle/cpu/runtime/thunk.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>

#include "absl/base/attributes.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "axle/base/alignment.h"

namespace axle::cpu {
namespace {

// A chunked fold (CompiledKernel::partials_bytes): its rows but the last
// are chunks, split one range per thread when the kernel touches
// KernelThunk::kMinParallelBytes or more; the last row, run after the
// join, combines the chunks' partial results, kept here meanwhile (or in
// the thread's CompiledKernel::PartialsBuffer past 1 KiB). Not
// inlined: its aligned 1 KiB of partial results in Execute's frame cost
// every other kernel's run (a while loop of small kernels: 20%).
ABSL_ATTRIBUTE_NOINLINE void RunChunkedFold(const CompiledKernel& kernel,
                                            absl::Span<const int64_t> operands,
                                            absl::Span<const int64_t> outputs,
                                            const ThunkContext& context, int threads) {
  absl::InlinedVector<void*, 8> buffers;
  int64_t bytes = 0;
  for (int64_t value : operands) buffers.push_back(context.address(value));
  for (int64_t value : outputs) buffers.push_back(context.address(value));
  if (context.value_bytes != nullptr) {
    for (int64_t value : operands) bytes += context.size_bytes(value);
    for (int64_t value : outputs) bytes += context.size_bytes(value);
  }
  if (threads < 2 || bytes < KernelThunk::kMinParallelBytes) {
    kernel.Run(buffers.data());
    return;
  }
  alignas(kBufferAlignment) std::array<std::byte, CompiledKernel::kStackPartialsBytes> stack;
  buffers.push_back(kernel.partials_bytes() <= CompiledKernel::kStackPartialsBytes
                        ? stack.data()
                        : CompiledKernel::PartialsBuffer(kernel.partials_bytes()));
  void** data = buffers.data();
  const int64_t chunks = kernel.outer_size() - 1;
  context.thread_pool->ParallelFor(
      chunks, (chunks + threads - 1) / threads,
      [&](int64_t begin, int64_t end) { kernel.RunRange(data, begin, end); }, context.max_threads);
  kernel.RunRange(data, chunks, chunks + 1);
}

}  // namespace

absl::Status KernelThunk::Execute(const ThunkContext& context) const {
  int threads = context.thread_pool == nullptr ? 1 : context.thread_pool->num_threads();
  if (context.max_threads > 0) threads = std::min(threads, context.max_threads);
  if (kernel_->partials_bytes() > 0) {
    RunChunkedFold(*kernel_, operand_values_, output_values_, context, threads);
    return absl::OkStatus();
  }
  absl::InlinedVector<void*, 8> buffers;
  buffers.reserve(operand_values_.size() + output_values_.size());
  int64_t bytes = 0;
  for (int64_t value : operand_values_) buffers.push_back(context.address(value));
  for (int64_t value : output_values_) buffers.push_back(context.address(value));
  const int64_t rows = kernel_->outer_size();
  if (threads < 2 || context.value_bytes == nullptr || rows < 2) {
    kernel_->Run(buffers.data());
    return absl::OkStatus();
  }
  for (int64_t value : operand_values_) bytes += context.size_bytes(value);
  for (int64_t value : output_values_) bytes += context.size_bytes(value);
  bool compute_bound = false;
  if (bytes < kMinParallelBytes) {
    // Few bytes: inline, timed for the first runs; then split or not by
    // the shortest of those (ChooseSmallSplit).
    if (timed_runs_.load() < kTimedRuns) {
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
    const bool spinning_candidate = split_alignment_ == 0 &&
                                    expensive_elements_ >= kMinSpinningSplitElements &&
                                    context.thread_pool->WorkersSpinning();
    const SmallSplit split =
        ChooseSmallSplit(shortest_nanoseconds_.load(), spinning_candidate,
                         spinning_candidate && context.thread_pool->IdleWorkerSpinning());
    if (split == SmallSplit::kInline) {
      kernel_->Run(buffers.data());
      return absl::OkStatus();
    }
    if (split == SmallSplit::kBlocks) {
      const int64_t per_row = std::max<int64_t>(1, expensive_elements_ / rows);
      const int64_t min_rows = std::max<int64_t>(1, kMinSpinningBlockElements / per_row);
      void** data = buffers.data();
      context.thread_pool->ParallelFor(
          rows, min_rows, [&](int64_t begin, int64_t end) { kernel_->RunRange(data, begin, end); },
          context.max_threads);
      return absl::OkStatus();
    }
    compute_bound = true;
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
  void** data = buffers.data();
  context.thread_pool->ParallelFor(
      rows, min_rows, [&](int64_t begin, int64_t end) { kernel_->RunRange(data, begin, end); },
      context.max_threads);
  return absl::OkStatus();
}

KernelThunk::SmallSplit KernelThunk::ChooseSmallSplit(int64_t shortest_nanoseconds,
                                                      bool spinning_candidate,
                                                      bool worker_spinning) {
  if (spinning_candidate &&
      shortest_nanoseconds >=
          (worker_spinning ? kMinSpinningSplitNanoseconds : kMinWakingSplitNanoseconds)) {
    return SmallSplit::kBlocks;
  }
  if (shortest_nanoseconds >= kMinSplitNanoseconds) return SmallSplit::kOncePerThread;
  return SmallSplit::kInline;
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
