//===- npy.cc - NumPy .npy files <-> literals -----------------------------===//
//
// The header is a Python dict literal: {'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }, padded with spaces and a newline so that the
// data starts on a 64-byte boundary. The reader parses just that grammar
// (quoted strings, True/False, tuples of integers) and checks every size
// against the bytes it has, so that a corrupt file is an error, never a crash.
//
//===----------------------------------------------------------------------===//
#include "axle/core/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"

namespace axle {
namespace {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlignment = 64;
constexpr size_t kGrowthAxisMaxDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS
constexpr int kMaxRank = 64;                 // numpy's NPY_MAXDIMS

struct DescrEntry {
  PrimitiveType type;
  std::string_view descr;
};

// What Axle writes; the reader also accepts the other byte-order marks.
constexpr DescrEntry kDescrs[] = {
    {PRED, "|b1"},
    {S8, "|i1"},
    {S16, "<i2"},
    {S32, "<i4"},
    {S64, "<i8"},
    {U8, "|u1"},
    {U16, "<u2"},
    {U32, "<u4"},
    {U64, "<u8"},
    {F16, "<f2"},
    {F32, "<f4"},
    {F64, "<f8"},
    {C64, "<c8"},
    {C128, "<c16"},
    {BF16, "bfloat16"},
    {F8E4M3FN, "float8_e4m3fn"},
    {F8E5M2, "float8_e5m2"},
    {F8E4M3FNUZ, "float8_e4m3fnuz"},
    {F8E5M2FNUZ, "float8_e5m2fnuz"},
    {F8E4M3B11FNUZ, "float8_e4m3b11fnuz"},
    {F8E4M3, "float8_e4m3"},
    {F8E3M4, "float8_e3m4"},
    {F8E8M0FNU, "float8_e8m0fnu"},
    {F4E2M1FN, "float4_e2m1fn"},
    {S4, "int4"},
    {U4, "uint4"},
    {S2, "int2"},
    {U2, "uint2"},
    {S1, "int1"},
    {U1, "uint1"},
};

std::string TypeName(PrimitiveType type) {
  return std::string(primitive_util::LowercasePrimitiveTypeName(type));
}

// A dtype as read from a header: a known type, or `raw_bytes` of untyped data.
struct ParsedDescr {
  PrimitiveType type = PRIMITIVE_TYPE_INVALID;
  int raw_bytes = 0;
  bool big_endian = false;
};

std::optional<ParsedDescr> ParseDescr(std::string_view descr) {
  for (const DescrEntry& e : kDescrs) {
    if (e.descr.size() > 1 && e.descr[0] != '<' && e.descr[0] != '|' && descr == e.descr) {
      return ParsedDescr{e.type, 0, false};
    }
  }
  ParsedDescr out;
  if (!descr.empty() &&
      (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
    out.big_endian = descr[0] == '>';
    descr.remove_prefix(1);
  }
  if (descr.size() < 2) return std::nullopt;
  char kind = descr[0];
  int size = 0;
  for (char c : descr.substr(1)) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) || size > 1000000) return std::nullopt;
    size = size * 10 + (c - '0');
  }
  auto pick = [&](std::initializer_list<std::pair<int, PrimitiveType>> options)
      -> std::optional<ParsedDescr> {
    for (const auto& [bytes, type] : options) {
      if (bytes == size) {
        out.type = type;
        return out;
      }
    }
    return std::nullopt;
  };
  switch (kind) {
    case 'b':
      return pick({{1, PRED}});
    case 'i':
      return pick({{1, S8}, {2, S16}, {4, S32}, {8, S64}});
    case 'u':
      return pick({{1, U8}, {2, U16}, {4, U32}, {8, U64}});
    case 'f':
      return pick({{2, F16}, {4, F32}, {8, F64}});
    case 'c':
      return pick({{8, C64}, {16, C128}});
    case 'V':
      if (size <= 0) return std::nullopt;
      out.raw_bytes = size;
      return out;
    default:
      return std::nullopt;
  }
}

// --- Header dict ----------------------------------------------------------

struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  absl::Status Parse(Header* header) {
    SkipSpace();
    if (!Eat('{')) return Error("expects '{' at the start of the header");
    while (true) {
      SkipSpace();
      if (Eat('}')) break;
      std::string key;
      AXLE_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (!Eat(':')) return Error("expects ':' after a key");
      SkipSpace();
      if (key == "descr") {
        if (Peek() == '[') return Error("structured dtypes (a descr list) are not supported");
        std::string descr;
        AXLE_RETURN_IF_ERROR(ParseString(&descr));
        header->descr = descr;
      } else if (key == "fortran_order") {
        if (EatWord("True")) {
          header->fortran_order = true;
        } else if (EatWord("False")) {
          header->fortran_order = false;
        } else {
          return Error("expects True or False for 'fortran_order'");
        }
      } else if (key == "shape") {
        std::vector<int64_t> shape;
        AXLE_RETURN_IF_ERROR(ParseShape(&shape));
        header->shape = std::move(shape);
      } else {
        return Error(absl::StrCat("unexpected key '", absl::CEscape(key), "'"));
      }
      SkipSpace();
      if (Eat(',')) continue;
      if (Eat('}')) break;
      return Error("expects ',' or '}' after a value");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the header dict");
    if (!header->descr || !header->fortran_order || !header->shape) {
      return Error("the header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    return absl::OkStatus();
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool EatWord(std::string_view word) {
    if (!text_.substr(pos_).starts_with(word)) return false;
    pos_ += word.size();
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("bad .npy header at byte ", pos_, " of the dict: ", what));
  }

  absl::Status ParseString(std::string* out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expects a quoted string");
    size_t close = text_.find(quote, pos_ + 1);
    if (close == std::string_view::npos) return Error("unterminated string");
    *out = std::string(text_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    return absl::OkStatus();
  }

  absl::Status ParseShape(std::vector<int64_t>* shape) {
    if (!Eat('(')) return Error("expects '(' to start the shape");
    while (true) {
      SkipSpace();
      if (Eat(')')) return absl::OkStatus();
      if (!absl::ascii_isdigit(static_cast<unsigned char>(Peek()))) {
        return Error("expects a non-negative integer dimension");
      }
      int64_t d = 0;
      while (absl::ascii_isdigit(static_cast<unsigned char>(Peek()))) {
        if (d > (INT64_MAX - 9) / 10) return Error("dimension too large");
        d = d * 10 + (text_[pos_++] - '0');
      }
      Eat('L');  // Python 2 longs
      if (shape->size() >= kMaxRank) return Error("too many dimensions");
      shape->push_back(d);
      SkipSpace();
      if (Eat(',')) continue;
      if (Eat(')')) return absl::OkStatus();
      return Error("expects ',' or ')' in the shape");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string ShapeRepr(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

void AppendLittleEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t ReadLittleEndian(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

// Brings decoded elements to Axle's canonical storage: pred 0/1, sub-byte
// integers from their low bits (ml_dtypes leaves the upper bits unspecified).
void Canonicalize(Literal* literal) {
  PrimitiveType type = literal->shape().element_type();
  auto* data = static_cast<uint8_t*>(literal->untyped_data());
  int64_t n = literal->element_count();
  if (type == PRED) {
    for (int64_t i = 0; i < n; ++i) data[i] = data[i] != 0;
    return;
  }
  if (!primitive_util::IsIntegralType(type) || !primitive_util::IsSubByteType(type)) return;
  const int bits = primitive_util::BitWidth(type);
  const bool is_signed = primitive_util::IsSignedIntegralType(type);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t low = data[i] & ((1u << bits) - 1);
    if (is_signed && (low >> (bits - 1)) & 1) low |= static_cast<uint8_t>(0xff << bits);
    data[i] = low;
  }
}

}  // namespace

std::optional<std::string> NpyDescr(PrimitiveType type) {
  for (const DescrEntry& e : kDescrs) {
    if (e.type == type) return std::string(e.descr);
  }
  return std::nullopt;
}

absl::StatusOr<std::string> EncodeNpy(const Literal& literal) {
  const Shape& shape = literal.shape();
  std::optional<std::string> descr = NpyDescr(shape.element_type());
  if (!shape.IsArray() || !descr) {
    return absl::InvalidArgumentError(
        absl::StrCat(".npy files hold arrays; cannot write a literal of shape ", shape.ToString()));
  }
  for (int64_t d : shape.dimensions()) {
    if (d == Shape::kUnboundedSize) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot write an unbounded dynamic shape to .npy: ", shape.ToString()));
    }
  }
  std::string dict =
      absl::StrCat("{'descr': '", *descr,
                   "', 'fortran_order': False, 'shape': ", ShapeRepr(shape.dimensions()), ", }");
  if (shape.rank() > 0) {
    size_t digits = absl::StrCat(shape.dimensions(0)).size();
    dict.append(kGrowthAxisMaxDigits > digits ? kGrowthAxisMaxDigits - digits : 0, ' ');
  }
  // Version 1.0 has a 2-byte header length; 2.0 a 4-byte one.
  int length_bytes = 2;
  size_t prefix = kMagic.size() + 2 + length_bytes;
  size_t padded = ((prefix + dict.size() + 1 + kAlignment - 1) / kAlignment) * kAlignment;
  if (padded - prefix > 0xffff) {
    length_bytes = 4;
    prefix = kMagic.size() + 2 + length_bytes;
    padded = ((prefix + dict.size() + 1 + kAlignment - 1) / kAlignment) * kAlignment;
  }
  const size_t header_len = padded - prefix;
  dict.append(header_len - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::string out(kMagic);
  out.push_back(static_cast<char>(length_bytes == 2 ? 1 : 2));
  out.push_back(0);
  AppendLittleEndian(&out, header_len, length_bytes);
  out += dict;
  const size_t data_start = out.size();
  out.append(static_cast<const char*>(literal.untyped_data()), literal.size_bytes());
  if (primitive_util::IsSubByteType(shape.element_type()) &&
      primitive_util::IsIntegralType(shape.element_type())) {
    const uint8_t mask =
        static_cast<uint8_t>((1u << primitive_util::BitWidth(shape.element_type())) - 1);
    for (size_t i = data_start; i < out.size(); ++i) out[i] = static_cast<char>(out[i] & mask);
  }
  return out;
}

absl::StatusOr<Literal> DecodeNpy(std::string_view bytes, std::optional<PrimitiveType> expected) {
  auto error = [](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("bad .npy data: ", what));
  };
  if (bytes.size() < kMagic.size() + 4 || !bytes.starts_with(kMagic)) {
    return error("it does not start with the .npy magic string \\x93NUMPY");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  int length_bytes;
  if (major == 1) {
    length_bytes = 2;
  } else if (major == 2 || major == 3) {
    length_bytes = 4;
  } else {
    return error(absl::StrCat("unsupported format version ", major, ".", minor,
                              " (1.0, 2.0 and 3.0 are supported)"));
  }
  const size_t prefix = kMagic.size() + 2 + length_bytes;
  if (bytes.size() < prefix) return error("the file ends inside the header length");
  const uint64_t header_len = ReadLittleEndian(bytes, 8, length_bytes);
  if (header_len > bytes.size() - prefix) {
    return error(absl::StrCat("the header says it is ", header_len, " bytes long but only ",
                              bytes.size() - prefix, " bytes follow"));
  }
  std::string_view header_text = bytes.substr(prefix, header_len);
  Header header;
  AXLE_RETURN_IF_ERROR(HeaderParser(header_text).Parse(&header));

  std::optional<ParsedDescr> parsed = ParseDescr(*header.descr);
  if (!parsed) {
    return error(absl::StrCat("unsupported dtype '", absl::CEscape(*header.descr), "'"));
  }
  PrimitiveType type = parsed->type;
  if (parsed->raw_bytes > 0) {
    if (!expected) {
      return error(absl::StrCat("the dtype '", absl::CEscape(*header.descr),
                                "' is untyped bytes; name the element type to read it as"));
    }
    if (primitive_util::ByteWidth(*expected) != parsed->raw_bytes) {
      return error(absl::StrCat("the dtype '", absl::CEscape(*header.descr), "' has ",
                                parsed->raw_bytes, "-byte elements but ", TypeName(*expected),
                                " elements take ", primitive_util::ByteWidth(*expected)));
    }
    type = *expected;
  } else if (expected && *expected != type) {
    return error(absl::StrCat("it holds ", TypeName(type), " ('", *header.descr, "') but ",
                              TypeName(*expected), " was expected"));
  }

  const std::vector<int64_t>& dims = *header.shape;
  const int64_t width = primitive_util::ByteWidth(type);
  int64_t data_bytes = width;
  bool empty = std::find(dims.begin(), dims.end(), 0) != dims.end();
  for (int64_t d : dims) {
    if (empty) {
      data_bytes = 0;
      break;
    }
    if (__builtin_mul_overflow(data_bytes, d, &data_bytes)) return error("the shape is too large");
  }
  const size_t data_start = prefix + header_len;
  const uint64_t available = bytes.size() - data_start;
  if (static_cast<uint64_t>(data_bytes) != available) {
    return error(absl::StrCat("shape ", ShapeRepr(dims), " of ", TypeName(type), " needs ",
                              data_bytes, " data bytes but the file has ", available));
  }

  Literal literal(ShapeUtil::MakeShape(type, dims));
  auto* out = static_cast<char*>(literal.untyped_data());
  const char* in = bytes.data() + data_start;
  const int64_t n = literal.element_count();
  if (*header.fortran_order && dims.size() > 1) {
    // Column-major: dimension 0 varies fastest. Walk the row-major output.
    std::vector<int64_t> minor_to_major(dims.size());
    std::iota(minor_to_major.begin(), minor_to_major.end(), 0);
    const std::vector<int64_t> col_strides = ShapeUtil::StridesInLayout(dims, minor_to_major);
    std::vector<int64_t> index(dims.size(), 0);
    int64_t source = 0;
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(out + i * width, in + source * width, width);
      for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
        source += col_strides[d];
        if (++index[d] < dims[d]) break;
        source -= col_strides[d] * dims[d];
        index[d] = 0;
      }
    }
  } else if (data_bytes > 0) {
    std::memcpy(out, in, data_bytes);
  }
  if (parsed->big_endian) {
    const int part = primitive_util::IsComplexType(type) ? width / 2 : width;
    for (int64_t i = 0; i + part <= data_bytes; i += part) std::reverse(out + i, out + i + part);
  }
  Canonicalize(&literal);
  return literal;
}

absl::Status WriteNpy(const Literal& literal, const std::string& path) {
  absl::StatusOr<std::string> bytes = EncodeNpy(literal);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", bytes.status().message()));
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("cannot open ", path, " for writing: ", std::strerror(errno)));
  }
  size_t written = std::fwrite(bytes->data(), 1, bytes->size(), file);
  int close_result = std::fclose(file);
  if (written != bytes->size() || close_result != 0) {
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> ReadNpy(const std::string& path, std::optional<PrimitiveType> expected) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string bytes;
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0) bytes.append(buffer, got);
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return absl::DataLossError(absl::StrCat("cannot read ", path));
  absl::StatusOr<Literal> literal = DecodeNpy(bytes, expected);
  if (!literal.ok()) {
    return absl::Status(literal.status().code(),
                        absl::StrCat(path, ": ", literal.status().message()));
  }
  return literal;
}

}  // namespace axle
