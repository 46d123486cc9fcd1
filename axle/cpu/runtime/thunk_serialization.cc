//===- thunk_serialization.cc - Thunks as bytes, and back ------------------===//
#include "axle/cpu/runtime/thunk_serialization.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/control_flow_thunk.h"
#include "axle/cpu/runtime/conv_chain.h"

namespace axle::cpu {

namespace {
std::atomic<bool> keep_serializable_state{false};
}  // namespace

void SetKeepSerializableState(bool keep) { keep_serializable_state.store(keep); }
bool KeepSerializableState() { return keep_serializable_state.load(); }

bool IsArrayTypeNumber(int64_t type) {
  if (type <= 0 || type >= (int64_t{1} << 16)) return false;
  const auto primitive = static_cast<PrimitiveType>(type);
  return primitive_util::LowercasePrimitiveTypeName(primitive) != "invalid" &&
         primitive_util::IsArrayType(primitive);
}

// --- ThunkWriter ---

void ThunkWriter::Int(int64_t value) {
  char bytes[8];
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff);
  bytes_.append(bytes, 8);
}

void ThunkWriter::Double(double value) {
  int64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  Int(bits);
}

void ThunkWriter::String(absl::string_view value) {
  Int(static_cast<int64_t>(value.size()));
  bytes_.append(value.data(), value.size());
}

void ThunkWriter::Ints(absl::Span<const int64_t> values) {
  Int(static_cast<int64_t>(values.size()));
  for (int64_t value : values) Int(value);
}

void ThunkWriter::Pairs(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  Int(static_cast<int64_t>(pairs.size()));
  for (const auto& [a, b] : pairs) {
    Int(a);
    Int(b);
  }
}

void ThunkWriter::Shape(const ::axle::Shape& shape) {
  Int(static_cast<int64_t>(shape.element_type()));
  Ints(shape.dimensions());
  Bool(shape.has_layout());
  if (shape.has_layout()) Ints(shape.layout().minor_to_major());
}

void ThunkWriter::Literal(const ::axle::Literal* literal) {
  if (literal == nullptr) {
    Int(-1);
    return;
  }
  auto [it, inserted] =
      literal_index_.try_emplace(literal->untyped_data(), static_cast<int64_t>(literals_.size()));
  // The same data under another shape (a reshaped view) is another entry.
  if (!inserted && !(literals_[it->second]->shape() == literal->shape())) {
    Int(static_cast<int64_t>(literals_.size()));
    literals_.push_back(literal);
    return;
  }
  if (inserted) literals_.push_back(literal);
  Int(it->second);
}

absl::Status ThunkWriter::Kernel(const CompiledKernel& kernel) {
  if (kernel.symbol().empty()) {
    return absl::UnimplementedError("a kernel without a symbol cannot be serialized");
  }
  AddSymbol(kernel.symbol(), reinterpret_cast<void*>(kernel.function()));
  String(kernel.symbol());
  Int(kernel.outer_size());
  Int(kernel.num_parameters());
  Int(kernel.num_outputs());
  Int(kernel.partials_bytes());
  return absl::OkStatus();
}

absl::Status ThunkWriter::ScalarFunction(const CompiledScalarFunction& function,
                                         absl::string_view what) {
  if (function.symbol().empty() || function.function() == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": a scalar function without a symbol cannot be serialized"));
  }
  AddSymbol(function.symbol(), reinterpret_cast<void*>(function.function()));
  String(function.symbol());
  return absl::OkStatus();
}

void ThunkWriter::AddSymbol(const std::string& symbol, void* address) {
  auto [it, inserted] = symbol_index_.try_emplace(symbol, static_cast<int64_t>(symbols_.size()));
  if (inserted) {
    symbols_.push_back(symbol);
    addresses_.push_back(address);
  }
}

void ThunkWriter::Begin(ThunkTag tag, const ::axle::cpu::Thunk& thunk) {
  Int(static_cast<int64_t>(tag));
  String(thunk.name());
}

absl::Status ThunkWriter::Thunk(const ::axle::cpu::Thunk& thunk) { return thunk.Serialize(*this); }

absl::Status ThunkWriter::Sequence(const ThunkSequence& sequence) {
  Int(static_cast<int64_t>(sequence.size()));
  for (const std::unique_ptr<::axle::cpu::Thunk>& thunk : sequence) {
    if (absl::Status status = Thunk(*thunk); !status.ok()) return status;
  }
  return absl::OkStatus();
}

// --- ThunkReader ---

void ThunkReader::Fail(absl::string_view what) {
  if (!status_.ok()) return;
  status_ = absl::InvalidArgumentError(
      absl::StrCat("serialized cpu program: ", what, " (at byte ", position_, ")"));
}

int64_t ThunkReader::Int() {
  if (!status_.ok()) return 0;
  if (bytes_.size() - position_ < 8) {
    Fail("truncated");
    return 0;
  }
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[position_ + i])) << (8 * i);
  }
  position_ += 8;
  return static_cast<int64_t>(value);
}

double ThunkReader::Double() {
  const int64_t bits = Int();
  double value = 0;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

int64_t ThunkReader::Count(int64_t min_bytes) {
  const int64_t count = Int();
  if (count < 0 || (min_bytes > 0 && count > static_cast<int64_t>(bytes_.size() - position_) /
                                                 std::max<int64_t>(1, min_bytes))) {
    Fail(absl::StrCat("a count of ", count, " that the bytes left cannot hold"));
    return 0;
  }
  return count;
}

std::string ThunkReader::String() {
  const int64_t size = Count(1);
  if (!status_.ok()) return "";
  std::string value(bytes_.substr(position_, size));
  position_ += size;
  return value;
}

std::vector<int64_t> ThunkReader::Ints() {
  const int64_t count = Count();
  std::vector<int64_t> values;
  values.reserve(count);
  for (int64_t i = 0; i < count && status_.ok(); ++i) values.push_back(Int());
  return values;
}

std::vector<std::pair<int64_t, int64_t>> ThunkReader::Pairs() {
  const int64_t count = Count(16);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t i = 0; i < count && status_.ok(); ++i) {
    const int64_t a = Int();
    pairs.emplace_back(a, Int());
  }
  return pairs;
}

::axle::Shape ThunkReader::Shape() {
  const int64_t type = Int();
  std::vector<int64_t> dims = Ints();
  const bool has_layout = Bool();
  std::vector<int64_t> minor_to_major;
  if (has_layout) minor_to_major = Ints();
  if (!status_.ok()) return {};
  if (!IsArrayTypeNumber(type)) {
    Fail(absl::StrCat("element type ", type, " is not an array type"));
    return {};
  }
  for (int64_t d : dims) {
    if (d < 0) Fail("a negative dimension");
  }
  if (has_layout && minor_to_major.size() != dims.size()) Fail("a layout of another rank");
  if (!status_.ok()) return {};
  const auto element_type = static_cast<PrimitiveType>(type);
  return has_layout ? ShapeUtil::MakeShapeWithDenseLayout(element_type, dims, minor_to_major)
                    : ShapeUtil::MakeShape(element_type, dims);
}

int64_t ThunkReader::Value() {
  const int64_t value = Int();
  if (status_.ok() && (value < 0 || value >= num_values_)) {
    Fail(absl::StrCat("value ", value, " of ", num_values_));
    return 0;
  }
  return value;
}

std::vector<int64_t> ThunkReader::Values() {
  const int64_t count = Count();
  std::vector<int64_t> values;
  for (int64_t i = 0; i < count && status_.ok(); ++i) values.push_back(Value());
  return values;
}

std::vector<std::pair<int64_t, int64_t>> ThunkReader::ValuePairs() {
  const int64_t count = Count(16);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t i = 0; i < count && status_.ok(); ++i) {
    const int64_t a = Value();
    pairs.emplace_back(a, Value());
  }
  return pairs;
}

std::shared_ptr<const ::axle::Literal> ThunkReader::Literal() {
  const int64_t index = Int();
  if (!status_.ok() || index == -1) return nullptr;
  if (index < 0 || index >= static_cast<int64_t>(literals_.size())) {
    Fail(absl::StrCat("literal ", index, " of ", literals_.size()));
    return nullptr;
  }
  return literals_[index];
}

std::unique_ptr<CompiledKernel> ThunkReader::Kernel() {
  const std::string symbol = String();
  const int64_t outer_size = Int();
  const int64_t num_parameters = Int();
  const int64_t num_outputs = Int();
  const int64_t partials_bytes = Int();
  if (!status_.ok()) return nullptr;
  if (outer_size < 0 || num_parameters < 0 || num_outputs < 0) {
    Fail(absl::StrCat("kernel ", symbol, " has a negative size"));
    return nullptr;
  }
  if (partials_bytes < 0 || partials_bytes > CompiledKernel::kMaxPartialsBytes ||
      (partials_bytes > 0 && outer_size < 2)) {
    Fail(absl::StrCat("kernel ", symbol, " has a partial results' buffer of ", partials_bytes,
                      " bytes"));
    return nullptr;
  }
  void* address = Resolve(symbol);
  if (address == nullptr) return nullptr;
  auto kernel =
      std::make_unique<CompiledKernel>(nullptr, reinterpret_cast<CompiledKernel::Function>(address),
                                       outer_size, num_parameters, num_outputs);
  kernel->set_symbol(symbol);
  kernel->set_partials_bytes(partials_bytes);
  return kernel;
}

std::unique_ptr<CompiledScalarFunction> ThunkReader::ScalarFunction() {
  std::string symbol = String();
  if (!status_.ok()) return nullptr;
  void* address = Resolve(symbol);
  if (address == nullptr) return nullptr;
  auto function = std::make_unique<CompiledScalarFunction>(
      nullptr, reinterpret_cast<CompiledScalarFunction::Function>(address));
  function->set_symbol(std::move(symbol));
  return function;
}

void* ThunkReader::Resolve(const std::string& symbol) {
  if (!status_.ok()) return nullptr;
  absl::StatusOr<void*> address = resolver_(symbol);
  if (address.ok() && *address != nullptr) return *address;
  status_ = absl::NotFoundError(
      absl::StrCat("serialized cpu program: kernel ", symbol,
                   " not found: ", address.ok() ? "null address" : address.status().message()));
  return nullptr;
}

std::unique_ptr<::axle::cpu::Thunk> ThunkReader::Thunk() {
  const int64_t tag = Int();
  std::string name = String();
  if (!status_.ok()) return nullptr;
  std::unique_ptr<::axle::cpu::Thunk> thunk;
  switch (static_cast<ThunkTag>(tag)) {
    case ThunkTag::kKernel:
      thunk = LoadKernelThunk(name, *this);
      break;
    case ThunkTag::kCopy:
      thunk = LoadCopyThunk(name, *this);
      break;
    case ThunkTag::kWhile:
      thunk = LoadWhileThunk(name, *this);
      break;
    case ThunkTag::kConditional:
      thunk = LoadConditionalThunk(name, *this);
      break;
    case ThunkTag::kDnnlDot:
      thunk = LoadDnnlDotThunk(name, *this);
      break;
    case ThunkTag::kSmallDot:
      thunk = LoadSmallDotThunk(name, *this);
      break;
    case ThunkTag::kLoopDot:
      thunk = LoadLoopDotThunk(name, *this);
      break;
    case ThunkTag::kDnnlConvolution:
      thunk = LoadDnnlConvolutionThunk(name, *this);
      break;
    case ThunkTag::kLoopConvolution:
      thunk = LoadLoopConvolutionThunk(name, *this);
      break;
    case ThunkTag::kDynamicUpdateSlice:
      thunk = LoadDynamicUpdateSliceThunk(name, *this);
      break;
    case ThunkTag::kTopK:
      thunk = LoadTopKThunk(name, *this);
      break;
    case ThunkTag::kSort:
      thunk = LoadSortThunk(name, *this);
      break;
    case ThunkTag::kFft:
      thunk = LoadFftThunk(name, *this);
      break;
    case ThunkTag::kComparatorSort:
      thunk = LoadComparatorSortThunk(name, *this);
      break;
    case ThunkTag::kScatter:
      thunk = LoadScatterThunk(name, *this);
      break;
    case ThunkTag::kSelectAndScatter:
      thunk = LoadSelectAndScatterThunk(name, *this);
      break;
    case ThunkTag::kRngBitGenerator:
      thunk = LoadRngBitGeneratorThunk(name, *this);
      break;
    case ThunkTag::kRng:
      thunk = LoadRngThunk(name, *this);
      break;
    case ThunkTag::kRngGetAndUpdateState:
      thunk = LoadRngGetAndUpdateStateThunk(name, *this);
      break;
    case ThunkTag::kCustomCall:
      thunk = LoadCustomCallThunk(name, *this);
      break;
    case ThunkTag::kConvChain:
      thunk = LoadConvChainThunk(name, *this);
      break;
    default:
      Fail(absl::StrCat("unknown thunk tag ", tag));
      return nullptr;
  }
  if (thunk == nullptr) Fail(absl::StrCat("thunk %", name, " did not load"));
  return status_.ok() ? std::move(thunk) : nullptr;
}

ThunkSequence ThunkReader::Sequence() {
  const int64_t count = Count(16);
  ThunkSequence sequence;
  for (int64_t i = 0; i < count && status_.ok(); ++i) {
    std::unique_ptr<::axle::cpu::Thunk> thunk = Thunk();
    if (thunk != nullptr) sequence.push_back(std::move(thunk));
  }
  return sequence;
}

// --- The thunks of thunk.h and control_flow_thunk.h ---

absl::Status Thunk::Serialize(ThunkWriter& /*writer*/) const {
  return absl::UnimplementedError(
      absl::StrCat("thunk %", name(), " has no serialized form yet (cpu AOT)"));
}

absl::Status KernelThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kKernel, *this);
  if (absl::Status status = writer.Kernel(*kernel_); !status.ok()) return status;
  writer.Ints(operand_values_);
  writer.Ints(output_values_);
  writer.Pairs(in_place_);
  writer.Int(split_alignment_);
  writer.Int(expensive_elements_);
  return absl::OkStatus();
}

std::unique_ptr<Thunk> LoadKernelThunk(std::string name, ThunkReader& reader) {
  std::unique_ptr<CompiledKernel> kernel = reader.Kernel();
  std::vector<int64_t> operands = reader.Values();
  std::vector<int64_t> outputs = reader.Values();
  std::vector<std::pair<int64_t, int64_t>> in_place = reader.ValuePairs();
  const int64_t split_alignment = reader.Int();
  const int64_t expensive_elements = reader.Int();
  if (!reader.ok()) return nullptr;
  if (static_cast<int64_t>(operands.size()) != kernel->num_parameters() ||
      static_cast<int64_t>(outputs.size()) != kernel->num_outputs()) {
    reader.Fail(
        absl::StrCat("kernel thunk %", name, ": operands and outputs do not match its kernel"));
    return nullptr;
  }
  auto thunk =
      std::make_unique<KernelThunk>(std::move(name), std::move(kernel), std::move(operands),
                                    std::move(outputs), std::move(in_place));
  if (split_alignment > 0) thunk->SplitOncePerThread(split_alignment);
  thunk->SetExpensiveElements(expensive_elements);
  return thunk;
}

absl::Status CopyThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kCopy, *this);
  writer.Pairs(copies_);
  return absl::OkStatus();
}

std::unique_ptr<Thunk> LoadCopyThunk(std::string name, ThunkReader& reader) {
  std::vector<std::pair<int64_t, int64_t>> copies = reader.ValuePairs();
  if (!reader.ok()) return nullptr;
  return std::make_unique<CopyThunk>(std::move(name), std::move(copies));
}

absl::Status WhileThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kWhile, *this);
  writer.Pairs(init_.copies());
  if (absl::Status status = writer.Sequence(condition_); !status.ok()) return status;
  writer.Int(condition_value_);
  return writer.Sequence(body_);
}

std::unique_ptr<Thunk> LoadWhileThunk(std::string name, ThunkReader& reader) {
  std::vector<std::pair<int64_t, int64_t>> init = reader.ValuePairs();
  ThunkSequence condition = reader.Sequence();
  const int64_t condition_value = reader.Value();
  ThunkSequence body = reader.Sequence();
  if (!reader.ok()) return nullptr;
  return std::make_unique<WhileThunk>(std::move(name), std::move(init), std::move(condition),
                                      condition_value, std::move(body));
}

absl::Status ConditionalThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kConditional, *this);
  writer.Int(selector_);
  writer.Bool(selector_is_pred_);
  writer.Int(static_cast<int64_t>(branches_.size()));
  for (const ThunkSequence& branch : branches_) {
    if (absl::Status status = writer.Sequence(branch); !status.ok()) return status;
  }
  return absl::OkStatus();
}

std::unique_ptr<Thunk> LoadConditionalThunk(std::string name, ThunkReader& reader) {
  const int64_t selector = reader.Value();
  const bool selector_is_pred = reader.Bool();
  const int64_t count = reader.Count();
  std::vector<ThunkSequence> branches;
  for (int64_t i = 0; i < count && reader.ok(); ++i) branches.push_back(reader.Sequence());
  if (!reader.ok()) return nullptr;
  if (branches.empty() || (selector_is_pred && branches.size() != 2)) {
    reader.Fail(absl::StrCat("conditional %", name, " with ", branches.size(), " branches"));
    return nullptr;
  }
  return std::make_unique<ConditionalThunk>(std::move(name), selector, selector_is_pred,
                                            std::move(branches));
}

}  // namespace axle::cpu
