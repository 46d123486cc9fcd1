//===- control_flow_thunk.cc - while, conditional and copies as thunks -----===//
//
// The thunks run nested sequences over the program's one value table;
// control_flow_thunk_emitter.cc builds them from HLO.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/control_flow_thunk.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/loop_run.h"
#include "axle/hlo/analysis/conditional_branch.h"

namespace axle::cpu {
namespace {

// The profile installed on this thread (ScopedNestedProfile), or null.
thread_local NestedProfile* current_profile = nullptr;

absl::Status RunSequence(const Thunk& owner, const ThunkSequence& sequence,
                         const ThunkContext& context) {
  NestedProfile* const profile = current_profile;
  for (const std::unique_ptr<Thunk>& thunk : sequence) {
    absl::Status status;
    if (profile != nullptr) {
      const auto start = std::chrono::steady_clock::now();
      status = thunk->Execute(context);
      profile->Add(owner, *thunk,
                   std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    } else {
      status = thunk->Execute(context);
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(status.message(), " (in %", thunk->name(), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void NestedProfile::Add(const Thunk& owner, const Thunk& thunk, int64_t nanoseconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& entry = entries_[&thunk];
  if (entry.calls == 0) {
    entry.owner = owner.name();
    entry.name = thunk.name();
  }
  entry.nanoseconds += nanoseconds;
  ++entry.calls;
}

std::string NestedProfile::Report(int64_t runs) const {
  std::vector<Entry> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [thunk, entry] : entries_) entries.push_back(entry);
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.nanoseconds > b.nanoseconds; });
  const double per_run = runs > 0 ? 1.0 / static_cast<double>(runs) : 0.0;
  std::string report;
  for (const Entry& entry : entries) {
    char line[80];
    std::snprintf(line, sizeof(line), "  %10.3f ms %8.1f calls  ",
                  entry.nanoseconds / 1e6 * per_run, static_cast<double>(entry.calls) * per_run);
    absl::StrAppend(&report, line, entry.owner, "/", entry.name, "\n");
  }
  return report;
}

ScopedNestedProfile::ScopedNestedProfile(NestedProfile* profile) : previous_(current_profile) {
  current_profile = profile;
}

ScopedNestedProfile::~ScopedNestedProfile() { current_profile = previous_; }

absl::Status CopyThunk::Execute(const ThunkContext& context) const {
  for (const auto& [from, to] : copies_) {
    const int64_t size = context.size_bytes(to);
    if (size > 0) std::memmove(context.address(to), context.address(from), size);
  }
  return absl::OkStatus();
}

std::optional<Thunk::BufferUses> CopyThunk::buffer_uses() const {
  BufferUses uses;
  for (const auto& [from, to] : copies_) {
    uses.reads.push_back(from);
    uses.writes.push_back(to);
  }
  return uses;
}

void NestedSequenceThunk::SetUses(BufferUses own, const std::vector<const ThunkSequence*>& nested) {
  uses_ = std::move(own);
  for (const ThunkSequence* sequence : nested) {
    for (const std::unique_ptr<Thunk>& thunk : *sequence) {
      scratch_bytes_ = std::max(scratch_bytes_, thunk->scratch_bytes());
      std::optional<BufferUses> uses = thunk->buffer_uses();
      if (!uses.has_value()) uses_ = std::nullopt;
      if (!uses_.has_value()) continue;
      uses_->reads.insert(uses_->reads.end(), uses->reads.begin(), uses->reads.end());
      uses_->writes.insert(uses_->writes.end(), uses->writes.begin(), uses->writes.end());
    }
  }
}

WhileThunk::WhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init,
                       ThunkSequence condition, int64_t condition_value, ThunkSequence body)
    : NestedSequenceThunk(name),
      init_(std::move(name), std::move(init)),
      condition_(std::move(condition)),
      condition_value_(condition_value),
      body_(std::move(body)) {
  BufferUses own = *init_.buffer_uses();
  own.reads.push_back(condition_value_);
  SetUses(std::move(own), {&condition_, &body_});
  if (buffer_uses().has_value()) {
    std::vector<int64_t> written;
    for (const ThunkSequence* sequence : {&condition_, &body_}) {
      for (const std::unique_ptr<Thunk>& thunk : *sequence) {
        std::vector<int64_t> writes = thunk->buffer_uses()->writes;
        written.insert(written.end(), writes.begin(), writes.end());
      }
    }
    std::sort(written.begin(), written.end());
    written.erase(std::unique(written.begin(), written.end()), written.end());
    written_ = std::move(written);
  }
}

absl::Status WhileThunk::Execute(const ThunkContext& context) const {
  AXLE_RETURN_IF_ERROR(init_.Execute(context));
  std::optional<LoopRun> run;
  if (written_.has_value()) run.emplace(*written_, context);
  ScopedLoopRun scoped_run(context, run.has_value() ? &*run : nullptr);
  // The body's thunks run back to back, each split across the pool or not:
  // idle workers wait for the next split spinning (thread_pool.h), not
  // asleep (an RNN step's dot takes about as long as waking them).
  ThreadPool::SpinScope spin(context.thread_pool);
  while (true) {
    AXLE_RETURN_IF_ERROR(RunSequence(*this, condition_, context));
    if (*static_cast<const uint8_t*>(context.address(condition_value_)) == 0) {
      return absl::OkStatus();
    }
    AXLE_RETURN_IF_ERROR(RunSequence(*this, body_, context));
  }
}

ConditionalThunk::ConditionalThunk(std::string name, int64_t selector, bool selector_is_pred,
                                   std::vector<ThunkSequence> branches)
    : NestedSequenceThunk(std::move(name)),
      selector_(selector),
      selector_is_pred_(selector_is_pred),
      branches_(std::move(branches)) {
  std::vector<const ThunkSequence*> nested;
  for (const ThunkSequence& branch : branches_) nested.push_back(&branch);
  SetUses(BufferUses{{selector_}, {}}, nested);
}

absl::Status ConditionalThunk::Execute(const ThunkContext& context) const {
  const void* selector = context.address(selector_);
  int32_t value = 0;
  if (selector_is_pred_) {
    value = *static_cast<const uint8_t*>(selector);
  } else {
    std::memcpy(&value, selector, sizeof(value));
  }
  const int64_t count = static_cast<int64_t>(branches_.size());
  return RunSequence(*this, branches_[SelectedBranch(selector_is_pred_, value, count)], context);
}

}  // namespace axle::cpu
