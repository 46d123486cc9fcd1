//===- aot_runtime.cc - What axle-aot's generated classes call -------------===//
#include "axle/aot/aot_runtime.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "axle/runtime/platform.h"

namespace axle::aot {
namespace {

struct Program {
  LocalClient* client = nullptr;
  std::unique_ptr<LocalExecutable> executable;
  std::vector<Shape> parameters;  // dense, descending layout
  std::vector<Shape> results;     // the result tuple's elements
};

void SetError(const absl::Status& status, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const std::string text = status.ToString();
  const size_t n = std::min(text.size(), error_size - 1);
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

Shape Dense(const Shape& shape) {
  return ShapeUtil::MakeShapeWithDescendingLayout(shape.element_type(), shape.dimensions());
}

absl::StatusOr<std::unique_ptr<Program>> Create(absl::string_view hlo) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(hlo);
  if (!module.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the embedded HLO module does not parse: ", module.status().message()));
  }
  auto program = std::make_unique<Program>();
  const HloComputation* entry = (*module)->entry_computation();
  for (const HloInstruction* parameter : entry->parameter_instructions()) {
    if (!parameter->shape().IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", parameter->name(), " is not an array"));
    }
    program->parameters.push_back(Dense(parameter->shape()));
  }
  const Shape& root = entry->root_instruction()->shape();
  if (!root.IsTuple()) {
    return absl::InvalidArgumentError("the embedded module's result is not a tuple");
  }
  for (const Shape& element : root.tuple_shapes()) {
    if (!element.IsArray()) {
      return absl::InvalidArgumentError("a result tuple element is not an array");
    }
    program->results.push_back(Dense(element));
  }
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform("cpu");
  if (!platform.ok()) return platform.status();
  absl::StatusOr<LocalClient*> client = ClientLibrary::GetOrCreateLocalClient(*platform);
  if (!client.ok()) return client.status();
  program->client = *client;
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable =
      program->client->Compile(std::move(*module), ExecutableBuildOptions());
  if (!executable.ok()) return executable.status();
  program->executable = std::move(*executable);
  return program;
}

absl::Status Run(Program& program, const void* const* args, void* const* results) {
  std::vector<ScopedShapedBuffer> buffers;
  buffers.reserve(program.parameters.size());
  std::vector<const ShapedBuffer*> arguments;
  for (size_t k = 0; k < program.parameters.size(); ++k) {
    Literal literal(program.parameters[k]);
    std::memcpy(literal.untyped_data(), args[k], literal.size_bytes());
    absl::StatusOr<ScopedShapedBuffer> buffer =
        program.client->LiteralToShapedBuffer(literal, program.client->default_device_ordinal());
    if (!buffer.ok()) return buffer.status();
    buffers.push_back(std::move(*buffer));
  }
  arguments.reserve(buffers.size());
  for (const ScopedShapedBuffer& buffer : buffers) arguments.push_back(&buffer);
  absl::StatusOr<ScopedShapedBuffer> out =
      program.executable->Run(absl::MakeConstSpan(arguments), ExecutableRunOptions());
  if (!out.ok()) return out.status();
  absl::StatusOr<Literal> literal = program.client->ShapedBufferToLiteral(*out);
  if (!literal.ok()) return literal.status();
  std::vector<Literal> elements = literal->DecomposeTuple();
  if (elements.size() != program.results.size()) {
    return absl::InternalError(absl::StrCat("the program returned ", elements.size(),
                                            " results, expected ", program.results.size()));
  }
  for (size_t k = 0; k < elements.size(); ++k) {
    const Shape& shape = elements[k].shape();
    if (shape.has_layout() && !(shape.layout() == program.results[k].layout())) {
      return absl::UnimplementedError(absl::StrCat("result ", k, " came back in layout ",
                                                   shape.ToString(true), ", not row-major"));
    }
    std::memcpy(results[k], elements[k].untyped_data(), elements[k].size_bytes());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace axle::aot

extern "C" {

void* AxleAotCreate(const char* hlo, size_t hlo_size, char* error, size_t error_size) {
  absl::StatusOr<std::unique_ptr<axle::aot::Program>> program =
      axle::aot::Create(absl::string_view(hlo, hlo_size));
  if (!program.ok()) {
    axle::aot::SetError(program.status(), error, error_size);
    return nullptr;
  }
  return program->release();
}

int AxleAotRun(void* program, const void* const* args, void* const* results, char* error,
               size_t error_size) {
  if (program == nullptr) {
    axle::aot::SetError(absl::FailedPreconditionError("the program was not created"), error,
                        error_size);
    return 1;
  }
  absl::Status status = axle::aot::Run(*static_cast<axle::aot::Program*>(program), args, results);
  if (!status.ok()) {
    axle::aot::SetError(status, error, error_size);
    return 1;
  }
  return 0;
}

void AxleAotDestroy(void* program) {
  delete static_cast<axle::aot::Program*>(program);  // NOLINT(cppcoreguidelines-owning-memory)
}

}  // extern "C"
