//===- thunk_serialization.h - Thunks as bytes, and back -------------------===//
//
// The serialized form of a cpu program's thunks (the AOT route of
// docs/graph_frontend.md, "AOT"): each thunk writes what its Execute uses
// (its values, its plan, the symbol names of its kernels) through
// Thunk::Serialize, and a loader per thunk kind rebuilds it from those
// bytes alone: no HloModule, no HLO instruction. A kernel is named by its
// symbol (CompiledKernel::symbol(), CompiledScalarFunction::symbol() for
// a sort's comparator or a scatter's combiner) and found again through a
// KernelResolver: the Jit that compiled it (a round trip in one process),
// or the table of the object file axle-aot wrote.
//
// Thunks that keep an HloInstruction to evaluate at run time (the
// interpreter's kernels, linalg_thunk.h), and kinds that have no loader
// yet, refuse with Unimplemented naming the instruction.
//
// Encoding: little-endian 8-byte integers, strings and arrays as a count
// then their elements, literals as indices into a table written once per
// program (a weight shared by a constant and a dot's plan is stored once).
// ThunkReader checks every count against the bytes left and every value
// against the program's values; the first error sticks and is reported by
// status().
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_THUNK_SERIALIZATION_H_
#define AXLE_CPU_RUNTIME_THUNK_SERIALIZATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/cpu/scalar_function_emitter.h"

namespace axle::cpu {

using ThunkSequence = std::vector<std::unique_ptr<Thunk>>;

// The address of a kernel or scalar function by symbol name.
using KernelResolver = std::function<absl::StatusOr<void*>(absl::string_view symbol)>;

// Whether thunks made from now on keep what only their serialized form
// needs: a oneDNN convolution's constant weights, which it otherwise frees
// once it has packed them. Off by default (process-wide); axle-aot and the
// round-trip test turn it on before compiling. A thunk made without it
// that would need it says FailedPrecondition in Serialize.
void SetKeepSerializableState(bool keep);
bool KeepSerializableState();

// Whether `type` is the number of an array PrimitiveType.
bool IsArrayTypeNumber(int64_t type);

// One tag per serializable thunk kind (the first integer of a thunk).
enum class ThunkTag : int64_t {
  kKernel = 1,
  kCopy = 2,
  kWhile = 3,
  kConditional = 4,
  kDnnlDot = 5,
  kSmallDot = 6,
  kLoopDot = 7,
  kDnnlConvolution = 8,
  kLoopConvolution = 9,
  kDynamicUpdateSlice = 10,
  kTopK = 11,
  kSort = 12,
  kFft = 13,
  kComparatorSort = 14,
  kScatter = 15,
  kSelectAndScatter = 16,
  kRngBitGenerator = 17,
  kRng = 18,
  kRngGetAndUpdateState = 19,
  kCustomCall = 20,
  kConvChain = 21,
};

class ThunkWriter {
 public:
  void Int(int64_t value);
  void Bool(bool value) { Int(value ? 1 : 0); }
  void Double(double value);
  void String(absl::string_view value);
  void Ints(absl::Span<const int64_t> values);
  void Pairs(const std::vector<std::pair<int64_t, int64_t>>& pairs);
  void Shape(const ::axle::Shape& shape);
  // A literal (null: none) as its index in the literal table.
  void Literal(const ::axle::Literal* literal);
  // A kernel by symbol; Unimplemented when it has none.
  absl::Status Kernel(const CompiledKernel& kernel);
  // A compiled scalar function (a comparator, a combiner) by symbol;
  // Unimplemented naming `what` when it has none.
  absl::Status ScalarFunction(const CompiledScalarFunction& function, absl::string_view what);
  // The tag and name every thunk starts with.
  void Begin(ThunkTag tag, const ::axle::cpu::Thunk& thunk);
  absl::Status Thunk(const ::axle::cpu::Thunk& thunk);
  absl::Status Sequence(const ThunkSequence& sequence);

  const std::string& bytes() const { return bytes_; }
  // The literals Literal() was given, by index.
  const std::vector<const ::axle::Literal*>& literals() const { return literals_; }
  // Every kernel and scalar function symbol Kernel() and ScalarFunction()
  // were given, in first-use order, and the address of its code in this
  // process.
  const std::vector<std::string>& symbols() const { return symbols_; }
  const std::vector<void*>& addresses() const { return addresses_; }

 private:
  std::string bytes_;
  std::vector<const ::axle::Literal*> literals_;
  std::map<const void*, int64_t> literal_index_;
  std::vector<std::string> symbols_;
  std::vector<void*> addresses_;
  std::map<std::string, int64_t> symbol_index_;

  void AddSymbol(const std::string& symbol, void* address);
};

class ThunkReader {
 public:
  ThunkReader(absl::string_view bytes, std::vector<std::shared_ptr<const ::axle::Literal>> literals,
              KernelResolver resolver, int64_t num_values)
      : bytes_(bytes),
        literals_(std::move(literals)),
        resolver_(std::move(resolver)),
        num_values_(num_values) {}

  int64_t Int();
  bool Bool() { return Int() != 0; }
  double Double();
  std::string String();
  std::vector<int64_t> Ints();
  std::vector<std::pair<int64_t, int64_t>> Pairs();
  ::axle::Shape Shape();
  // A value id: an integer in [0, num_values).
  int64_t Value();
  std::vector<int64_t> Values();
  std::vector<std::pair<int64_t, int64_t>> ValuePairs();
  // A count of things each at least `min_bytes` long: fails when the bytes
  // left cannot hold them.
  int64_t Count(int64_t min_bytes = 8);
  std::shared_ptr<const ::axle::Literal> Literal();
  std::unique_ptr<CompiledKernel> Kernel();
  std::unique_ptr<CompiledScalarFunction> ScalarFunction();
  std::unique_ptr<::axle::cpu::Thunk> Thunk();
  ThunkSequence Sequence();

  // The address of `symbol` (a kernel or a scalar function); null after
  // recording NotFound.
  void* Resolve(const std::string& symbol);

  // Records the first error (`what` of the thunk being read).
  void Fail(absl::string_view what);
  // Records `status` as the first error as it is (a custom call's target
  // that is not registered: NotFound).
  void SetError(absl::Status status) {
    if (status_.ok()) status_ = std::move(status);
  }
  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  bool at_end() const { return position_ == bytes_.size(); }
  size_t position() const { return position_; }
  int64_t num_values() const { return num_values_; }
  void set_num_values(int64_t num_values) { num_values_ = num_values; }
  // The bytes of each value, which LoadProgram sets once it has read the
  // values: a loader whose thunk addresses its buffers by its own geometry
  // checks that they hold what it reads and writes.
  void set_value_bytes(std::vector<int64_t> value_bytes) { value_bytes_ = std::move(value_bytes); }
  // Whether value `value` (a valid id) holds exactly `bytes` bytes; false
  // when the value sizes are not known.
  bool ValueHas(int64_t value, int64_t bytes) const {
    return value >= 0 && value < static_cast<int64_t>(value_bytes_.size()) &&
           value_bytes_[value] == bytes;
  }

 private:
  absl::string_view bytes_;
  size_t position_ = 0;
  std::vector<std::shared_ptr<const ::axle::Literal>> literals_;
  KernelResolver resolver_;
  int64_t num_values_;
  std::vector<int64_t> value_bytes_;
  absl::Status status_;
};

// The loaders of the thunk kinds defined outside thunk.h and
// control_flow_thunk.h (each in its thunk's file). `name` has been read;
// each reads the rest of its thunk, null after an error (reader.status()).
std::unique_ptr<Thunk> LoadDnnlDotThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadSmallDotThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadLoopDotThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadDnnlConvolutionThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadLoopConvolutionThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadKernelThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadCopyThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadWhileThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadConditionalThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadDynamicUpdateSliceThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadTopKThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadSortThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadFftThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadComparatorSortThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadScatterThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadSelectAndScatterThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadRngBitGeneratorThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadRngThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadRngGetAndUpdateStateThunk(std::string name, ThunkReader& reader);
std::unique_ptr<Thunk> LoadCustomCallThunk(std::string name, ThunkReader& reader);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_THUNK_SERIALIZATION_H_
