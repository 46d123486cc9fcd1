//===- loop_run.cc - What stays unchanged while a while loop runs -----------===//
#include "axle/cpu/runtime/loop_run.h"

#include <atomic>

#include "axle/base/alignment.h"

namespace axle::cpu {
namespace {

std::atomic<int64_t> next_loop_run_id{1};

}  // namespace

LoopRun::LoopRun(const std::vector<int64_t>& written, const ThunkContext& context)
    : id_(next_loop_run_id.fetch_add(1, std::memory_order_relaxed)),
      written_(written),
      context_(context) {}

bool LoopRun::Invariant(int64_t value) const {
  const auto* begin = static_cast<const char*>(context_.address(value));
  const char* end = begin + context_.size_bytes(value);
  if (begin == end) return true;
  for (int64_t w : written_) {
    const auto* w_begin = static_cast<const char*>(context_.address(w));
    const char* w_end = w_begin + context_.size_bytes(w);
    if (w_begin < end && begin < w_end) return false;
  }
  return true;
}

struct LoopInvariantCache::Slot {
  enum class State { kSeen, kVariant, kFilled };
  int64_t run = 0;
  const void* source = nullptr;
  State state = State::kSeen;
  bool held = false;
  std::vector<char> storage;
  void* data() { return AlignUp(storage.data()); }
};

LoopInvariantCache::LoopInvariantCache() = default;
LoopInvariantCache::~LoopInvariantCache() = default;

LoopInvariantCache::Lease::~Lease() {
  if (slot_ != nullptr) cache_->Release(slot_);
}

const void* LoopInvariantCache::Lease::data() const {
  return slot_ != nullptr ? slot_->data() : nullptr;
}

void LoopInvariantCache::Release(Slot* slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  slot->held = false;
}

LoopInvariantCache::Lease LoopInvariantCache::Acquire(const ThunkContext& context, int64_t value,
                                                      int64_t bytes,
                                                      absl::FunctionRef<void(void*)> fill) {
  const LoopRun* run = context.loop;
  if (run == nullptr) return Lease();
  const void* source = context.address(value);
  Slot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot* free = nullptr;
    for (const std::unique_ptr<Slot>& candidate : slots_) {
      if (candidate->held) continue;
      if (candidate->run == run->id() && candidate->source == source) {
        slot = candidate.get();
        break;
      }
      if (free == nullptr) free = candidate.get();
    }
    if (slot == nullptr) {
      // The first run in this loop run: remember it, derive nothing.
      if (free == nullptr) {
        slots_.push_back(std::make_unique<Slot>());
        free = slots_.back().get();
      }
      free->run = run->id();
      free->source = source;
      free->state = Slot::State::kSeen;
      return Lease();
    }
    if (slot->state == Slot::State::kVariant) return Lease();
    if (slot->state == Slot::State::kSeen && !run->Invariant(value)) {
      slot->state = Slot::State::kVariant;
      return Lease();
    }
    slot->held = true;
  }
  if (slot->state == Slot::State::kSeen) {
    const auto size = static_cast<size_t>(bytes + kBufferAlignment);
    if (slot->storage.size() < size) slot->storage.resize(size);
    fill(slot->data());
    slot->state = Slot::State::kFilled;
  }
  return Lease(this, slot);
}

}  // namespace axle::cpu
