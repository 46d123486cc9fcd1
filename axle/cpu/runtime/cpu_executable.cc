//===- cpu_executable.cc - Programs compiled for the CPU -------------------===//
#include "axle/cpu/runtime/cpu_executable.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/alignment.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/arena_layout.h"

namespace axle::cpu {
namespace {

// Blocks at least this large are aligned to (and advised as) huge pages.
constexpr int64_t kHugePage = int64_t{2} << 20;

}  // namespace

// One run's temporaries: a single aligned block, freed with the arena.
class CpuExecutable::Arena {
 public:
  static absl::StatusOr<std::unique_ptr<Arena>> Create(int64_t size) {
    if (size == 0) return std::unique_ptr<Arena>(new Arena(nullptr));
    const int64_t alignment = size >= kHugePage ? kHugePage : kBufferAlignment;
    void* data = nullptr;
    if (posix_memalign(&data, alignment, RoundUpToAlignment(size, alignment)) != 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cpu executable: cannot allocate a temporaries arena of ", size, " bytes"));
    }
    // Only advice: fewer, cheaper page faults on the first run.
    if (alignment == kHugePage) madvise(data, RoundUpToAlignment(size, alignment), MADV_HUGEPAGE);
    return std::unique_ptr<Arena>(new Arena(static_cast<char*>(data)));
  }
  ~Arena() { std::free(data_); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  char* data() const { return data_; }

 private:
  explicit Arena(char* data) : data_(data) {}
  char* data_;
};

struct CpuExecutable::Profile {
  explicit Profile(size_t thunks) : nanoseconds(thunks) {}
  std::vector<std::atomic<int64_t>> nanoseconds;
  std::atomic<int64_t> runs{0};
};

CpuExecutable::CpuExecutable(std::shared_ptr<const HloModule> module, const se::Platform* platform,
                             CpuProgram program)
    : Executable(std::move(module), platform), program_(std::move(program)) {
  if (EnvironmentOptions::Read().profile) {
    profile_ = std::make_unique<Profile>(program_.thunks.size());
  }
  const int64_t num_temporaries = static_cast<int64_t>(program_.temporary_sizes.size());
  const int64_t num_thunks = static_cast<int64_t>(program_.thunks.size());
  // Live ranges over thunk indices; without every thunk's uses, all
  // temporaries live throughout. Result leaves live to the end (the copy).
  std::vector<LiveRange> live(num_temporaries, LiveRange{0, num_thunks});
  std::vector<bool> seen(num_temporaries, false);
  bool uses_known = true;
  auto temporary_of = [&](int64_t value) -> int64_t {
    const ValueSlot& slot = program_.values[value];
    return slot.kind == ValueSlot::Kind::kTemporary ? slot.temporary : -1;
  };
  auto touch = [&](int64_t value, int64_t index) {
    const int64_t t = temporary_of(value);
    if (t < 0) return;
    if (!seen[t]) live[t] = LiveRange{index, index};
    seen[t] = true;
    live[t].first = std::min(live[t].first, index);
    live[t].last = std::max(live[t].last, index);
  };
  for (int64_t i = 0; i < num_thunks && uses_known; ++i) {
    std::optional<Thunk::BufferUses> uses = program_.thunks[i]->buffer_uses();
    if (!uses.has_value()) {
      uses_known = false;
      break;
    }
    for (int64_t value : uses->writes) touch(value, i);
    for (int64_t value : uses->reads) touch(value, i);
  }
  if (!uses_known) live.assign(num_temporaries, LiveRange{0, num_thunks});
  for (int64_t t = 0; t < num_temporaries; ++t) {
    if (!seen[t]) live[t] = LiveRange{0, num_thunks};
  }
  for (const auto& [index, value] : program_.result_leaves) {
    const int64_t t = temporary_of(value);
    if (t >= 0) live[t].last = num_thunks;
  }
  for (const LiveRange& range : live) temporary_live_.emplace_back(range.first, range.last);
  // Each thunk's scratch memory: a block live during that thunk only.
  std::vector<int64_t> sizes = program_.temporary_sizes;
  scratch_offsets_.assign(num_thunks, -1);
  for (int64_t i = 0; i < num_thunks; ++i) {
    const int64_t bytes = program_.thunks[i]->scratch_bytes();
    if (bytes <= 0) continue;
    scratch_offsets_[i] = static_cast<int64_t>(sizes.size());
    sizes.push_back(bytes);
    live.push_back(LiveRange{i, i});
  }
  ArenaLayout layout = LayOutArena(sizes, live, kBufferAlignment);
  for (int64_t i = 0; i < num_thunks; ++i) {
    if (scratch_offsets_[i] >= 0) scratch_offsets_[i] = layout.offsets[scratch_offsets_[i]];
  }
  layout.offsets.resize(num_temporaries);
  temporary_offsets_ = std::move(layout.offsets);
  arena_size_ = layout.size_bytes;
  for (int64_t size : program_.temporary_sizes) temporaries_bytes_ += RoundUpToAlignment(size);
  temporary_result_leaf_.assign(program_.temporary_sizes.size(), -1);
  std::vector<int> leaf_count(program_.temporary_sizes.size(), 0);
  for (int64_t i = 0; i < static_cast<int64_t>(program_.result_leaves.size()); ++i) {
    const ValueSlot& slot = program_.values[program_.result_leaves[i].second];
    if (slot.kind != ValueSlot::Kind::kTemporary) continue;
    temporary_result_leaf_[slot.temporary] = i;
    ++leaf_count[slot.temporary];
  }
  for (size_t t = 0; t < leaf_count.size(); ++t) {
    if (leaf_count[t] > 1) temporary_result_leaf_[t] = -1;
  }
}

CpuExecutable::~CpuExecutable() {
  if (profile_ != nullptr && profile_->runs.load() > 0) {
    std::fprintf(stderr, "%s", ProfileReport().c_str());
  }
}

std::string CpuExecutable::BufferAssignmentText() const {
  std::string text = absl::StrCat("arena: ", arena_size_, " bytes (", temporaries_bytes_,
                                  " bytes of temporaries without reuse), 64-byte aligned\n");
  auto value_name = [&](int64_t value) {
    const std::string& name = program_.values[value].name;
    return name.empty() ? absl::StrCat("v", value) : name;
  };
  absl::StrAppend(&text, "thunks, in order:\n");
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    const Thunk& thunk = *program_.thunks[i];
    absl::StrAppend(&text, "  ", i, " %", thunk.name());
    if (std::optional<Thunk::BufferUses> uses = thunk.buffer_uses(); uses.has_value()) {
      auto names = [&](const std::vector<int64_t>& values) {
        std::vector<std::string> out;
        for (int64_t value : values) out.push_back(value_name(value));
        return absl::StrJoin(out, " ");
      };
      absl::StrAppend(&text, ": reads ", names(uses->reads), "; writes ", names(uses->writes));
    } else {
      absl::StrAppend(&text, ": may touch any value");
    }
    if (scratch_offsets_[i] >= 0) {
      absl::StrAppend(&text, "; scratch ", thunk.scratch_bytes(), " bytes at +",
                      scratch_offsets_[i]);
    }
    text += "\n";
  }
  absl::StrAppend(&text, "values:\n");
  for (size_t v = 0; v < program_.values.size(); ++v) {
    const ValueSlot& slot = program_.values[v];
    absl::StrAppend(&text, "  ", value_name(static_cast<int64_t>(v)), ": ", slot.size_bytes,
                    " bytes, ");
    switch (slot.kind) {
      case ValueSlot::Kind::kParameter:
        absl::StrAppend(&text, "parameter ", slot.parameter, " {",
                        absl::StrJoin(slot.parameter_index, ","), "}");
        break;
      case ValueSlot::Kind::kConstant:
        absl::StrAppend(&text, "constant ", slot.constant);
        break;
      case ValueSlot::Kind::kTemporary: {
        const int64_t t = slot.temporary;
        absl::StrAppend(&text, "temporary ", t, " at +", temporary_offsets_[t],
                        ", live in thunks [", temporary_live_[t].first, ", ",
                        temporary_live_[t].second, "]");
        if (temporary_result_leaf_[t] >= 0) absl::StrAppend(&text, ", written into the result");
        break;
      }
    }
    text += "\n";
  }
  return text;
}

std::string CpuExecutable::ProfileReport() const {
  if (profile_ == nullptr) return "";
  const int64_t runs = profile_->runs.load();
  std::vector<std::pair<int64_t, size_t>> order;
  int64_t total = 0;
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    order.emplace_back(profile_->nanoseconds[i].load(), i);
    total += order.back().first;
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string report = absl::StrCat("AXLE_PROFILE ", module().name(), ": ", runs, " runs, ",
                                    absl::SixDigits(runs > 0 ? total / 1e6 / runs : 0.0),
                                    " ms per run in ", program_.thunks.size(), " thunks\n");
  for (const auto& [nanoseconds, i] : order) {
    char line[64];
    std::snprintf(line, sizeof(line), "  %10.3f ms %6.1f%%  ",
                  runs > 0 ? nanoseconds / 1e6 / runs : 0.0,
                  total > 0 ? 100.0 * nanoseconds / total : 0.0);
    absl::StrAppend(&report, line, program_.thunks[i]->name(), "\n");
  }
  return report;
}

absl::StatusOr<std::unique_ptr<CpuExecutable::Arena>> CpuExecutable::AcquireArena() const {
  {
    std::lock_guard<std::mutex> lock(arenas_mutex_);
    if (!free_arenas_.empty()) {
      std::unique_ptr<Arena> arena = std::move(free_arenas_.back());
      free_arenas_.pop_back();
      return arena;
    }
  }
  arenas_allocated_.fetch_add(1);
  return Arena::Create(arena_size_);
}

void CpuExecutable::ReleaseArena(std::unique_ptr<Arena> arena) const {
  std::lock_guard<std::mutex> lock(arenas_mutex_);
  free_arenas_.push_back(std::move(arena));
}

absl::Status CpuExecutable::ExecuteOnBuffers(const ExecutableRunOptions& options,
                                             absl::Span<const ShapedBuffer* const> arguments,
                                             const ShapedBuffer& result) const {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Arena> arena, AcquireArena());
  char* const arena_data = arena->data();
  // Temporaries written straight into their result buffer.
  absl::InlinedVector<void*, 8> in_result(temporary_result_leaf_.size(), nullptr);
  for (size_t t = 0; t < temporary_result_leaf_.size(); ++t) {
    if (temporary_result_leaf_[t] < 0) continue;
    const auto& [index, value] = program_.result_leaves[temporary_result_leaf_[t]];
    const se::DeviceMemoryBase& destination = result.buffer(index);
    if (destination.is_null() ||
        static_cast<int64_t>(destination.size()) < program_.values[value].size_bytes) {
      continue;
    }
    bool donated = false;
    for (const ShapedBuffer* argument : arguments) {
      for (const auto& node : argument->buffers()) {
        donated |= node.second.opaque() == destination.opaque();
      }
    }
    if (!donated) in_result[t] = const_cast<void*>(destination.opaque());
  }
  auto address = [&](int64_t value) -> void* {
    const ValueSlot& slot = program_.values[value];
    switch (slot.kind) {
      case ValueSlot::Kind::kParameter:
        return const_cast<void*>(arguments[slot.parameter]->buffer(slot.parameter_index).opaque());
      case ValueSlot::Kind::kConstant:
        return const_cast<void*>(program_.constants[slot.constant].untyped_data());
      case ValueSlot::Kind::kTemporary:
        if (in_result[slot.temporary] != nullptr) return in_result[slot.temporary];
        return arena_data + temporary_offsets_[slot.temporary];
    }
    return nullptr;
  };
  ThunkContext context;
  context.address = address;
  context.size_bytes = [&](int64_t value) { return program_.values[value].size_bytes; };
  context.run_options = &options;
  context.thread_pool = &ThreadPool::Default();
  context.max_threads = options.intra_op_threads();
  absl::Status status = absl::OkStatus();
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    const Thunk* thunk = program_.thunks[i].get();
    context.scratch = scratch_offsets_[i] >= 0 ? arena_data + scratch_offsets_[i] : nullptr;
    context.scratch_bytes = scratch_offsets_[i] >= 0 ? thunk->scratch_bytes() : 0;
    if (profile_ != nullptr) {
      const auto start = std::chrono::steady_clock::now();
      status = thunk->Execute(context);
      profile_->nanoseconds[i] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count();
    } else {
      status = thunk->Execute(context);
    }
    if (!status.ok()) {
      status =
          absl::Status(status.code(), absl::StrCat(status.message(), " (in %", thunk->name(), ")"));
      break;
    }
  }
  if (status.ok()) {
    if (profile_ != nullptr) ++profile_->runs;
    for (const auto& [index, value] : program_.result_leaves) {
      void* destination = const_cast<void*>(result.buffer(index).opaque());
      const void* source = address(value);
      int64_t size = program_.values[value].size_bytes;
      if (size > 0 && destination != source) std::memmove(destination, source, size);
    }
  }
  ReleaseArena(std::move(arena));
  return status;
}

}  // namespace axle::cpu
