#include "axle/builder/xla_computation.h"

#include <atomic>

#include "absl/status/status.h"
#include "axle/base/logging.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle {

namespace {
std::atomic<int64_t> next_computation_id{0};
}  // namespace

XlaComputation::XlaComputation(std::unique_ptr<HloModule> module)
    : module_(std::move(module)), unique_id_(next_computation_id.fetch_add(1)) {}

std::string XlaComputation::name() const {
  if (IsNull() || module_->entry_computation() == nullptr) return "";
  return module_->entry_computation()->name();
}

absl::StatusOr<ProgramShape> XlaComputation::GetProgramShape() const {
  if (IsNull()) return absl::InvalidArgumentError("GetProgramShape: the computation is null");
  if (module_->entry_computation() == nullptr ||
      module_->entry_computation()->root_instruction() == nullptr) {
    return absl::InvalidArgumentError("GetProgramShape: the computation has no root");
  }
  return module_->entry_computation_program_shape();
}

const HloModule& XlaComputation::module() const {
  CHECK(!IsNull()) << "XlaComputation::module() on a null computation";
  return *module_;
}

std::unique_ptr<HloModule> XlaComputation::CloneModule() const {
  if (IsNull()) return nullptr;
  return module_->Clone(/*suffix=*/"");
}

std::string XlaComputation::ToString() const { return IsNull() ? "" : module_->ToString(); }

}  // namespace axle
