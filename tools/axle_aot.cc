//===- axle_aot.cc - Ahead-of-time compile an ONNX model to a C++ class ----===//
//
//   axle-aot MODEL.onnx --class=ns::Model -o PREFIX [--dim=SYMBOL=N ...]
//            [--cxx=COMPILER] [--target_cpu=CPU] [--target_features=+A,-B]
//
// tfcompile's job for ONNX: writes PREFIX.h (a C++ class with typed argument
// and result accessors, the shapes as constexpr, and Run()) and PREFIX.o (the
// class's code, the compiled model and its kernels' machine code), to link
// with axle_aot_runtime. Each graph input must have a static shape; a
// symbolic dimension is bound with --dim=SYMBOL=N. The model goes through
// the graph front end's XlaCompiler (weights compiled in as constants) and
// the cpu backend (CompileCpuExecutable, kernels position-independent);
// the executable's program is serialized (PREFIX.program: thunks, plans,
// constants, arena layout; no HLO) and the kernels' objects, which the
// Jit leaves in PREFIX.aot.d (its object cache), are linked with the
// class's code (PREFIX.cc, compiled by --cxx, else $CXX, else c++) into
// PREFIX.o with `ld -r`, the kernels' symbols then made local
// (`objcopy`), so that several models link into one program. The kernels
// are for this host's CPU unless --target_cpu / --target_features name
// another (JitOptions::target_cpu; only the kernels' code follows it: the
// thunks' own code is axle_aot_runtime's, built for where it is built).
// The class
// passes the runtime the program's bytes and a table of its kernels'
// addresses by symbol: nothing is parsed or compiled at run time
// (docs/graph_frontend.md, "AOT").
//
// Every error (a malformed model, a dynamic input, a host-only op, a thunk
// with no serialized form, kernel code that calls one of Axle's runtime
// helpers, an element type with no C++ type, a failing compiler or linker)
// is printed naming what is at fault and exits 1.
//
//===----------------------------------------------------------------------===//
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "axle/base/environment_options.h"
#include "axle/base/file_io.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/jit.h"
#include "axle/cpu/object_cache.h"
#include "axle/cpu/runtime/program_builder.h"
#include "axle/cpu/runtime/program_serialization.h"
#include "axle/cpu/runtime_symbols.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle {
namespace {

struct Options {
  std::string model;
  std::string class_name;
  std::string output;
  std::vector<std::string> dims;
  std::string cxx;
  std::string target_cpu;
  std::string target_features;
};

// The C++ type of an element type, or Unimplemented.
absl::StatusOr<std::string> CxxType(PrimitiveType type, absl::string_view what) {
  switch (type) {
    case PRED:
      return std::string("bool");
    case S8:
      return std::string("int8_t");
    case S16:
      return std::string("int16_t");
    case S32:
      return std::string("int32_t");
    case S64:
      return std::string("int64_t");
    case U8:
      return std::string("uint8_t");
    case U16:
      return std::string("uint16_t");
    case U32:
      return std::string("uint32_t");
    case U64:
      return std::string("uint64_t");
    case F16:
    case BF16:
      return std::string("uint16_t");  // the raw bits
    case F32:
      return std::string("float");
    case F64:
      return std::string("double");
    default:
      return absl::UnimplementedError(absl::StrCat(what, " has element type ",
                                                   primitive_util::LowercasePrimitiveTypeName(type),
                                                   ", which axle-aot has no C++ type for"));
  }
}

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct Tensor {
  std::string name;
  std::string type;
  std::vector<int64_t> dims;
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

std::string HeaderText(const Options& options, const std::vector<std::string>& namespaces,
                       const std::string& cls, const std::vector<Tensor>& args,
                       const std::vector<Tensor>& results) {
  std::string guard = absl::StrCat("AXLE_AOT_", absl::StrJoin(namespaces, "_"), "_", cls, "_H_");
  std::string h =
      absl::StrCat("// Generated by axle-aot from ", options.model, ". Do not edit.\n// Link with ",
                   std::filesystem::path(options.output).filename().string(),
                   ".o and axle_aot_runtime.\n#ifndef ", guard, "\n#define ", guard,
                   "\n\n#include <array>\n#include "
                   "<cstddef>\n#include <cstdint>\n#include <string>\n#include "
                   "<vector>\n\n");
  for (const std::string& ns : namespaces) absl::StrAppend(&h, "namespace ", ns, " {\n");
  absl::StrAppend(&h, "\nclass ", cls,
                  " {\n public:\n  static constexpr int kNumArgs = ", args.size(),
                  ";\n  static constexpr int kNumResults = ", results.size(), ";\n");
  auto declare = [&](const std::vector<Tensor>& tensors, absl::string_view kind,
                     absl::string_view cap) {
    for (size_t k = 0; k < tensors.size(); ++k) {
      const Tensor& t = tensors[k];
      absl::StrAppend(&h, "\n  // ", kind, " ", k, ": '", t.name, "'\n  using ", cap, k,
                      "Type = ", t.type, ";\n  static constexpr std::array<int64_t, ",
                      t.dims.size(), "> k", cap, k, "Shape = {", absl::StrJoin(t.dims, ", "),
                      "};\n  static constexpr int64_t k", cap, k, "Size = ", t.elements(),
                      ";  // elements\n");
    }
  };
  declare(args, "argument", "Arg");
  declare(results, "result", "Result");
  absl::StrAppend(&h, "\n  // Loads the compiled model; ok() says whether it did.\n  ", cls,
                  "();\n  ~", cls, "();\n  ", cls, "(const ", cls, "&) = delete;\n  ", cls,
                  "& operator=(const ", cls,
                  "&) = delete;\n\n  bool ok() const { return "
                  "program_ != nullptr; }\n  // Why the last call failed.\n  const std::string& "
                  "error() const { return error_; }\n\n  // Runs on the arguments' data; "
                  "false (see error()) on failure.\n  bool Run();\n\n");
  for (size_t k = 0; k < args.size(); ++k) {
    absl::StrAppend(&h, "  Arg", k, "Type* arg", k, "_data() { return arg", k,
                    "_.data(); }\n  const Arg", k, "Type* arg", k, "_data() const { return arg", k,
                    "_.data(); }\n");
  }
  for (size_t k = 0; k < results.size(); ++k) {
    absl::StrAppend(&h, "  const Result", k, "Type* result", k, "_data() const { return result", k,
                    "_.data(); }\n");
  }
  // By name too, where the graph's name is an identifier (tfcompile's
  // arg_feed_NAME_data()).
  for (size_t k = 0; k < args.size(); ++k) {
    if (!IsIdentifier(args[k].name)) continue;
    absl::StrAppend(&h, "  Arg", k, "Type* arg_", args[k].name, "_data() { return arg", k,
                    "_.data(); }\n");
  }
  for (size_t k = 0; k < results.size(); ++k) {
    if (!IsIdentifier(results[k].name)) continue;
    absl::StrAppend(&h, "  const Result", k, "Type* result_", results[k].name,
                    "_data() const { return result", k, "_.data(); }\n");
  }
  absl::StrAppend(&h, "\n private:\n  void* program_ = nullptr;\n  std::string error_;\n");
  for (size_t k = 0; k < args.size(); ++k) {
    absl::StrAppend(&h, "  std::vector<Arg", k, "Type> arg", k, "_ = std::vector<Arg", k,
                    "Type>(kArg", k, "Size);\n");
  }
  for (size_t k = 0; k < results.size(); ++k) {
    absl::StrAppend(&h, "  std::vector<Result", k, "Type> result", k, "_ = std::vector<Result", k,
                    "Type>(kResult", k, "Size);\n");
  }
  absl::StrAppend(&h, "};\n\n");
  for (auto it = namespaces.rbegin(); it != namespaces.rend(); ++it) {
    absl::StrAppend(&h, "}  // namespace ", *it, "\n");
  }
  absl::StrAppend(&h, "\n#endif  // ", guard, "\n");
  return h;
}

// PREFIX.cc: the class's members, the program's bytes (PREFIX.program,
// `.incbin`) and the table of its kernels' addresses by symbol.
std::string SourceText(const std::vector<std::string>& namespaces, const std::string& cls,
                       const std::string& header, const std::string& program_path,
                       const std::string& blob, const std::vector<std::string>& symbols,
                       size_t nargs, size_t nresults) {
  const std::string qualified =
      absl::StrCat(absl::StrJoin(namespaces, "::"), namespaces.empty() ? "" : "::", cls);
  std::string c = absl::StrCat(
      "// Generated by axle-aot. Do not edit.\n#include \"", header,
      "\"\n\n#include <cstddef>\n\nextern \"C\" {\n"
      "void* AxleAotLoad(const char* program, size_t program_size, const char* const* symbols,\n"
      "                  void* const* addresses, size_t num_symbols, char* error,\n"
      "                  size_t error_size);\n"
      "int AxleAotRun(void* program, const void* const* args, size_t num_args,\n"
      "               void* const* results, size_t num_results, char* error, size_t error_size);\n"
      "void AxleAotDestroy(void* program);\n"
      "extern const char ",
      blob, "[];\nextern const char ", blob, "_end[];\n");
  // The kernels, by their symbols (asm labels: any name works).
  for (size_t k = 0; k < symbols.size(); ++k) {
    absl::StrAppend(&c, "void ", blob, "_kernel", k, "() __asm__(\"", symbols[k], "\");\n");
  }
  absl::StrAppend(&c, "}\n\n__asm__(\".section .rodata\\n.balign 16\\n.globl ", blob, "\\n", blob,
                  ":\\n.incbin \\\"", program_path, "\\\"\\n.globl ", blob, "_end\\n", blob,
                  "_end:\\n.byte 0\\n.previous\\n\");\n\nnamespace {\n\n"
                  "const char* const kSymbols[] = {");
  for (const std::string& symbol : symbols) absl::StrAppend(&c, "\"", symbol, "\", ");
  absl::StrAppend(&c, "nullptr};\nvoid* const kAddresses[] = {");
  for (size_t k = 0; k < symbols.size(); ++k) {
    absl::StrAppend(&c, "reinterpret_cast<void*>(&", blob, "_kernel", k, "), ");
  }
  absl::StrAppend(&c, "nullptr};\n\n}  // namespace\n\n", qualified, "::", cls,
                  "() {\n  char error[4096] = {0};\n  program_ = AxleAotLoad(", blob,
                  ", static_cast<size_t>(", blob, "_end - ", blob, "), kSymbols, kAddresses, ",
                  symbols.size(),
                  ", error,\n                         sizeof(error));\n"
                  "  if (program_ == nullptr) error_ = error;\n}\n\n",
                  qualified, "::~", cls, "() { AxleAotDestroy(program_); }\n\nbool ", qualified,
                  "::Run() {\n  const void* args[] = {");
  for (size_t k = 0; k < nargs; ++k) absl::StrAppend(&c, "arg", k, "_.data(), ");
  absl::StrAppend(&c, "nullptr};\n  void* results[] = {");
  for (size_t k = 0; k < nresults; ++k) absl::StrAppend(&c, "result", k, "_.data(), ");
  absl::StrAppend(&c, "nullptr};\n  char error[4096] = {0};\n  if (AxleAotRun(program_, args, ",
                  nargs, ", results, ", nresults,
                  ", error, sizeof(error)) != 0) {\n    error_ = error;\n    return "
                  "false;\n  }\n  return true;\n}\n");
  return c;
}

// Runs `command`; Internal naming `what` when it fails.
absl::Status System(const std::string& command, absl::string_view what) {
  if (std::system(command.c_str()) != 0) {  // NOLINT(cert-env33-c): compiling is the job
    return absl::InternalError(absl::StrCat(what, " failed: ", command));
  }
  return absl::OkStatus();
}

// The symbols `object` leaves undefined (`nm -u`).
absl::StatusOr<std::vector<std::string>> UndefinedSymbols(const std::string& object) {
  const std::string command = absl::StrCat("nm -u --format=just-symbols ", ShellQuote(object));
  FILE* pipe = popen(command.c_str(), "r");  // NOLINT(cert-env33-c)
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("cannot run ", command));
  std::string out;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  if (pclose(pipe) != 0) return absl::InternalError(absl::StrCat(command, " failed"));
  std::vector<std::string> symbols;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    symbols.emplace_back(line);
  }
  return symbols;
}

// True when `shape` is an array in the dense row-major layout.
bool IsRowMajorArray(const Shape& shape) {
  if (!shape.IsArray()) return false;
  if (!shape.has_layout()) return true;
  return shape.layout().minor_to_major() ==
         ShapeUtil::MakeDescendingLayout(static_cast<int64_t>(shape.dimensions().size()))
             .minor_to_major();
}

absl::Status Run(const Options& options) {
  std::vector<std::string> namespaces = absl::StrSplit(options.class_name, "::");
  const std::string cls = namespaces.back();
  namespaces.pop_back();
  for (const std::string& part : namespaces) {
    if (!IsIdentifier(part)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--class=", options.class_name, ": '", part, "' is not an identifier"));
    }
  }
  if (!IsIdentifier(cls)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--class=", options.class_name, ": '", cls, "' is not an identifier"));
  }
  std::map<std::string, int64_t> bound;
  for (const std::string& dim : options.dims) {
    std::vector<std::string> parts = absl::StrSplit(dim, '=');
    int64_t value = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &value) || value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim=", dim, ": expected SYMBOL=N with N >= 0"));
    }
    bound[parts[0]] = value;
  }
  (void)onnx::LinkOnnxKernels();
  AXLE_ASSIGN_OR_RETURN(graph::Graph graph, onnx::LoadModel(options.model));
  std::vector<graph::XlaArgument> signature;
  std::vector<Tensor> args;
  for (const graph::ValueInfo& input : graph.inputs) {
    const std::string what = absl::StrCat("input '", input.name, "'");
    if (!input.dims.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has no declared rank"));
    }
    Tensor t{input.name, "", {}};
    AXLE_ASSIGN_OR_RETURN(t.type, CxxType(input.element_type, what));
    for (const graph::Dim& dim : *input.dims) {
      if (dim.size.has_value()) {
        t.dims.push_back(*dim.size);
      } else if (auto it = bound.find(dim.symbol); !dim.symbol.empty() && it != bound.end()) {
        t.dims.push_back(it->second);
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " has a dynamic dimension", dim.symbol.empty() ? "" : " '", dim.symbol,
            dim.symbol.empty() ? "" : "'", ": give it a size with --dim=SYMBOL=N"));
      }
    }
    signature.push_back({ShapeUtil::MakeShape(input.element_type, t.dims), std::nullopt});
    args.push_back(std::move(t));
  }
  graph::XlaCompiler compiler({.initializer_constant_limit = std::numeric_limits<int64_t>::max()});
  AXLE_ASSIGN_OR_RETURN(graph::XlaCompilationResult result, compiler.Compile(graph, signature));
  for (size_t k = 0; k < result.parameters.size(); ++k) {
    const auto& p = result.parameters[k];
    if (p.kind != graph::XlaCompilationResult::Parameter::kInput ||
        p.input_index != static_cast<int64_t>(k)) {
      return absl::UnimplementedError(
          absl::StrCat("parameter ", k, " of the compiled computation is not graph input ", k));
    }
  }
  if (result.parameters.size() != args.size()) {
    return absl::UnimplementedError(absl::StrCat("the compiled computation has ",
                                                 result.parameters.size(), " parameters for ",
                                                 args.size(), " graph inputs"));
  }
  std::vector<Tensor> results;
  for (size_t k = 0; k < result.output_shapes.size(); ++k) {
    const Shape& shape = result.output_shapes[k];
    const std::string what = absl::StrCat("output '", graph.outputs[k].name, "'");
    Tensor t{graph.outputs[k].name, "", {shape.dimensions().begin(), shape.dimensions().end()}};
    AXLE_ASSIGN_OR_RETURN(t.type, CxxType(shape.element_type(), what));
    results.push_back(std::move(t));
  }
  const std::string hlo = result.computation.module().ToString(HloPrintOptions::Canonical());
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(hlo);
  if (!module.ok()) {
    return absl::InternalError(
        absl::StrCat("the compiled module does not parse back: ", module.status().message()));
  }
  const std::filesystem::path prefix = std::filesystem::absolute(options.output);
  const std::string header = prefix.filename().string() + ".h";
  const std::string program_path = prefix.string() + ".program";
  const std::string source_path = prefix.string() + ".cc";
  const std::string class_object = prefix.string() + ".class.o";
  const std::string object_path = prefix.string() + ".o";
  const std::string work_dir = prefix.string() + ".aot.d";
  if (program_path.find_first_of("\"\\\n") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-o ", options.output, ": the path may not contain a quote, backslash or newline"));
  }
  if (!std::filesystem::is_directory(prefix.parent_path())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write ", prefix.string(), ".h: no folder ", prefix.parent_path().string()));
  }
  // The cpu backend, kernels position-independent, their objects left in
  // work_dir (the Jit's object cache, emptied first so that it holds this
  // model's only).
  std::error_code ignored;
  std::filesystem::remove_all(work_dir, ignored);
  std::filesystem::create_directories(work_dir, ignored);
  cpu::SetKeepSerializableState(true);
  cpu::CpuCompileOptions compile_options;
  compile_options.jit.cache_dir = work_dir;
  compile_options.jit.position_independent = true;
  compile_options.jit.target_cpu = options.target_cpu;
  compile_options.jit.target_features = options.target_features;
  absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> executable =
      cpu::CompileCpuExecutable(*std::move(module), compile_options);
  if (!executable.ok()) {
    return absl::Status(
        executable.status().code(),
        absl::StrCat("the cpu backend cannot compile the model: ", executable.status().message()));
  }
  const HloComputation& entry = *(*executable)->module().entry_computation();
  for (const HloInstruction* parameter : entry.parameter_instructions()) {
    if (!IsRowMajorArray(parameter->shape())) {
      return absl::UnimplementedError(absl::StrCat("parameter ", parameter->name(), " has shape ",
                                                   parameter->shape().ToString(true),
                                                   ", not a row-major array"));
    }
  }
  if (!entry.root_instruction()->shape().IsTuple()) {
    return absl::InternalError("the compiled computation's result is not a tuple");
  }
  for (const Shape& element : entry.root_instruction()->shape().tuple_shapes()) {
    if (!IsRowMajorArray(element)) {
      return absl::UnimplementedError(
          absl::StrCat("a result has shape ", element.ToString(true), ", not a row-major array"));
    }
  }
  absl::StatusOr<cpu::SerializedProgram> program = cpu::SerializeProgram(**executable);
  if (!program.ok()) {
    return absl::Status(
        program.status().code(),
        absl::StrCat("the model cannot be compiled ahead of time: ", program.status().message()));
  }
  if ((*executable)->program().result_leaves.size() != results.size()) {
    return absl::InternalError("the program's results are not the graph's outputs");
  }
  // The kernels' objects, out of the cache's checked files.
  std::vector<std::string> kernel_objects;
  for (const auto& entry_file : std::filesystem::directory_iterator(work_dir)) {
    const std::string path = entry_file.path().string();
    if (entry_file.path().extension() != ".o") continue;
    cpu::CheckedFileRead read = cpu::ReadCheckedFile(path, cpu::kObjectCacheMagic);
    if (!read.payload) return absl::InternalError(absl::StrCat("cannot read kernel object ", path));
    const std::string object = absl::StrCat(work_dir, "/kernels_", kernel_objects.size(), ".elf.o");
    AXLE_RETURN_IF_ERROR(WriteWholeFile(object, *read.payload));
    kernel_objects.push_back(object);
  }
  if (!program->symbols.empty() && kernel_objects.empty()) {
    return absl::InternalError("the cpu backend left no kernel objects");
  }
  // Axle's runtime helpers (f8 rounding, complex math) are the Jit's; the
  // runtime library does not provide them.
  std::set<std::string> helpers;
  for (const cpu::RuntimeSymbol& symbol : cpu::RuntimeSymbols()) helpers.insert(symbol.name);
  for (const std::string& object : kernel_objects) {
    AXLE_ASSIGN_OR_RETURN(std::vector<std::string> undefined, UndefinedSymbols(object));
    for (const std::string& symbol : undefined) {
      if (helpers.count(symbol) != 0) {
        return absl::UnimplementedError(
            absl::StrCat("the model's kernels call Axle's runtime helper ", symbol,
                         ", which axle_aot_runtime does not provide yet"));
      }
    }
  }
  const std::string blob = absl::StrCat("axle_aot_", absl::StrJoin(namespaces, "_"), "_", cls);
  AXLE_RETURN_IF_ERROR(WriteWholeFile(program_path, program->bytes));
  AXLE_RETURN_IF_ERROR(
      WriteWholeFile(prefix.string() + ".h", HeaderText(options, namespaces, cls, args, results)));
  AXLE_RETURN_IF_ERROR(
      WriteWholeFile(source_path, SourceText(namespaces, cls, header, program_path, blob,
                                             program->symbols, args.size(), results.size())));
  std::string cxx = options.cxx;
  if (cxx.empty()) {
    cxx = EnvironmentOptions::Read().cxx;
    if (cxx.empty()) cxx = "c++";
  }
  AXLE_RETURN_IF_ERROR(System(
      absl::StrCat(cxx, " -std=c++17 -O2 -fPIC -c ", ShellQuote(source_path), " -I",
                   ShellQuote(prefix.parent_path().string()), " -o ", ShellQuote(class_object)),
      "the C++ compiler"));
  std::string link = absl::StrCat("ld -r -z noexecstack -o ", ShellQuote(object_path), " ",
                                  ShellQuote(class_object));
  for (const std::string& object : kernel_objects) absl::StrAppend(&link, " ", ShellQuote(object));
  AXLE_RETURN_IF_ERROR(System(link, "the linker (ld -r)"));
  // The kernels' symbols and the program's bytes local to this object.
  std::string localize = "objcopy";
  for (const std::string& symbol : program->symbols) {
    absl::StrAppend(&localize, " --localize-symbol=", ShellQuote(symbol));
  }
  absl::StrAppend(&localize, " --localize-symbol=", blob, " --localize-symbol=", blob, "_end ",
                  ShellQuote(object_path));
  AXLE_RETURN_IF_ERROR(System(localize, "objcopy"));
  std::filesystem::remove(class_object, ignored);
  std::printf("wrote %s.h and %s (%zu arguments, %zu results, %zu bytes of program, %zu kernels)\n",
              prefix.string().c_str(), object_path.c_str(), args.size(), results.size(),
              program->bytes.size(), program->symbols.size());
  return absl::OkStatus();
}

}  // namespace
}  // namespace axle

// app.parse's errors are caught below; any other exception is a bug, and
// terminating on it is what a command-line tool should do.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  axle::Options options;
  CLI::App app{"axle-aot: compile an ONNX model ahead of time to a C++ class"};
  app.add_option("model", options.model, "ONNX model file")->required();
  app.add_option("--class", options.class_name, "the class, ns::Name")->required();
  app.add_option("-o", options.output, "write PREFIX.h and PREFIX.o")->required();
  app.add_option("--dim", options.dims, "SYMBOL=N: the size of a symbolic input dimension");
  app.add_option("--cxx", options.cxx, "the C++ compiler (default $CXX, else c++)");
  app.add_option("--target_cpu", options.target_cpu,
                 "the CPU the kernels are for, as LLVM names it (default: this host's)");
  app.add_option("--target_features", options.target_features,
                 "+NAME,-NAME,...: feature changes to the target CPU's (or the host's)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (absl::Status status = axle::Run(options); !status.ok()) {
    std::fprintf(stderr, "axle-aot: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
