//===- hlo_printer_test_util.h - Helpers of the HLO printer tests ----------===//
//
// Shared by hlo_printer_test.cc (module structure: order, headers, called
// computations, async shorthand) and hlo_printer_attributes_test.cc (each
// op's attributes): a builder that makes computations instruction by
// instruction, a scalar add computation, and a one-line text search.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_HLO_PRINTER_TEST_UTIL_H_
#define AXLE_HLO_TEXT_HLO_PRINTER_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {
namespace printer_test {

inline Shape Arr(PrimitiveType type, std::vector<int64_t> dims) {
  return ShapeUtil::MakeShape(type, dims);
}

// Builds one computation instruction by instruction, naming each.
class Builder {
 public:
  explicit Builder(std::string name) : computation_(std::make_unique<HloComputation>(name)) {}

  HloInstruction* Parameter(int64_t number, const Shape& shape, std::string name) {
    auto p = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, shape,
                                                       absl::Span<HloInstruction* const>{});
    p->mutable_attrs()->parameter_number = number;
    return Add(std::move(p), std::move(name));
  }

  HloInstruction* Op(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
                     std::string name) {
    return Add(HloInstruction::Create(opcode, shape, operands), std::move(name));
  }

  // A subclass instance; configure it through the returned pointer.
  template <typename T>
  T* Make(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
          std::string name) {
    return static_cast<T*>(Add(std::make_unique<T>(opcode, shape, operands), std::move(name)));
  }

  HloInstruction* Constant(Literal literal, std::string name) {
    auto c = std::make_unique<HloConstantInstruction>(HloOpcode::kConstant, literal.shape(),
                                                      absl::Span<HloInstruction* const>{});
    c->mutable_attrs()->literal = std::move(literal);
    return Add(std::move(c), std::move(name));
  }

  HloInstruction* Add(std::unique_ptr<HloInstruction> instruction, std::string name) {
    instruction->SetName(std::move(name));
    HloInstruction* raw = computation_->AddInstruction(std::move(instruction));
    computation_->set_root_instruction(raw);
    return raw;
  }

  std::unique_ptr<HloComputation> Build(HloInstruction* root = nullptr) {
    if (root != nullptr) computation_->set_root_instruction(root);
    return std::move(computation_);
  }

 private:
  std::unique_ptr<HloComputation> computation_;
};

// A scalar f32 add computation named `name`.
inline std::unique_ptr<HloComputation> AddComputation(const std::string& name) {
  Builder b(name);
  HloInstruction* x = b.Parameter(0, Arr(F32, {}), "x." + name);
  HloInstruction* y = b.Parameter(1, Arr(F32, {}), "y." + name);
  b.Op(HloOpcode::kAdd, Arr(F32, {}), {x, y}, "sum." + name);
  return b.Build();
}

// The line of `text` that contains `needle` (trimmed), for focused checks.
inline std::string LineWith(const std::string& text, absl::string_view needle) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find(needle) != absl::string_view::npos) {
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      return std::string(line);
    }
  }
  return "<no line with " + std::string(needle) + ">";
}

}  // namespace printer_test
}  // namespace axle

#endif  // AXLE_HLO_TEXT_HLO_PRINTER_TEST_UTIL_H_
