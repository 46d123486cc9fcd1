//===- cpu_executable.cc - Programs compiled for the CPU -------------------===//
#include "axle/cpu/runtime/cpu_executable.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/alignment.h"
#include "axle/base/environment_options.h"
#include "axle/base/logging.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/control_flow_thunk.h"
#include "axle/cpu/runtime/omp_team.h"

namespace axle::cpu {
namespace {

// Blocks at least this large are aligned to (and advised as) huge pages.
constexpr int64_t kHugePage = int64_t{2} << 20;

// The nodes of `shape`: itself and, for a tuple, its elements' nodes.
int64_t NodeCount(const Shape& shape) {
  int64_t nodes = 1;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) nodes += NodeCount(element);
  }
  return nodes;
}

// The position of `index` in the pre-order of `shape`'s nodes: the node of
// a ShapeTree (shape_tree.h) of that shape.
int64_t NodePosition(const Shape& shape, const ShapeIndex& index) {
  int64_t position = 0;
  const Shape* node = &shape;
  for (int64_t i : index) {
    ++position;
    for (int64_t j = 0; j < i; ++j) position += NodeCount(node->tuple_shapes(j));
    node = &node->tuple_shapes(i);
  }
  return position;
}

}  // namespace

// One run's temporaries: a single aligned block, freed with the arena, and
// the address of each value in the runs that use it (ThunkContext::address
// reads it: a table lookup, no per-run closure on the heap).
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
  std::vector<void*>& addresses() { return addresses_; }

 private:
  explicit Arena(char* data) : data_(data) {}
  char* data_;
  std::vector<void*> addresses_;
};

struct CpuExecutable::Profile {
  explicit Profile(size_t thunks) : nanoseconds(thunks), best(thunks) {
    for (std::atomic<int64_t>& b : best) b.store(std::numeric_limits<int64_t>::max());
  }
  // Each thunk's time summed over the runs, and its fastest run: on a loaded
  // machine the fastest of many runs is the one other processes disturbed
  // least.
  std::vector<std::atomic<int64_t>> nanoseconds;
  std::vector<std::atomic<int64_t>> best;
  std::atomic<int64_t> runs{0};
  NestedProfile nested;  // the thunks inside loops and branches
};

CpuExecutable::CpuExecutable(std::shared_ptr<const HloModule> module, const se::Platform* platform,
                             CpuProgram program)
    : Executable(std::move(module), platform), program_(std::move(program)) {
  const EnvironmentOptions environment = EnvironmentOptions::Read();
  if (environment.profile) profile_ = std::make_unique<Profile>(program_.thunks.size());
  spin_between_thunks_ =
      program_.thunks.size() > 1 && environment.cpu_spin_between_thunks.value_or(true);
  LayOutBuffers();
  for (int64_t size : program_.temporary_sizes) temporaries_bytes_ += RoundUpToAlignment(size);
  temporary_result_leaf_ =
      TemporaryResultLeaves(program_.values, static_cast<int64_t>(program_.temporary_sizes.size()),
                            program_.result_leaves);
  std::vector<int64_t> result_temporary(temporary_result_leaf_.size(), -1);
  for (size_t t = 0; t < temporary_result_leaf_.size(); ++t) {
    if (temporary_result_leaf_[t] < 0) continue;
    result_temporary[t] = static_cast<int64_t>(result_temporaries_.size());
    result_temporaries_.push_back(static_cast<int64_t>(t));
  }
  const std::vector<Shape>& parameters = parameter_shapes();
  value_bytes_.reserve(program_.values.size());
  for (size_t v = 0; v < program_.values.size(); ++v) {
    const ValueSlot& slot = program_.values[v];
    value_bytes_.push_back(slot.size_bytes);
    if (slot.kind == ValueSlot::Kind::kParameter) {
      // (An argument's shape is checked to match the parameter's, so its
      // tree has the same nodes.)
      run_values_.push_back({static_cast<int64_t>(v), -1,
                             NodePosition(parameters[slot.parameter], slot.parameter_index)});
    } else if (slot.kind == ValueSlot::Kind::kTemporary && result_temporary[slot.temporary] >= 0) {
      run_values_.push_back({static_cast<int64_t>(v), result_temporary[slot.temporary], 0});
    }
  }
  for (const auto& [index, value] : program_.result_leaves) {
    result_leaf_nodes_.push_back(NodePosition(result_shape(), index));
  }
  FindArgumentUses(result_temporary);
}

void CpuExecutable::FindArgumentUses(const std::vector<int64_t>& result_temporary) {
  const int64_t num_thunks = static_cast<int64_t>(program_.thunks.size());
  parameter_last_use_.assign(parameter_shapes().size(), -1);
  result_first_touch_.assign(result_temporaries_.size(), num_thunks);
  result_in_place_.clear();
  // The result temporary a value lives in (-1: none).
  auto result_of = [&](int64_t value) -> int64_t {
    const ValueSlot& slot = program_.values[value];
    return slot.kind == ValueSlot::Kind::kTemporary ? result_temporary[slot.temporary] : -1;
  };
  auto parameter_of = [&](int64_t value) -> int64_t {
    const ValueSlot& slot = program_.values[value];
    return slot.kind == ValueSlot::Kind::kParameter ? slot.parameter : -1;
  };
  for (int64_t i = 0; i < num_thunks; ++i) {
    const Thunk& thunk = *program_.thunks[i];
    std::optional<Thunk::BufferUses> uses = thunk.buffer_uses();
    if (!uses.has_value()) {
      for (int64_t& last : parameter_last_use_) last = i;
      for (int64_t& first : result_first_touch_) first = std::min(first, i);
      continue;
    }
    // The result temporaries this thunk touches first, before it marks
    // its parameters used.
    for (const std::vector<int64_t>* values : {&uses->reads, &uses->writes}) {
      for (int64_t v : *values) {
        const int64_t r = result_of(v);
        if (r < 0 || result_first_touch_[r] < i) continue;
        result_first_touch_[r] = i;
      }
    }
    for (const auto& [a, o] : thunk.in_place_pairs()) {
      const int64_t p = parameter_of(a);
      const int64_t r = result_of(o);
      if (p < 0 || r < 0 || result_first_touch_[r] != i ||
          program_.values[a].size_bytes != program_.values[o].size_bytes) {
        continue;
      }
      // The thunk touches the argument only through a, the temporary only
      // by writing o.
      bool other = false;
      for (int64_t v : uses->reads) other |= (v != a && parameter_of(v) == p) || result_of(v) == r;
      for (int64_t v : uses->writes) other |= v != o && (parameter_of(v) == p || result_of(v) == r);
      if (!other) result_in_place_.emplace_back(r, p);
    }
    for (const std::vector<int64_t>* values : {&uses->reads, &uses->writes}) {
      for (int64_t v : *values) {
        if (const int64_t p = parameter_of(v); p >= 0) parameter_last_use_[p] = i;
      }
    }
  }
  std::sort(result_in_place_.begin(), result_in_place_.end());
  // A parameter leaf that is a result leaf is read by the copies after the
  // last thunk.
  for (const auto& [index, value] : program_.result_leaves) {
    if (const int64_t p = parameter_of(value); p >= 0) parameter_last_use_[p] = num_thunks;
  }
}

bool CpuExecutable::WritesIntoArgument(size_t r, int64_t parameter) const {
  if (parameter < 0 || static_cast<size_t>(parameter) >= parameter_last_use_.size()) return false;
  const int64_t last = parameter_last_use_[parameter];
  return last < result_first_touch_[r] ||
         (last == result_first_touch_[r] &&
          std::binary_search(result_in_place_.begin(), result_in_place_.end(),
                             std::make_pair(static_cast<int64_t>(r), parameter)));
}

void CpuExecutable::LayOutBuffers() {
  const int64_t num_temporaries = static_cast<int64_t>(program_.temporary_sizes.size());
  const int64_t num_thunks = static_cast<int64_t>(program_.thunks.size());
  // Live ranges of the temporaries over thunk indices (a thunk's uses name
  // values; a temporary is a buffer). Result leaves live to the end (the
  // copy, or the caller's read when written into the result).
  std::vector<std::optional<StepUses>> steps;
  for (const std::unique_ptr<Thunk>& thunk : program_.thunks) {
    std::optional<Thunk::BufferUses> uses = thunk->buffer_uses();
    if (uses.has_value()) {
      steps.push_back(StepUses{std::move(uses->reads), std::move(uses->writes)});
    } else {
      steps.emplace_back();
    }
  }
  // Logical buffers: temporaries 0..n-1, then each thunk's scratch memory
  // (live during that thunk only), then parameters and constants.
  std::vector<LogicalBuffer> buffers =
      TemporaryBuffers(program_.values, program_.temporary_sizes, program_.result_leaves, steps);
  std::map<std::pair<int64_t, ShapeIndex>, int64_t> parameters;
  std::map<int64_t, int64_t> constants;
  std::vector<LogicalBuffer> others;
  for (size_t v = 0; v < program_.values.size(); ++v) {
    const ValueSlot& slot = program_.values[v];
    LogicalBuffer* buffer = nullptr;
    switch (slot.kind) {
      case ValueSlot::Kind::kTemporary:
        buffer = &buffers[slot.temporary];
        break;
      case ValueSlot::Kind::kParameter: {
        auto [it, inserted] = parameters.try_emplace({slot.parameter, slot.parameter_index},
                                                     static_cast<int64_t>(others.size()));
        if (inserted) {
          others.emplace_back();
          others.back().kind = BufferAllocation::Kind::kParameter;
          others.back().parameter_number = slot.parameter;
          others.back().parameter_index = slot.parameter_index;
          others.back().size = slot.size_bytes;
        }
        buffer = &others[it->second];
        break;
      }
      case ValueSlot::Kind::kConstant: {
        auto [it, inserted] =
            constants.try_emplace(slot.constant, static_cast<int64_t>(others.size()));
        if (inserted) {
          others.emplace_back();
          others.back().kind = BufferAllocation::Kind::kConstant;
          others.back().size = slot.size_bytes;
        }
        buffer = &others[it->second];
        break;
      }
    }
    if (slot.instruction != nullptr) {
      buffer->values.push_back({slot.instruction, slot.index});
    } else if (buffer->label.empty()) {
      // As the thunk listing names it.
      buffer->label = slot.name.empty() ? absl::StrCat("v", v) : slot.name;
    }
  }
  scratch_offsets_.assign(num_thunks, -1);
  const std::vector<int64_t> scratch_buffer = AppendScratchBuffers(program_.thunks, buffers);
  for (LogicalBuffer& buffer : others) buffers.push_back(std::move(buffer));
  // A temporary left unused (its values moved to another by ShareTemporary)
  // has no value and no bytes: no line in the dump, offset 0.
  BufferAssignmentOptions options;
  options.alignment = kBufferAlignment;
  absl::StatusOr<std::unique_ptr<BufferAssignment>> assigned =
      AssignLogicalBuffers(std::move(buffers), options);
  CHECK(assigned.ok()) << assigned.status();  // the buffers above are well formed
  assignment_ = std::move(assigned).value();
  temporary_offsets_.resize(num_temporaries);
  for (int64_t t = 0; t < num_temporaries; ++t) {
    temporary_offsets_[t] = assignment_->buffer_slice(t).offset;
  }
  for (int64_t i = 0; i < num_thunks; ++i) {
    if (scratch_buffer[i] >= 0) {
      scratch_offsets_[i] = assignment_->buffer_slice(scratch_buffer[i]).offset;
    }
  }
  arena_size_ = assignment_->temp_allocation_total_size();
}

CpuExecutable::~CpuExecutable() {
  if (profile_ != nullptr && profile_->runs.load() > 0) {
    std::fprintf(stderr, "%s", ProfileReport().c_str());
  }
}

absl::StatusOr<std::unique_ptr<BufferAssignment>> CpuExecutable::HloBufferAssignment() const {
  return AssignBuffers(module(), InPlaceChoicesOptions(program_.in_place));
}

std::string CpuExecutable::BufferAssignmentText() const {
  std::string text = assignment_->ToString();
  absl::StrAppend(&text, "temporaries without reuse: ", temporaries_bytes_, " bytes\n");
  auto value_name = [&](int64_t value) {
    const std::string& name = program_.values[value].name;
    return name.empty() ? absl::StrCat("v", value) : name;
  };
  absl::StrAppend(&text, "thunks, in order (the positions of the live ranges):\n");
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    const Thunk& thunk = *program_.thunks[i];
    absl::StrAppend(&text, "  ", i, " %", thunk.name());
    if (std::optional<Thunk::BufferUses> uses = thunk.buffer_uses(); uses.has_value()) {
      auto names = [&](const std::vector<int64_t>& values) {
        std::vector<std::string> out;
        out.reserve(values.size());
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
  return text;
}

std::string CpuExecutable::ProfileReport() const {
  if (profile_ == nullptr) return "";
  const int64_t runs = profile_->runs.load();
  std::vector<std::pair<int64_t, size_t>> order;
  int64_t total = 0, total_best = 0;
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    order.emplace_back(profile_->nanoseconds[i].load(), i);
    total += order.back().first;
    if (runs > 0) total_best += profile_->best[i].load();
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string report =
      absl::StrCat("AXLE_PROFILE ", module().name(), ": ", runs, " runs, ",
                   absl::SixDigits(runs > 0 ? total / 1e6 / runs : 0.0), " ms per run in ",
                   program_.thunks.size(), " thunks (", absl::SixDigits(total_best / 1e6),
                   " ms: each thunk's best run)\n");
  for (const auto& [nanoseconds, i] : order) {
    char line[96];
    std::snprintf(line, sizeof(line), "  %10.3f ms %6.1f%%  best %9.3f ms  ",
                  runs > 0 ? nanoseconds / 1e6 / runs : 0.0,
                  total > 0 ? 100.0 * nanoseconds / total : 0.0,
                  runs > 0 ? profile_->best[i].load() / 1e6 : 0.0);
    absl::StrAppend(&report, line, program_.thunks[i]->name(), "\n");
  }
  const std::string nested = profile_->nested.Report(runs);
  if (!nested.empty()) absl::StrAppend(&report, "inside control flow:\n", nested);
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
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Arena> arena, Arena::Create(arena_size_));
  // Constants and temporaries stay where they are from run to run; a run
  // sets the parameters' and the result temporaries' addresses.
  std::vector<void*>& addresses = arena->addresses();
  addresses.assign(program_.values.size(), nullptr);
  for (size_t v = 0; v < program_.values.size(); ++v) {
    const ValueSlot& slot = program_.values[v];
    if (slot.kind == ValueSlot::Kind::kConstant) {
      addresses[v] = const_cast<void*>(program_.constants[slot.constant].untyped_data());
    } else if (slot.kind == ValueSlot::Kind::kTemporary) {
      addresses[v] = arena->data() + temporary_offsets_[slot.temporary];
    }
  }
  return arena;
}

void CpuExecutable::ReleaseArena(std::unique_ptr<Arena> arena) const {
  std::lock_guard<std::mutex> lock(arenas_mutex_);
  free_arenas_.push_back(std::move(arena));
}

namespace {

// Argument buffers' addresses with their parameter numbers, sorted, and
// the parameter whose buffer `address` is: -1 none, -2 more than one.
// Kept per thread and filled per run (a traced graph has hundreds of
// arguments, and each result may ask: a scan per result was a fifth of a
// run of an 87-thunk training step with ~60 arguments and ~50 results).
using AddressTable = std::vector<std::pair<const void*, int64_t>>;

int64_t ParameterAt(const AddressTable& sorted, const void* address) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(address, int64_t{-1}));
  if (it == sorted.end() || it->first != address) return -1;
  const int64_t parameter = it->second;
  for (++it; it != sorted.end() && it->first == address; ++it) {
    if (it->second != parameter) return -2;
  }
  return parameter;
}

}  // namespace

absl::Status CpuExecutable::ExecuteOnBuffers(const ExecutableRunOptions& options,
                                             absl::Span<const ShapedBuffer* const> arguments,
                                             const ShapedBuffer& result) const {
  // Filled on the first lookup of a run (most runs make none).
  thread_local AddressTable sorted;
  bool filled = false;
  return RunProgram(
      options,
      [&](int64_t parameter, int64_t node) {
        return (arguments[parameter]->buffers().begin() + node)->second;
      },
      [&](int64_t leaf) { return (result.buffers().begin() + result_leaf_nodes_[leaf])->second; },
      [&](const void* address) -> int64_t {
        if (!filled) {
          sorted.clear();
          for (size_t p = 0; p < arguments.size(); ++p) {
            for (const auto& node : arguments[p]->buffers()) {
              sorted.emplace_back(node.second.opaque(), static_cast<int64_t>(p));
            }
          }
          std::sort(sorted.begin(), sorted.end());
          filled = true;
        }
        return ParameterAt(sorted, address);
      });
}

absl::Status CpuExecutable::ExecuteOnArrays(const ExecutableRunOptions& options,
                                            absl::Span<const se::DeviceMemoryBase> arguments,
                                            absl::Span<const se::DeviceMemoryBase> results) const {
  // The arguments' addresses with their parameter numbers, sorted (kept
  // per thread: a traced graph has hundreds).
  thread_local AddressTable sorted;
  sorted.clear();
  for (size_t p = 0; p < arguments.size(); ++p) {
    sorted.emplace_back(arguments[p].opaque(), static_cast<int64_t>(p));
  }
  std::sort(sorted.begin(), sorted.end());
  return RunProgram(
      options, [&](int64_t parameter, int64_t) { return arguments[parameter]; },
      [&](int64_t leaf) {
        const ShapeIndex& index = program_.result_leaves[leaf].first;
        CHECK_EQ(index.size(), 1u) << "ExecuteOnArrays: the result is a tuple of arrays";
        return results[index[0]];
      },
      [&](const void* address) { return ParameterAt(sorted, address); });
}

absl::Status CpuExecutable::RunProgram(
    const ExecutableRunOptions& options,
    absl::FunctionRef<se::DeviceMemoryBase(int64_t, int64_t)> argument_buffer,
    absl::FunctionRef<se::DeviceMemoryBase(int64_t)> result_buffer,
    absl::FunctionRef<int64_t(const void*)> argument_at) const {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Arena> arena, AcquireArena());
  char* const arena_data = arena->data();
  // Where each result temporary lives in this run: its result buffer
  // (written straight into it), or its place in the arena.
  absl::InlinedVector<void*, 8> result_homes(result_temporaries_.size());
  for (size_t r = 0; r < result_temporaries_.size(); ++r) {
    const int64_t t = result_temporaries_[r];
    result_homes[r] = arena_data + temporary_offsets_[t];
    const int64_t leaf = temporary_result_leaf_[t];
    const int64_t value = program_.result_leaves[leaf].second;
    const se::DeviceMemoryBase destination = result_buffer(leaf);
    if (destination.is_null() ||
        static_cast<int64_t>(destination.size()) < program_.values[value].size_bytes) {
      continue;
    }
    // A donated argument's buffer that a thunk touches after the result's
    // first is written last, by the copy below.
    const int64_t parameter = argument_at(destination.opaque());
    if (parameter == -1 || WritesIntoArgument(r, parameter)) {
      result_homes[r] = const_cast<void*>(destination.opaque());
    }
  }
  void** const addresses = arena->addresses().data();
  for (const RunValue& run_value : run_values_) {
    if (run_value.result_temporary >= 0) {
      addresses[run_value.value] = result_homes[run_value.result_temporary];
    } else {
      addresses[run_value.value] = const_cast<void*>(
          argument_buffer(program_.values[run_value.value].parameter, run_value.parameter_node)
              .opaque());
    }
  }
  ThunkContext context;
  context.addresses = addresses;
  context.value_bytes = value_bytes_.data();
  context.run_options = &options;
  context.thread_pool = &RuntimeThreadPool();
  context.max_threads = options.intra_op_threads();
  absl::Status status = absl::OkStatus();
  ScopedNestedProfile nested_profile(profile_ != nullptr ? &profile_->nested : nullptr);
  ThreadPool::SpinScope spin(spin_between_thunks_ && context.max_threads != 1 ? context.thread_pool
                                                                              : nullptr);
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    const Thunk* thunk = program_.thunks[i].get();
    context.scratch = scratch_offsets_[i] >= 0 ? arena_data + scratch_offsets_[i] : nullptr;
    context.scratch_bytes = scratch_offsets_[i] >= 0 ? thunk->scratch_bytes() : 0;
    if (profile_ != nullptr) {
      const auto start = std::chrono::steady_clock::now();
      status = thunk->Execute(context);
      const int64_t nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count();
      profile_->nanoseconds[i] += nanoseconds;
      int64_t best = profile_->best[i].load();
      while (nanoseconds < best && !profile_->best[i].compare_exchange_weak(best, nanoseconds)) {
      }
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
    for (size_t leaf = 0; leaf < program_.result_leaves.size(); ++leaf) {
      const int64_t value = program_.result_leaves[leaf].second;
      void* destination = const_cast<void*>(result_buffer(static_cast<int64_t>(leaf)).opaque());
      const void* source = addresses[value];
      int64_t size = program_.values[value].size_bytes;
      if (size > 0 && destination != source) std::memmove(destination, source, size);
    }
  }
  ReleaseArena(std::move(arena));
  return status;
}

}  // namespace axle::cpu
