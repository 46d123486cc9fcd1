//===- program_serialization.cc - A compiled cpu program as bytes ----------===//
//
// Layout: the magic "AXLEPRG1"; the literal table (a count, then each
// literal's shape and bytes); then the program: its constants (literal
// indices), temporaries' sizes and arena offsets, the arena size, its
// values, the result leaves, the top-level thunks with each one's scratch
// offset.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/program_serialization.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/omp_team.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {
namespace {

constexpr char kMagic[] = "AXLEPRG1";
constexpr size_t kMagicSize = 8;

}  // namespace

absl::StatusOr<SerializedProgram> SerializeProgram(const CpuExecutable& executable) {
  const CpuProgram& program = executable.program();
  ThunkWriter body;
  body.Int(static_cast<int64_t>(program.constants.size()));
  for (const Literal& constant : program.constants) {
    if (!constant.shape().IsArray()) {
      return absl::UnimplementedError("a serialized cpu program has array constants only");
    }
    body.Literal(&constant);
  }
  body.Ints(program.temporary_sizes);
  body.Ints(executable.temporary_offsets());
  body.Int(executable.arena_size_bytes());
  body.Int(static_cast<int64_t>(program.values.size()));
  for (const ValueSlot& slot : program.values) {
    if (slot.kind == ValueSlot::Kind::kParameter && !slot.parameter_index.empty()) {
      return absl::UnimplementedError(
          absl::StrCat("a serialized cpu program takes array parameters only (", slot.name, ")"));
    }
    body.Int(static_cast<int64_t>(slot.kind));
    body.Int(slot.parameter);
    body.Int(slot.constant);
    body.Int(slot.temporary);
    body.Int(slot.size_bytes);
    body.String(slot.name);
  }
  body.Int(static_cast<int64_t>(program.result_leaves.size()));
  for (const auto& [index, value] : program.result_leaves) {
    body.Ints(index);
    body.Int(value);
  }
  AXLE_RETURN_IF_ERROR(body.Sequence(program.thunks));
  body.Ints(executable.scratch_offsets());

  ThunkWriter head;
  for (size_t i = 0; i < kMagicSize; ++i) head.Int(kMagic[i]);
  head.Int(static_cast<int64_t>(body.literals().size()));
  for (const Literal* literal : body.literals()) {
    head.Shape(literal->shape());
    head.String(absl::string_view(static_cast<const char*>(literal->untyped_data()),
                                  literal->size_bytes()));
  }
  SerializedProgram serialized;
  serialized.bytes = head.bytes() + body.bytes();
  serialized.symbols = body.symbols();
  serialized.addresses = body.addresses();
  return serialized;
}

SerializedProgramRunner::~SerializedProgramRunner() { std::free(arena_); }

absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> LoadProgram(
    absl::string_view bytes, const KernelResolver& resolver) {
  ThunkReader head(bytes, {}, resolver, 0);
  for (size_t i = 0; i < kMagicSize; ++i) {
    if (head.Int() != kMagic[i] || !head.ok()) {
      return absl::InvalidArgumentError("not a serialized cpu program (no AXLEPRG1 magic)");
    }
  }
  std::vector<std::shared_ptr<const Literal>> literals;
  const int64_t num_literals = head.Count(16);
  for (int64_t i = 0; i < num_literals && head.ok(); ++i) {
    const Shape shape = head.Shape();
    const std::string data = head.String();
    if (!head.ok()) break;
    // No allocation for a shape the bytes cannot fill (a product of
    // dimensions that would overflow included).
    bool fits = true;
    int64_t elements = 1;
    for (int64_t d : shape.dimensions()) {
      if (d == 0) elements = 0;
    }
    for (int64_t d : shape.dimensions()) {
      if (elements == 0) break;
      if (elements > (2 * static_cast<int64_t>(data.size()) + 1) / d) fits = false;
      if (!fits) break;
      elements *= d;
    }
    if (!fits) {
      head.Fail(absl::StrCat("literal ", i, " has ", data.size(), " bytes for shape ",
                             shape.ToString(true)));
      break;
    }
    auto literal = std::make_shared<Literal>(shape);
    if (literal->size_bytes() != static_cast<int64_t>(data.size())) {
      head.Fail(absl::StrCat("literal ", i, " has ", data.size(), " bytes for shape ",
                             shape.ToString(true)));
      break;
    }
    if (!data.empty()) std::memcpy(literal->untyped_data(), data.data(), data.size());
    literals.push_back(std::move(literal));
  }
  AXLE_RETURN_IF_ERROR(head.status());

  ThunkReader reader(bytes.substr(head.position()), literals, resolver, 0);
  auto runner = std::unique_ptr<SerializedProgramRunner>(new SerializedProgramRunner());
  CpuProgram& program = runner->program_;
  const int64_t num_constants = reader.Count();
  for (int64_t i = 0; i < num_constants && reader.ok(); ++i) {
    std::shared_ptr<const Literal> literal = reader.Literal();
    if (literal == nullptr) {
      reader.Fail("a constant without a literal");
      break;
    }
    program.constants.push_back(literal->Clone());
  }
  program.temporary_sizes = reader.Ints();
  runner->temporary_offsets_ = reader.Ints();
  runner->arena_size_ = reader.Int();
  AXLE_RETURN_IF_ERROR(reader.status());
  const auto num_temporaries = static_cast<int64_t>(program.temporary_sizes.size());
  if (runner->temporary_offsets_.size() != program.temporary_sizes.size() ||
      runner->arena_size_ < 0) {
    return absl::InvalidArgumentError("serialized cpu program: a malformed arena layout");
  }
  for (int64_t t = 0; t < num_temporaries; ++t) {
    const int64_t offset = runner->temporary_offsets_[t], size = program.temporary_sizes[t];
    if (size < 0 || offset < 0 || offset % kBufferAlignment != 0 ||
        offset > runner->arena_size_ - size) {
      return absl::InvalidArgumentError(
          absl::StrCat("serialized cpu program: temporary ", t, " lies outside the arena"));
    }
  }
  const int64_t num_values = reader.Count(40);
  reader.set_num_values(num_values);
  for (int64_t v = 0; v < num_values && reader.ok(); ++v) {
    ValueSlot slot;
    const int64_t kind = reader.Int();
    slot.parameter = reader.Int();
    slot.constant = reader.Int();
    slot.temporary = reader.Int();
    slot.size_bytes = reader.Int();
    slot.name = reader.String();
    if (!reader.ok()) break;
    bool ok = slot.size_bytes >= 0;
    switch (kind) {
      case static_cast<int64_t>(ValueSlot::Kind::kParameter):
        slot.kind = ValueSlot::Kind::kParameter;
        ok = ok && slot.parameter >= 0 && slot.parameter < num_values;
        break;
      case static_cast<int64_t>(ValueSlot::Kind::kConstant):
        slot.kind = ValueSlot::Kind::kConstant;
        ok = ok && slot.constant >= 0 && slot.constant < num_constants &&
             slot.size_bytes <= program.constants[slot.constant].size_bytes();
        break;
      case static_cast<int64_t>(ValueSlot::Kind::kTemporary):
        slot.kind = ValueSlot::Kind::kTemporary;
        ok = ok && slot.temporary >= 0 && slot.temporary < num_temporaries &&
             slot.size_bytes <= program.temporary_sizes[slot.temporary];
        break;
      default:
        ok = false;
    }
    if (!ok) {
      reader.Fail(absl::StrCat("value ", v, " (", slot.name, ") is malformed"));
      break;
    }
    program.values.push_back(std::move(slot));
  }
  std::vector<int64_t> value_bytes;
  for (const ValueSlot& slot : program.values) value_bytes.push_back(slot.size_bytes);
  reader.set_value_bytes(std::move(value_bytes));
  const int64_t num_results = reader.Count(16);
  for (int64_t i = 0; i < num_results && reader.ok(); ++i) {
    std::vector<int64_t> index = reader.Ints();
    const int64_t value = reader.Value();
    program.result_leaves.emplace_back(ShapeIndex(index.begin(), index.end()), value);
  }
  program.thunks = reader.Sequence();
  runner->scratch_offsets_ = reader.Ints();
  AXLE_RETURN_IF_ERROR(reader.status());
  if (!reader.at_end()) {
    return absl::InvalidArgumentError("serialized cpu program: bytes after the program");
  }
  if (runner->scratch_offsets_.size() != program.thunks.size()) {
    return absl::InvalidArgumentError("serialized cpu program: a scratch offset per thunk");
  }
  for (size_t i = 0; i < program.thunks.size(); ++i) {
    const int64_t offset = runner->scratch_offsets_[i];
    const int64_t bytes = program.thunks[i]->scratch_bytes();
    if (offset >= 0 ? offset > runner->arena_size_ - bytes : bytes > 0) {
      // A thunk without room gets none (its Execute then uses its own).
      runner->scratch_offsets_[i] = -1;
    }
  }
  for (const ValueSlot& slot : program.values) {
    if (slot.kind != ValueSlot::Kind::kParameter) continue;
    if (slot.parameter >= static_cast<int64_t>(runner->argument_bytes_.size())) {
      runner->argument_bytes_.resize(slot.parameter + 1, 0);
    }
    runner->argument_bytes_[slot.parameter] =
        std::max(runner->argument_bytes_[slot.parameter], slot.size_bytes);
  }
  for (const auto& [index, value] : program.result_leaves) {
    runner->result_bytes_.push_back(program.values[value].size_bytes);
  }
  for (const ValueSlot& slot : program.values) runner->value_bytes_.push_back(slot.size_bytes);
  runner->addresses_.assign(program.values.size(), nullptr);
  const int64_t arena_bytes = RoundUpToAlignment(std::max<int64_t>(runner->arena_size_, 1));
  runner->arena_ = static_cast<char*>(std::aligned_alloc(kBufferAlignment, arena_bytes));
  if (runner->arena_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the program's arena of ", arena_bytes, " bytes"));
  }
  return runner;
}

absl::Status SerializedProgramRunner::Run(absl::Span<const void* const> arguments,
                                          absl::Span<void* const> results) {
  // (Trailing parameters the program never reads have no value: more
  // arguments than argument_bytes() are fine.)
  if (arguments.size() < argument_bytes_.size() || results.size() != result_bytes_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the program takes ", argument_bytes_.size(), " arguments and ", result_bytes_.size(),
        " results, not ", arguments.size(), " and ", results.size()));
  }
  for (size_t value = 0; value < program_.values.size(); ++value) {
    const ValueSlot& slot = program_.values[value];
    void*& address = addresses_[value];
    switch (slot.kind) {
      case ValueSlot::Kind::kParameter:
        address = const_cast<void*>(arguments[slot.parameter]);
        break;
      case ValueSlot::Kind::kConstant:
        address = const_cast<void*>(program_.constants[slot.constant].untyped_data());
        break;
      case ValueSlot::Kind::kTemporary:
        address = arena_ + temporary_offsets_[slot.temporary];
        break;
    }
  }
  const ExecutableRunOptions options;
  ThunkContext context;
  context.addresses = addresses_.data();
  context.value_bytes = value_bytes_.data();
  context.run_options = &options;
  context.thread_pool = &RuntimeThreadPool();
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    const Thunk& thunk = *program_.thunks[i];
    context.scratch = scratch_offsets_[i] >= 0 ? arena_ + scratch_offsets_[i] : nullptr;
    context.scratch_bytes = scratch_offsets_[i] >= 0 ? thunk.scratch_bytes() : 0;
    if (absl::Status status = thunk.Execute(context); !status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(status.message(), " (in %", thunk.name(), ")"));
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const int64_t size = result_bytes_[i];
    const void* source = addresses_[program_.result_leaves[i].second];
    if (size > 0 && results[i] != source) std::memmove(results[i], source, size);
  }
  return absl::OkStatus();
}

}  // namespace axle::cpu
