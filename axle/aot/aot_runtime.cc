//===- aot_runtime.cc - What axle-aot's generated classes call -------------===//
#include "axle/aot/aot_runtime.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/program_serialization.h"

namespace axle::aot {
namespace {

void SetError(const absl::Status& status, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const std::string text = status.ToString();
  const size_t n = std::min(text.size(), error_size - 1);
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

absl::StatusOr<std::unique_ptr<cpu::SerializedProgramRunner>> Load(absl::string_view program,
                                                                   const char* const* symbols,
                                                                   void* const* addresses,
                                                                   size_t num_symbols) {
  std::map<std::string, void*, std::less<>> table;
  for (size_t i = 0; i < num_symbols; ++i) {
    if (symbols == nullptr || addresses == nullptr || symbols[i] == nullptr) {
      return absl::InvalidArgumentError("a null kernel symbol table entry");
    }
    table[symbols[i]] = addresses[i];
  }
  return cpu::LoadProgram(program, [&table](absl::string_view symbol) -> absl::StatusOr<void*> {
    auto it = table.find(symbol);
    if (it == table.end()) {
      return absl::NotFoundError(absl::StrCat("no kernel ", symbol, " in the object's table"));
    }
    return it->second;
  });
}

}  // namespace
}  // namespace axle::aot

extern "C" {

void* AxleAotLoad(const char* program, size_t program_size, const char* const* symbols,
                  void* const* addresses, size_t num_symbols, char* error, size_t error_size) {
  if (program == nullptr) {
    axle::aot::SetError(absl::InvalidArgumentError("no program"), error, error_size);
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<axle::cpu::SerializedProgramRunner>> runner =
      axle::aot::Load(absl::string_view(program, program_size), symbols, addresses, num_symbols);
  if (!runner.ok()) {
    axle::aot::SetError(runner.status(), error, error_size);
    return nullptr;
  }
  return runner->release();
}

int AxleAotRun(void* program, const void* const* args, size_t num_args, void* const* results,
               size_t num_results, char* error, size_t error_size) {
  if (program == nullptr) {
    axle::aot::SetError(absl::FailedPreconditionError("the program was not loaded"), error,
                        error_size);
    return 1;
  }
  auto* runner = static_cast<axle::cpu::SerializedProgramRunner*>(program);
  absl::Status status =
      runner->Run(absl::MakeConstSpan(args, num_args), absl::MakeConstSpan(results, num_results));
  if (!status.ok()) {
    axle::aot::SetError(status, error, error_size);
    return 1;
  }
  return 0;
}

void AxleAotDestroy(void* program) {
  delete static_cast<
      axle::cpu::SerializedProgramRunner*>(  // NOLINT(cppcoreguidelines-owning-memory)
      program);
}

}  // extern "C"
