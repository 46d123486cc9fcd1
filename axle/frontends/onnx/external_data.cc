//===- external_data.cc - Reading external tensor data, checked -------------===//
#include <fstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/frontends/onnx/external_data_internal.h"

namespace axle::onnx {
namespace {

namespace fs = std::filesystem;

// A non-negative decimal number without sign, spaces or overflow.
std::optional<int64_t> ParseOffset(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Whether `path` (canonical) is `dir` (canonical) or lies below it.
bool IsInside(const fs::path& path, const fs::path& dir) {
  fs::path rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

bool HasExternalData(const ::onnx::TensorProto& t) {
  return t.data_location() == ::onnx::TensorProto::EXTERNAL;
}

absl::StatusOr<std::string> ReadExternalData(const ::onnx::TensorProto& t, int64_t bytes,
                                             const std::optional<fs::path>& base_dir,
                                             const std::string& name) {
  auto error = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has external data ", parts...));
  };
  std::string location;
  std::optional<int64_t> offset = 0;
  std::optional<int64_t> length;
  for (const ::onnx::StringStringEntryProto& e : t.external_data()) {
    if (e.key() == "location") {
      location = e.value();
    } else if (e.key() == "offset" || e.key() == "length") {
      std::optional<int64_t> v = ParseOffset(e.value());
      if (!v) {
        return error("whose ", e.key(), " '", absl::CHexEscape(e.value()),
                     "' is not a non-negative decimal number");
      }
      (e.key() == "offset" ? offset : length) = v;
    } else if (e.key() == "checksum" || absl::StartsWith(e.key(), "prepacked")) {
      // Not checked (onnx and onnxruntime do not either); onnxruntime's own
      // prepacked weights are its business.
    } else {
      return error("with the unknown key '", absl::CHexEscape(e.key()),
                   "' (known: location, offset, length, checksum)");
    }
  }
  if (location.empty()) return error("without a 'location'");
  if (t.has_raw_data() || t.float_data_size() || t.int32_data_size() || t.int64_data_size() ||
      t.double_data_size() || t.uint64_data_size() || t.string_data_size()) {
    return error("and data of its own as well: it must have one or the other");
  }
  if (length && *length != bytes) {
    return error("of length ", *length, " bytes, but its shape and type need ", bytes);
  }
  if (!base_dir) {
    return absl::FailedPreconditionError(absl::StrCat(
        name, " keeps its data in the external file '", location,
        "', and a model read from bytes has no directory to find it in: load the model from its "
        "path, or give the directory of its external data"));
  }
  fs::path rel(location);
  if (rel.has_root_path()) {
    return error("at the absolute location '", location,
                 "': locations are relative to the model's directory");
  }
  fs::path normal = rel.lexically_normal();
  if (normal.empty() || *normal.begin() == ".." || normal == ".") {
    return error("at '", location, "', which is outside the model's directory");
  }
  fs::path file = *base_dir / normal;
  std::error_code ec;
  fs::file_status status = fs::status(file, ec);
  if (ec || !fs::exists(status)) {
    return absl::NotFoundError(
        absl::StrCat(name, " keeps its data in '", file.string(), "', which does not exist"));
  }
  // Symbolic links must not lead out of the directory either.
  fs::path canonical_dir = fs::canonical(*base_dir, ec);
  fs::path canonical_file = ec ? fs::path() : fs::canonical(file, ec);
  if (ec || !IsInside(canonical_file, canonical_dir)) {
    return error("in '", file.string(), "', which leads outside the model's directory");
  }
  if (!fs::is_regular_file(status)) {
    return error("in '", file.string(), "', which is not a regular file");
  }
  auto size = static_cast<int64_t>(fs::file_size(canonical_file, ec));
  if (ec) {
    return absl::DataLossError(absl::StrCat(name, ": cannot read '", file.string(), "'"));
  }
  if (*offset > size || bytes > size - *offset) {
    return error("at offset ", *offset, " of length ", bytes, " in '", file.string(),
                 "', which is past the end of that file (", size, " bytes)");
  }
  std::string data(static_cast<size_t>(bytes), '\0');
  std::ifstream in(canonical_file, std::ios::binary);
  if (bytes > 0) {
    in.seekg(*offset);
    in.read(data.data(), bytes);
  }
  if (!in) return absl::DataLossError(absl::StrCat(name, ": cannot read '", file.string(), "'"));
  return data;
}

}  // namespace axle::onnx
