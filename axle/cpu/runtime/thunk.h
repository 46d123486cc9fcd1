//===- thunk.h - One step of a CPU executable ------------------------------===//
//
// A CpuExecutable is a sequence of thunks run in order. Each thunk reads
// and writes array buffers named by value ids (see CpuProgram); at run time
// ThunkContext::address(value) gives a value's buffer for this run.
// Thunks are created at compile time and must be safe to run from several
// threads at once (each run has its own ThunkContext).
//
//   KernelThunk   a loop or reduction kernel compiled by the LLVM emitters;
//                 large ones are split by output rows across the intra-op
//                 thread pool (axle/base/thread_pool.h).
//   (oneDNN dot/convolution, custom calls, control flow: later thunks.)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_THUNK_H_
#define AXLE_CPU_RUNTIME_THUNK_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {

struct RngRunState;         // rng_thunk.h
struct CollectiveRunState;  // collective_thunk.cc
class LoopRun;              // loop_run.h
class ThunkWriter;          // thunk_serialization.h

struct ThunkContext {
  // The buffer of value `id` in this run, and its size in bytes: plain
  // tables indexed by value id (one load each, no call: a while loop of
  // tiny kernels looks them up millions of times a second).
  void* address(int64_t id) const { return addresses[id]; }
  int64_t size_bytes(int64_t id) const { return value_bytes[id]; }
  // Both tables cover every value of the program; the caller owns them
  // and keeps them alive and unchanged while the thunks run.
  void* const* addresses = nullptr;
  const int64_t* value_bytes = nullptr;
  const ExecutableRunOptions* run_options = nullptr;
  // The pool kernels may split across (null: run on the calling thread),
  // and how many of its threads this run may use (<= 0: all).
  ThreadPool* thread_pool = nullptr;
  int max_threads = 0;
  // The run's rng engine and rng-get-and-update-state counter, made by the
  // first rng thunk that runs (rng_thunk.h).
  mutable std::shared_ptr<RngRunState> rng;
  // How many times each collective-permute with _xla_send_recv_validation
  // ran in this run, made by the first one that runs (collective_thunk.cc).
  mutable std::shared_ptr<CollectiveRunState> collectives;
  // The running thunk's scratch memory (Thunk::scratch_bytes(): 64-byte
  // aligned, in the executable's arena, valid while the thunk runs), or
  // null with 0 bytes where the caller gave none.
  char* scratch = nullptr;
  int64_t scratch_bytes = 0;
  // The innermost while loop running the thunk (null outside loops, and in
  // a loop whose thunks do not all know their buffer uses): which values
  // stay unchanged while it runs (loop_run.h).
  mutable const LoopRun* loop = nullptr;
};

// Runs `kernel` over its outer rows with `buffers`: on the calling thread
// when there is no pool, one row, or less than 2^18 units of work
// (`work_per_row` each: multiply-adds for a dot or a convolution), else
// across the pool in blocks of at least 2^16 units.
void RunRowsInParallel(const CompiledKernel& kernel, void** buffers, const ThunkContext& context,
                       int64_t work_per_row);

class Thunk {
 public:
  explicit Thunk(std::string name) : name_(std::move(name)) {}
  virtual ~Thunk() = default;
  // The HLO instruction it implements (for errors and dumps).
  const std::string& name() const { return name_; }
  virtual absl::Status Execute(const ThunkContext& context) const = 0;

  // The values the thunk reads and writes, from which the executable
  // derives when a temporary's memory can be reused. A thunk that returns
  // nullopt (the default) may touch any value: then no temporary shares
  // memory with another.
  struct BufferUses {
    std::vector<int64_t> reads;
    std::vector<int64_t> writes;
  };
  virtual std::optional<BufferUses> buffer_uses() const { return std::nullopt; }
  // Bytes of scratch memory the thunk needs while it runs (reordered
  // operands, oneDNN's scratchpad). The executable lays it out in its arena
  // beside the temporaries (live only during the thunk), so a run allocates
  // nothing; see ThunkContext::scratch.
  virtual int64_t scratch_bytes() const { return 0; }
  // Pairs (operand value, output value) that the thunk computes correctly
  // also when the two share memory (it then skips copying the operand and
  // writes only what changes). ShareInPlaceOperands (hlo/analysis/in_place_sharing.h) lets them
  // share when the operand is dead after the thunk.
  virtual std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const { return {}; }
  // Writes the thunk for a loader that has no HLO (thunk_serialization.h):
  // its tag, name and what Execute uses. The default: Unimplemented, naming
  // the thunk.
  virtual absl::Status Serialize(ThunkWriter& writer) const;

 private:
  std::string name_;
};

// Runs a compiled kernel on operands then outputs (kernel signature in
// loop_kernel_emitter.h). Every output row of the outermost dimension is
// computed independently (a reduction kernel folds all reduced dimensions
// for each output element; a full reduction has one row), so any split of
// [0, outer_size) into ranges is exact. Kernels touching fewer than
// kMinParallelBytes run inline; larger ones get blocks of at least
// kMinBlockBytes. A kernel that touches few bytes but computes long (an
// argmax's compare-and-select chain over 16K elements: ~60 us) is timed
// while it runs inline: once its shortest run of the first few took
// kMinSplitNanoseconds or more, its runs are split into one range per
// thread. Only the schedule depends on the timing, never the results. A
// fold to a scalar cut into chunks (CompiledKernel::partials_bytes) splits
// its chunks, one range per thread, when it touches kMinParallelBytes or
// more, and combines them after the join.
class KernelThunk : public Thunk {
 public:
  // `in_place`: the (operand, output) values the kernel computes correctly
  // in one buffer (elementwise_access.h: InPlaceOutputCandidates).
  KernelThunk(std::string name, std::unique_ptr<CompiledKernel> kernel,
              std::vector<int64_t> operand_values, std::vector<int64_t> output_values,
              std::vector<std::pair<int64_t, int64_t>> in_place = {})
      : Thunk(std::move(name)),
        kernel_(std::move(kernel)),
        operand_values_(std::move(operand_values)),
        output_values_(std::move(output_values)),
        in_place_(std::move(in_place)) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, output_values_};
  }
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override { return in_place_; }
  absl::Status Serialize(ThunkWriter& writer) const override;
  // The loader's way back (thunk_serialization.cc).
  int64_t split_alignment() const { return split_alignment_; }
  int64_t expensive_elements() const { return expensive_elements_; }

  // For a kernel whose every call reads all of its input whatever its
  // range (a column reduction): split the rows into one range per thread,
  // each a multiple of `alignment` rows, instead of several small ranges
  // per thread (each of which would read the whole input).
  void SplitOncePerThread(int64_t alignment) { split_alignment_ = std::max<int64_t>(1, alignment); }

  // Elements of transcendental ops (exp, tanh, divide, ...) the kernel
  // computes per run (program_builder.cc counts them). While the pool's workers
  // spin (a while loop's body: ThreadPool::SpinScope), a kernel under
  // kMinParallelBytes with at least kMinSpinningSplitElements of them (an
  // RNN step's gates: microseconds of arithmetic on a few KiB) is split
  // into blocks of at least kMinSpinningBlockElements when the split pays
  // (ChooseSmallSplit).
  void SetExpensiveElements(int64_t elements) { expensive_elements_ = elements; }

  // How a kernel under kMinParallelBytes runs once its first kTimedRuns
  // inline runs are timed (`shortest_nanoseconds` the shortest): a
  // `spinning_candidate` (enough expensive elements, no split alignment, a
  // SpinScope open) in kBlocks from kMinSpinningSplitNanoseconds when a
  // worker is spinning now (`worker_spinning`: the split costs ~2 us) and
  // from kMinWakingSplitNanoseconds when one must be woken (~10 us: a GRU
  // step's gates, 9.5 us inline, took 18 us split with the worker asleep);
  // else kOncePerThread from kMinSplitNanoseconds; else kInline.
  enum class SmallSplit { kInline, kOncePerThread, kBlocks };
  static SmallSplit ChooseSmallSplit(int64_t shortest_nanoseconds, bool spinning_candidate,
                                     bool worker_spinning);

  static constexpr int64_t kMinParallelBytes = int64_t{1} << 20;
  static constexpr int64_t kMinBlockBytes = int64_t{256} << 10;
  // Inline runs timed before the kernel's schedule is fixed, and the
  // shortest of them from which it is split (waking a worker costs a few
  // microseconds; half of this is saved).
  static constexpr int64_t kTimedRuns = 3;
  static constexpr int64_t kMinSplitNanoseconds = 40'000;
  static constexpr int64_t kMinSpinningSplitNanoseconds = 5'000;
  static constexpr int64_t kMinWakingSplitNanoseconds = 20'000;
  static constexpr int64_t kMinSpinningSplitElements = 4096;
  static constexpr int64_t kMinSpinningBlockElements = 2048;

 private:
  std::unique_ptr<CompiledKernel> kernel_;
  std::vector<int64_t> operand_values_;
  std::vector<int64_t> output_values_;
  std::vector<std::pair<int64_t, int64_t>> in_place_;
  int64_t split_alignment_ = 0;  // 0: ranges by bytes (kMinBlockBytes)
  // Inline runs timed so far (saturating at kTimedRuns) and the shortest.
  mutable std::atomic<int64_t> timed_runs_{0};
  mutable std::atomic<int64_t> shortest_nanoseconds_{INT64_MAX};
  int64_t expensive_elements_ = 0;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_THUNK_H_
