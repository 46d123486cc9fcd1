//===- control_flow_thunk.h - while, conditional and copies as thunks ------===//
//
// Control flow runs nested thunk sequences built by ProgramBuilder over the
// same value ids as the rest of the program (one value table, one arena):
//
//   WhileThunk        copies the operand's leaves into the loop state (the
//                     while's own temporaries), then runs the condition's
//                     thunks, reads its pred, and runs the body's thunks
//                     until the pred is false. The body's parameter leaves
//                     are the state leaves; its root's leaves end up in the
//                     state, written there directly or copied by its last
//                     thunk (see control_flow_thunk.cc, and the swap hazard).
//                     Its thunks see the run as ThunkContext::loop
//                     (loop_run.h: what stays unchanged while it runs).
//   ConditionalThunk  reads the selector (pred: true runs branch 0, false
//                     branch 1; s32: the index, out of range runs the last
//                     branch) and runs that branch's thunks, which leave the
//                     branch root in the conditional's result the same way.
//   CopyThunk         copies values into others (state updates, results).
//
// A control-flow thunk's buffer_uses() are its own plus those of every
// nested thunk, so that to the executable (which sees only the top-level
// sequence) every value the loop or branch touches is live at its index and
// no nested temporary shares memory with another value live there.
//
// AXLE_PROFILE: the executable times its top-level thunks; the thunks that
// loops and branches run are timed into the NestedProfile installed on the
// running thread (ScopedNestedProfile), so a loop's body shows thunk by
// thunk.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONTROL_FLOW_THUNK_H_
#define AXLE_CPU_RUNTIME_CONTROL_FLOW_THUNK_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

using ThunkSequence = std::vector<std::unique_ptr<Thunk>>;

// Times and calls of the thunks run inside control flow (AXLE_PROFILE).
// Thread-safe.
class NestedProfile {
 public:
  // `thunk` ran once, for `nanoseconds`, inside `owner` (a while or
  // conditional thunk).
  void Add(const Thunk& owner, const Thunk& thunk, int64_t nanoseconds);
  // One line per nested thunk, the slowest first: ms and calls per run (of
  // `runs`), then "owner/thunk". Empty when nothing was recorded.
  std::string Report(int64_t runs) const;

 private:
  struct Entry {
    std::string owner, name;
    int64_t nanoseconds = 0, calls = 0;
  };
  mutable std::mutex mutex_;
  std::map<const Thunk*, Entry> entries_;
};

// Installs `profile` (may be null) for the nested sequences run on this
// thread until destroyed; restores the one before.
class ScopedNestedProfile {
 public:
  explicit ScopedNestedProfile(NestedProfile* profile);
  ~ScopedNestedProfile();
  ScopedNestedProfile(const ScopedNestedProfile&) = delete;
  ScopedNestedProfile& operator=(const ScopedNestedProfile&) = delete;

 private:
  NestedProfile* previous_;
};

// Copies value `from` into value `to` for each (from, to) pair, in order.
class CopyThunk : public Thunk {
 public:
  CopyThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> copies)
      : Thunk(std::move(name)), copies_(std::move(copies)) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override;
  absl::Status Serialize(ThunkWriter& writer) const override;  // thunk_serialization.cc
  const std::vector<std::pair<int64_t, int64_t>>& copies() const { return copies_; }

 private:
  std::vector<std::pair<int64_t, int64_t>> copies_;
};

// A thunk that runs nested sequences, one thunk at a time: its uses are its
// own plus every nested thunk's (nullopt when one of them does not know its
// uses), its scratch the most any nested thunk needs.
class NestedSequenceThunk : public Thunk {
 public:
  std::optional<BufferUses> buffer_uses() const override { return uses_; }
  int64_t scratch_bytes() const override { return scratch_bytes_; }

 protected:
  explicit NestedSequenceThunk(std::string name) : Thunk(std::move(name)) {}
  // Sets the uses to `own` and those of every thunk of `nested`.
  void SetUses(BufferUses own, const std::vector<const ThunkSequence*>& nested);

 private:
  std::optional<BufferUses> uses_;
  int64_t scratch_bytes_ = 0;
};

class WhileThunk : public NestedSequenceThunk {
 public:
  // `init` copies the operand into the state; `condition` leaves its pred
  // in `condition_value`.
  WhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init,
             ThunkSequence condition, int64_t condition_value, ThunkSequence body);

  absl::Status Execute(const ThunkContext& context) const override;
  absl::Status Serialize(ThunkWriter& writer) const override;  // thunk_serialization.cc

 private:
  CopyThunk init_;
  ThunkSequence condition_;
  int64_t condition_value_;
  ThunkSequence body_;
  // The values the condition and body write (LoopRun), when every thunk
  // of theirs knows its uses.
  std::optional<std::vector<int64_t>> written_;
};

class ConditionalThunk : public NestedSequenceThunk {
 public:
  // `selector` is a pred (two branches) or s32 value.
  ConditionalThunk(std::string name, int64_t selector, bool selector_is_pred,
                   std::vector<ThunkSequence> branches);

  absl::Status Execute(const ThunkContext& context) const override;
  absl::Status Serialize(ThunkWriter& writer) const override;  // thunk_serialization.cc

 private:
  int64_t selector_;
  bool selector_is_pred_;
  std::vector<ThunkSequence> branches_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CONTROL_FLOW_THUNK_H_
