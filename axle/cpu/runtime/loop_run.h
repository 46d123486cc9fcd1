//===- loop_run.h - What stays unchanged while a while loop runs ------------===//
//
// A thunk inside a while loop's body that derives something from an
// operand on every run (a small dot's rhs packed into panels: an RNN
// step's recurrent weight, carried through the loop state unchanged) can
// derive it once per loop run instead when the operand's memory does not
// change while the loop runs.
//
//   LoopRun             one run of a while loop, from its first condition
//                       to its exit (WhileThunk makes it, ThunkContext::loop
//                       shows the innermost one to the thunks it runs): a
//                       process-unique id, and whether a value's memory is
//                       left alone by every thunk of the body and condition.
//   LoopInvariantCache  a thunk's slots for what it derives from one
//                       operand, keyed by the loop run and the operand's
//                       address. The first run of the thunk in a loop run
//                       derives nothing (a thunk that runs once per loop
//                       would only pay for the copy); the second fills a
//                       slot when the operand is invariant, and later runs
//                       reuse it.
//
// Invariance is decided by memory, not by value ids: a value is invariant
// when its bytes overlap none of the values the loop's thunks write (their
// buffer_uses(), with the nested sequences'), so an output that took over
// an operand's memory (in_place_sharing.h) or any other sharing counts as a write.
// A loop whose thunks do not all know their uses has no LoopRun.
//
// Thread-safe: a loop run executes on one thread; concurrent runs of one
// executable have distinct ids, and a slot is held by one caller at a time
// (a caller that finds every matching slot held gets another).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_LOOP_RUN_H_
#define AXLE_CPU_RUNTIME_LOOP_RUN_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

class LoopRun {
 public:
  // `written`: the values the loop's thunks write (must outlive the run).
  LoopRun(const std::vector<int64_t>& written, const ThunkContext& context);
  LoopRun(const LoopRun&) = delete;
  LoopRun& operator=(const LoopRun&) = delete;

  // Unique among the loop runs of the process (never 0).
  int64_t id() const { return id_; }
  // Whether `value`'s bytes overlap none of the written values' bytes.
  bool Invariant(int64_t value) const;

 private:
  int64_t id_;
  const std::vector<int64_t>& written_;
  const ThunkContext& context_;
};

// Makes `run` (may be null) the innermost loop run of `context` until
// destroyed; restores the one before.
class ScopedLoopRun {
 public:
  ScopedLoopRun(const ThunkContext& context, const LoopRun* run)
      : context_(context), previous_(context.loop) {
    context_.loop = run;
  }
  ~ScopedLoopRun() { context_.loop = previous_; }
  ScopedLoopRun(const ScopedLoopRun&) = delete;
  ScopedLoopRun& operator=(const ScopedLoopRun&) = delete;

 private:
  const ThunkContext& context_;
  const LoopRun* previous_;
};

class LoopInvariantCache {
 public:
  struct Slot;
  // A slot held by one caller (released when destroyed), or none.
  class Lease {
   public:
    Lease() = default;
    Lease(LoopInvariantCache* cache, Slot* slot) : cache_(cache), slot_(slot) {}
    Lease(Lease&& other) noexcept : cache_(other.cache_), slot_(other.slot_) {
      other.slot_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    // The derived bytes (64-byte aligned), or null: then derive nothing
    // and read the operand itself.
    const void* data() const;

   private:
    LoopInvariantCache* cache_ = nullptr;
    Slot* slot_ = nullptr;
  };

  LoopInvariantCache();
  ~LoopInvariantCache();
  LoopInvariantCache(const LoopInvariantCache&) = delete;
  LoopInvariantCache& operator=(const LoopInvariantCache&) = delete;

  // What `fill` derives (`bytes` of it) from value `value` of `context`,
  // filled on the thunk's second run in the innermost loop run when the
  // value is invariant there; an empty lease outside loops, on the first
  // run, and for a value the loop writes.
  Lease Acquire(const ThunkContext& context, int64_t value, int64_t bytes,
                absl::FunctionRef<void(void*)> fill);

 private:
  void Release(Slot* slot);

  std::mutex mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_LOOP_RUN_H_
