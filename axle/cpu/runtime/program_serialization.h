//===- program_serialization.h - A compiled cpu program as bytes -----------===//
//
// SerializeProgram writes what a CpuExecutable runs (its values, constants,
// thunks and the arena layout the buffer assignment chose); LoadProgram
// reads it back into a SerializedProgramRunner with no HloModule, no HLO
// parser and no compiler: the kernels are looked up by symbol through a
// KernelResolver (the Jit that compiled them, or the table of an object
// file axle-aot wrote: docs/graph_frontend.md, "AOT"). The runner runs the
// thunks on caller-owned argument and result buffers as CpuExecutable
// does, one run at a time.
//
// A program with a thunk that has no serialized form (thunk_serialization.h)
// is refused by SerializeProgram with Unimplemented naming the instruction.
// Parameters must be arrays (no tuple parameters).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_PROGRAM_SERIALIZATION_H_
#define AXLE_CPU_RUNTIME_PROGRAM_SERIALIZATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {

struct SerializedProgram {
  std::string bytes;
  // The kernel symbols the thunks name (what a loader must resolve), and
  // their code's addresses in this process (while the executable lives).
  std::vector<std::string> symbols;
  std::vector<void*> addresses;
};

absl::StatusOr<SerializedProgram> SerializeProgram(const CpuExecutable& executable);

class SerializedProgramRunner {
 public:
  ~SerializedProgramRunner();
  SerializedProgramRunner(const SerializedProgramRunner&) = delete;
  SerializedProgramRunner& operator=(const SerializedProgramRunner&) = delete;

  // Bytes of each argument (parameter order) and of each result leaf (the
  // root's array leaves in pre-order).
  const std::vector<int64_t>& argument_bytes() const { return argument_bytes_; }
  const std::vector<int64_t>& result_bytes() const { return result_bytes_; }

  // Runs on `arguments` (argument_bytes() each; at least as many, more
  // when the last parameters are never read) into `results`
  // (result_bytes() each). Not concurrently with itself.
  absl::Status Run(absl::Span<const void* const> arguments, absl::Span<void* const> results);

 private:
  friend absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> LoadProgram(
      absl::string_view bytes, const KernelResolver& resolver);
  SerializedProgramRunner() = default;

  CpuProgram program_;
  std::vector<int64_t> temporary_offsets_;
  std::vector<int64_t> scratch_offsets_;
  int64_t arena_size_ = 0;
  std::vector<int64_t> argument_bytes_;
  std::vector<int64_t> result_bytes_;
  char* arena_ = nullptr;  // 64-byte aligned, arena_size_ bytes
  // Each value's buffer in the current run, and its size in bytes
  // (ThunkContext's tables).
  std::vector<void*> addresses_;
  std::vector<int64_t> value_bytes_;
};

absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> LoadProgram(
    absl::string_view bytes, const KernelResolver& resolver);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_PROGRAM_SERIALIZATION_H_
