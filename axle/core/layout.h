//===- layout.h - Physical layout of an array shape ------------------------===//
//
// XLA's Layout: minor_to_major plus the optional attributes the text format
// can carry (dim level types, tiles, tail padding alignment, index/pointer
// types, element size, memory space, split configs, physical shape, dynamic
// metadata prefix). Axle's backends only use minor_to_major today, but every
// attribute is kept so that text round-trips exactly.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_LAYOUT_H_
#define AXLE_CORE_LAYOUT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "axle/core/primitive_type.h"

namespace axle {

class Shape;

// One tile of a tiled layout. A dimension of kCombineDimension (printed '*')
// combines dimensions.
struct Tile {
  static constexpr int64_t kCombineDimension = INT64_MIN;
  std::vector<int64_t> dimensions;

  bool operator==(const Tile& other) const = default;
  std::string ToString() const;  // "(8,128)"
};

struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig& other) const = default;
  std::string ToString() const;  // "(0:1,2)"
};

enum class DimLevelType { kDense, kCompressed, kSingleton, kLooseCompressed };

class Layout {
 public:
  Layout() = default;
  explicit Layout(absl::Span<const int64_t> minor_to_major)
      : minor_to_major_(minor_to_major.begin(), minor_to_major.end()) {}
  Layout(const Layout& other);
  Layout& operator=(const Layout& other);
  Layout(Layout&&) = default;
  Layout& operator=(Layout&&) = default;
  ~Layout();

  const std::vector<int64_t>& minor_to_major() const { return minor_to_major_; }
  std::vector<int64_t>* mutable_minor_to_major() { return &minor_to_major_; }
  int64_t minor_to_major(int i) const { return minor_to_major_[i]; }

  struct DimLevel {
    DimLevelType type = DimLevelType::kDense;
    bool unique = true;
    bool ordered = true;
    bool operator==(const DimLevel&) const = default;
  };
  std::vector<DimLevel>& dim_levels() { return dim_levels_; }
  const std::vector<DimLevel>& dim_levels() const { return dim_levels_; }

  std::vector<Tile>& tiles() { return tiles_; }
  const std::vector<Tile>& tiles() const { return tiles_; }

  int64_t tail_padding_alignment_in_elements() const { return tail_padding_alignment_; }
  void set_tail_padding_alignment_in_elements(int64_t v) { tail_padding_alignment_ = v; }
  PrimitiveType index_primitive_type() const { return index_type_; }
  void set_index_primitive_type(PrimitiveType t) { index_type_ = t; }
  PrimitiveType pointer_primitive_type() const { return pointer_type_; }
  void set_pointer_primitive_type(PrimitiveType t) { pointer_type_ = t; }
  int64_t element_size_in_bits() const { return element_size_in_bits_; }
  void set_element_size_in_bits(int64_t v) { element_size_in_bits_ = v; }
  int64_t memory_space() const { return memory_space_; }
  void set_memory_space(int64_t v) { memory_space_ = v; }
  std::vector<SplitConfig>& split_configs() { return split_configs_; }
  const std::vector<SplitConfig>& split_configs() const { return split_configs_; }
  const Shape* physical_shape() const { return physical_shape_.get(); }
  void set_physical_shape(const Shape& shape);
  int64_t dynamic_shape_metadata_prefix_bytes() const { return dynamic_metadata_prefix_bytes_; }
  void set_dynamic_shape_metadata_prefix_bytes(int64_t v) { dynamic_metadata_prefix_bytes_ = v; }

  // True when only minor_to_major is set.
  bool IsPlain() const;

  bool operator==(const Layout& other) const;
  bool operator!=(const Layout& other) const { return !(*this == other); }

  // XLA's text: "{1,0}", "{1,0:T(8,128)(2,1)S(1)}".
  std::string ToString() const;

 private:
  std::vector<int64_t> minor_to_major_;
  std::vector<DimLevel> dim_levels_;
  std::vector<Tile> tiles_;
  int64_t tail_padding_alignment_ = 1;
  PrimitiveType index_type_ = PRIMITIVE_TYPE_INVALID;
  PrimitiveType pointer_type_ = PRIMITIVE_TYPE_INVALID;
  int64_t element_size_in_bits_ = 0;
  int64_t memory_space_ = 0;
  std::vector<SplitConfig> split_configs_;
  std::unique_ptr<Shape> physical_shape_;
  int64_t dynamic_metadata_prefix_bytes_ = 0;
};

}  // namespace axle

#endif  // AXLE_CORE_LAYOUT_H_
