//===- string_tensor.cc - String tensors as literals ------------------------===//
#include "axle/frontends/graph/string_tensor.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace axle::graph {

Literal MakeStringTensor(const std::vector<std::string>& strings,
                         const std::vector<int64_t>& dims) {
  int64_t total = 0;
  for (const std::string& s : strings) total += static_cast<int64_t>(s.size());
  Literal bytes(ShapeUtil::MakeShape(U8, {total}));
  Literal ends(ShapeUtil::MakeShape(S64, dims));
  int64_t at = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    if (!strings[i].empty()) {
      std::memcpy(static_cast<char*>(bytes.untyped_data()) + at, strings[i].data(),
                  strings[i].size());
    }
    at += static_cast<int64_t>(strings[i].size());
    ends.data<int64_t>()[i] = at;
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(bytes));
  parts.push_back(std::move(ends));
  return Literal::MakeTuple(std::move(parts));
}

bool IsStringTensorShape(const Shape& shape) {
  return shape.IsTuple() && shape.tuple_shapes_size() == 2 && shape.tuple_shapes(0).IsArray() &&
         shape.tuple_shapes(0).element_type() == U8 && shape.tuple_shapes(0).rank() == 1 &&
         shape.tuple_shapes(1).IsArray() && shape.tuple_shapes(1).element_type() == S64;
}

std::vector<int64_t> StringTensorDims(const Literal& tensor) {
  const Shape& ends = tensor.shape().tuple_shapes(1);
  return {ends.dimensions().begin(), ends.dimensions().end()};
}

absl::StatusOr<std::vector<std::string>> ReadStringTensor(const Literal& tensor,
                                                          const std::string& what) {
  if (!IsStringTensorShape(tensor.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a string tensor (u8[n], s64[...]), got ", tensor.shape().ToString(false)));
  }
  std::vector<Literal> parts = tensor.Clone().DecomposeTuple();
  const char* bytes = static_cast<const char*>(parts[0].untyped_data());
  const int64_t total = parts[0].element_count();
  std::vector<std::string> out;
  int64_t at = 0;
  for (int64_t i = 0; i < parts[1].element_count(); ++i) {
    int64_t end = parts[1].data<int64_t>()[i];
    if (end < at || end > total) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": string ", i, " ends at ", end,
                                                     ", outside [", at, ", ", total, "]"));
    }
    out.emplace_back(bytes + at, end - at);
    at = end;
  }
  return out;
}

}  // namespace axle::graph
