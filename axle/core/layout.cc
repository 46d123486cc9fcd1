#include "axle/core/layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/shape.h"

namespace axle {

std::string Tile::ToString() const {
  std::string out = "(";
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (i) out += ",";
    if (dimensions[i] == kCombineDimension) {
      out += "*";
    } else {
      absl::StrAppend(&out, dimensions[i]);
    }
  }
  return out + ")";
}

std::string SplitConfig::ToString() const {
  return absl::StrCat("(", dimension, ":", absl::StrJoin(split_indices, ","), ")");
}

Layout::Layout(const Layout& other) { *this = other; }

Layout& Layout::operator=(const Layout& other) {
  if (this == &other) return *this;
  minor_to_major_ = other.minor_to_major_;
  dim_levels_ = other.dim_levels_;
  tiles_ = other.tiles_;
  tail_padding_alignment_ = other.tail_padding_alignment_;
  index_type_ = other.index_type_;
  pointer_type_ = other.pointer_type_;
  element_size_in_bits_ = other.element_size_in_bits_;
  memory_space_ = other.memory_space_;
  split_configs_ = other.split_configs_;
  physical_shape_ =
      other.physical_shape_ ? std::make_unique<Shape>(*other.physical_shape_) : nullptr;
  dynamic_metadata_prefix_bytes_ = other.dynamic_metadata_prefix_bytes_;
  return *this;
}

Layout::~Layout() = default;

void Layout::set_physical_shape(const Shape& shape) {
  physical_shape_ = std::make_unique<Shape>(shape);
}

bool Layout::IsPlain() const {
  return dim_levels_.empty() && tiles_.empty() && tail_padding_alignment_ == 1 &&
         index_type_ == PRIMITIVE_TYPE_INVALID && pointer_type_ == PRIMITIVE_TYPE_INVALID &&
         element_size_in_bits_ == 0 && memory_space_ == 0 && split_configs_.empty() &&
         !physical_shape_ && dynamic_metadata_prefix_bytes_ == 0;
}

bool Layout::operator==(const Layout& other) const {
  if (minor_to_major_ != other.minor_to_major_ || dim_levels_ != other.dim_levels_ ||
      tiles_ != other.tiles_ || tail_padding_alignment_ != other.tail_padding_alignment_ ||
      index_type_ != other.index_type_ || pointer_type_ != other.pointer_type_ ||
      element_size_in_bits_ != other.element_size_in_bits_ ||
      memory_space_ != other.memory_space_ || split_configs_ != other.split_configs_ ||
      dynamic_metadata_prefix_bytes_ != other.dynamic_metadata_prefix_bytes_) {
    return false;
  }
  if (!physical_shape_ || !other.physical_shape_) return !physical_shape_ && !other.physical_shape_;
  return *physical_shape_ == *other.physical_shape_;
}

std::string Layout::ToString() const {
  std::string out = "{" + absl::StrJoin(minor_to_major_, ",");
  bool colon = false;
  auto section = [&] {
    if (!colon) out += ":";
    colon = true;
  };
  if (!dim_levels_.empty()) {
    section();
    out += "D(";
    for (size_t i = 0; i < dim_levels_.size(); ++i) {
      if (i) out += ",";
      static constexpr const char* kAbbrev[] = {"D", "C", "S", "H"};
      out += kAbbrev[static_cast<int>(dim_levels_[i].type)];
      if (!dim_levels_[i].unique) out += "+";
      if (!dim_levels_[i].ordered) out += "~";
    }
    out += ")";
  }
  if (!tiles_.empty()) {
    section();
    out += "T";
    for (const Tile& tile : tiles_) out += tile.ToString();
  }
  if (tail_padding_alignment_ != 1) {
    section();
    absl::StrAppend(&out, "L(", tail_padding_alignment_, ")");
  }
  if (index_type_ != PRIMITIVE_TYPE_INVALID) {
    section();
    absl::StrAppend(&out, "#(", primitive_util::LowercasePrimitiveTypeName(index_type_), ")");
  }
  if (pointer_type_ != PRIMITIVE_TYPE_INVALID) {
    section();
    absl::StrAppend(&out, "*(", primitive_util::LowercasePrimitiveTypeName(pointer_type_), ")");
  }
  if (element_size_in_bits_ != 0) {
    section();
    absl::StrAppend(&out, "E(", element_size_in_bits_, ")");
  }
  if (memory_space_ != 0) {
    section();
    absl::StrAppend(&out, "S(", memory_space_, ")");
  }
  if (!split_configs_.empty()) {
    section();
    out += "SC";
    for (const SplitConfig& config : split_configs_) out += config.ToString();
  }
  if (physical_shape_) {
    section();
    absl::StrAppend(&out, "P(", physical_shape_->ToString(/*print_layout=*/true), ")");
  }
  if (dynamic_metadata_prefix_bytes_ > 0) {
    section();
    absl::StrAppend(&out, "M(", dynamic_metadata_prefix_bytes_, ")");
  }
  return out + "}";
}

}  // namespace axle
