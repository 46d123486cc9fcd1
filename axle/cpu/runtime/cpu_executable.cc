#include "axle/cpu/runtime/cpu_executable.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"

namespace axle::cpu {

CpuExecutable::CpuExecutable(std::shared_ptr<const HloModule> module,
                             const se::Platform* platform, CpuProgram program)
    : Executable(std::move(module), platform), program_(std::move(program)) {}

absl::Status CpuExecutable::ExecuteOnBuffers(const ExecutableRunOptions& options,
                                             absl::Span<const ShapedBuffer* const> arguments,
                                             const ShapedBuffer& result) const {
  se::DeviceMemoryAllocator* allocator =
      options.allocator() != nullptr ? options.allocator() : HostMemoryAllocator::Default();
  std::vector<se::OwningDeviceMemory> temporaries;
  temporaries.reserve(program_.temporary_sizes.size());
  for (int64_t size : program_.temporary_sizes) {
    AXLE_ASSIGN_OR_RETURN(se::OwningDeviceMemory memory, allocator->Allocate(0, size));
    temporaries.push_back(std::move(memory));
  }
  auto address = [&](int64_t value) -> void* {
    const ValueSlot& slot = program_.values[value];
    switch (slot.kind) {
      case ValueSlot::Kind::kParameter:
        return const_cast<void*>(
            arguments[slot.parameter]->buffer(slot.parameter_index).opaque());
      case ValueSlot::Kind::kConstant:
        return const_cast<void*>(program_.constants[slot.constant].untyped_data());
      case ValueSlot::Kind::kTemporary:
        return temporaries[slot.temporary].ptr()->opaque();
    }
    return nullptr;
  };
  ThunkContext context;
  context.address = address;
  context.run_options = &options;
  for (const std::unique_ptr<Thunk>& thunk : program_.thunks) {
    absl::Status status = thunk->Execute(context);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(status.message(), " (in %", thunk->name(), ")"));
    }
  }
  for (const auto& [index, value] : program_.result_leaves) {
    void* destination = const_cast<void*>(result.buffer(index).opaque());
    const void* source = address(value);
    int64_t size = program_.values[value].size_bytes;
    if (size > 0 && destination != source) std::memmove(destination, source, size);
  }
  return absl::OkStatus();
}

}  // namespace axle::cpu
