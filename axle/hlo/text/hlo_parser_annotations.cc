//===- hlo_parser_annotations.cc - Metadata, shardings, device lists -----===//
//
// The annotation attributes of HLO text: metadata={...} (and its list form),
// frontend_attributes, parameter_replication, sharding={...} in all of XLA's
// forms (maximal, replicated, manual, tiled with explicit or iota device
// lists, tuple shardings, named shardings over meshes), replica_groups in
// list, iota and mesh form, output_to_operand_aliasing and domains.
// Shardings are returned as their canonical text (HloSharding).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "axle/core/literal_text.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

// --- Metadata and frontend attributes -------------------------------------------------

bool HloParserImpl::ParseMetadata(OpMetadata* metadata) {
  std::optional<std::string> op_type, op_name, source_file, deduplicated_name, scheduling_name;
  std::optional<int64_t> source_line, source_end_line, source_column, source_end_column,
      stack_frame_id;
  std::optional<std::vector<int64_t>> profile_type;
  AttrMap attrs;
  attrs["op_type"] = StringAttr(false, &op_type);
  attrs["op_name"] = StringAttr(false, &op_name);
  attrs["source_file"] = StringAttr(false, &source_file);
  attrs["source_line"] = Int32Attr(false, &source_line);
  attrs["source_end_line"] = Int32Attr(false, &source_end_line);
  attrs["source_column"] = Int32Attr(false, &source_column);
  attrs["source_end_column"] = Int32Attr(false, &source_end_column);
  attrs["profile_type"] = Int64ListAttr(false, &profile_type);
  attrs["deduplicated_name"] = StringAttr(false, &deduplicated_name);
  attrs["scheduling_name"] = StringAttr(false, &scheduling_name);
  attrs["stack_frame_id"] = Int32Attr(false, &stack_frame_id);
  size_t offset = lexer_.token_start();
  if (!ParseSubAttributes(attrs)) return false;
  OpMetadata result;
  if (op_type) result.set_op_type(*op_type);
  if (op_name) result.set_op_name(*op_name);
  if (source_file) result.set_source_file(*source_file);
  if (source_line) result.set_source_line(static_cast<int32_t>(*source_line));
  if (source_end_line) result.set_source_end_line(static_cast<int32_t>(*source_end_line));
  if (source_column) result.set_source_column(static_cast<int32_t>(*source_column));
  if (source_end_column) result.set_source_end_column(static_cast<int32_t>(*source_end_column));
  if (profile_type) {
    for (int64_t type : *profile_type) {
      // ProfileType: INVALID, WINDOW, FLAG, INTEGER.
      if (type < 0 || type > 3) return Error(offset, absl::StrCat("invalid profile_type ", type));
      result.add_profile_type(static_cast<int32_t>(type));
    }
  }
  if (deduplicated_name) result.set_deduplicated_name(*deduplicated_name);
  if (scheduling_name) result.set_scheduling_name(*scheduling_name);
  if (stack_frame_id) result.set_stack_frame_id(static_cast<int32_t>(*stack_frame_id));
  *metadata = std::move(result);
  return true;
}

std::string OpMetadataToText(const OpMetadata& m) {
  std::vector<std::string> parts;
  auto quoted = [](absl::string_view s) { return absl::StrCat("\"", absl::CEscape(s), "\""); };
  if (!m.op_type().empty()) parts.push_back(absl::StrCat("op_type=", quoted(m.op_type())));
  if (!m.op_name().empty()) parts.push_back(absl::StrCat("op_name=", quoted(m.op_name())));
  if (!m.source_file().empty()) {
    parts.push_back(absl::StrCat("source_file=", quoted(m.source_file())));
  }
  if (m.source_line() != 0) parts.push_back(absl::StrCat("source_line=", m.source_line()));
  if (m.source_end_line() != 0) {
    parts.push_back(absl::StrCat("source_end_line=", m.source_end_line()));
  }
  if (m.source_column() != 0) parts.push_back(absl::StrCat("source_column=", m.source_column()));
  if (m.source_end_column() != 0) {
    parts.push_back(absl::StrCat("source_end_column=", m.source_end_column()));
  }
  if (!m.profile_type().empty()) {
    parts.push_back(absl::StrCat("profile_type={", absl::StrJoin(m.profile_type(), ","), "}"));
  }
  if (!m.deduplicated_name().empty()) {
    parts.push_back(absl::StrCat("deduplicated_name=", quoted(m.deduplicated_name())));
  }
  if (!m.scheduling_name().empty()) {
    parts.push_back(absl::StrCat("scheduling_name=", quoted(m.scheduling_name())));
  }
  if (m.stack_frame_id() != 0) parts.push_back(absl::StrCat("stack_frame_id=", m.stack_frame_id()));
  return absl::StrJoin(parts, " ");
}

bool HloParserImpl::ParseSingleOrListMetadata(std::vector<OpMetadata>* metadata) {
  if (kind() == TokKind::kLbrace && lexer_.LookAhead() == TokKind::kLbrace) {
    return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
      metadata->emplace_back();
      return ParseMetadata(&metadata->back());
    });
  }
  metadata->emplace_back();
  return ParseMetadata(&metadata->back());
}

bool HloParserImpl::ParseStringOrJsonDict(std::string* value) {
  if (kind() == TokKind::kString) return ParseString(value);
  if (kind() == TokKind::kLbrace) return ParseJsonDict(value);
  return TokenError("expects a string or a JSON dictionary");
}

bool HloParserImpl::ParseFrontendAttributes(FrontendAttributes* attributes) {
  if (!ParseToken(TokKind::kLbrace, "expected '{' to start frontend attributes")) return false;
  if (kind() != TokKind::kRbrace) {
    do {
      std::string key, value;
      if (!ParseAttributeName(&key)) return false;
      if (!ParseStringOrJsonDict(&value)) return false;
      (*attributes)[key] = std::move(value);
    } while (EatIfPresent(TokKind::kComma));
  }
  return ParseToken(TokKind::kRbrace, "expects '}' at the end of frontend attributes");
}

bool HloParserImpl::ParseParameterReplication(std::vector<bool>* replication) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    bool v = false;
    if (!ParseBool(&v)) return false;
    replication->push_back(v);
    return true;
  });
}

bool HloParserImpl::ParseBoolListOrBool(std::vector<bool>* values) {
  if (kind() == TokKind::kw_true || kind() == TokKind::kw_false) {
    values->push_back(kind() == TokKind::kw_true);
    Lex();
    return true;
  }
  return ParseParameterReplication(values);
}

// --- Shardings ---------------------------------------------------------------------

namespace {

int64_t Product(const std::vector<int64_t>& dims, bool* overflow) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && product > std::numeric_limits<int64_t>::max() / d)) {
      *overflow = true;
      return 0;
    }
    product *= d;
  }
  return product;
}

// The number of devices of a mesh of named axes.
int64_t MeshSize(const std::vector<std::pair<std::string, int64_t>>& axes, bool* overflow) {
  std::vector<int64_t> sizes;
  sizes.reserve(axes.size());
  for (const auto& axis : axes) sizes.push_back(axis.second);
  return Product(sizes, overflow);
}

// XLA's canonical iota: size-1 dimensions dropped and dimensions that stay
// adjacent under the transpose merged.
void CanonicalizeIota(std::vector<int64_t>* dims, std::vector<int64_t>* perm) {
  if (perm->empty()) {
    for (size_t i = 0; i < dims->size(); ++i) perm->push_back(static_cast<int64_t>(i));
  }
  for (int64_t i = static_cast<int64_t>(dims->size()) - 1; i >= 0 && dims->size() > 1; --i) {
    if ((*dims)[i] != 1) continue;
    dims->erase(dims->begin() + i);
    perm->erase(std::find(perm->begin(), perm->end(), i));
    for (int64_t& p : *perm) {
      if (p > i) --p;
    }
  }
  bool changed = true;
  while (changed && perm->size() > 1) {
    changed = false;
    for (size_t i = 0; i + 1 < perm->size(); ++i) {
      int64_t d = (*perm)[i];
      if ((*perm)[i + 1] != d + 1) continue;
      (*dims)[d] *= (*dims)[d + 1];
      dims->erase(dims->begin() + d + 1);
      perm->erase(perm->begin() + i + 1);
      for (int64_t& p : *perm) {
        if (p > d) --p;
      }
      changed = true;
      break;
    }
  }
}

std::string TileAssignmentText(const std::vector<int64_t>& dims, std::vector<int64_t> reshape,
                               std::vector<int64_t> perm, const std::vector<int64_t>& devices) {
  std::string out = absl::StrCat("devices=[", absl::StrJoin(dims, ","), "]");
  if (reshape.empty()) return absl::StrCat(out, absl::StrJoin(devices, ","));
  CanonicalizeIota(&reshape, &perm);
  absl::StrAppend(&out, "<=[", absl::StrJoin(reshape, ","), "]");
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (!identity) absl::StrAppend(&out, "T(", absl::StrJoin(perm, ","), ")");
  return out;
}

std::string MetadataListText(const std::vector<OpMetadata>& metadata) {
  if (metadata.empty()) return "";
  if (metadata.size() == 1) return absl::StrCat(" metadata={", OpMetadataToText(metadata[0]), "}");
  std::vector<std::string> items;
  items.reserve(metadata.size());
  for (const OpMetadata& m : metadata) items.push_back(absl::StrCat("{", OpMetadataToText(m), "}"));
  return absl::StrCat(" metadata={", absl::StrJoin(items, ", "), "}");
}

}  // namespace

bool HloParserImpl::ParseTileAssignment(std::vector<int64_t>* dims,
                                        std::vector<int64_t>* iota_reshape,
                                        std::vector<int64_t>* iota_perm,
                                        std::vector<int64_t>* devices, bool allow_explicit) {
  if (!ParseToken(TokKind::kLsquare, "expected '[' to start sharding devices shape")) return false;
  do {
    int64_t d = 0;
    if (!ParseInt64(&d)) return false;
    dims->push_back(d);
  } while (EatIfPresent(TokKind::kComma));
  if (!ParseToken(TokKind::kRsquare, "expected ']' to end sharding devices shape")) return false;
  if (EatIfPresent(TokKind::kLeq)) {
    if (!ParseToken(TokKind::kLsquare, "expected '[' to start sharding iota_reshape_dims")) {
      return false;
    }
    do {
      int64_t d = 0;
      if (!ParseInt64(&d)) return false;
      iota_reshape->push_back(d);
    } while (EatIfPresent(TokKind::kComma));
    if (!ParseToken(TokKind::kRsquare, "expected ']' to end sharding iota_reshape_dims")) {
      return false;
    }
    if (kind() == TokKind::kIdent && lexer_.str_val() == "T") {
      Lex();
      if (!ParseToken(TokKind::kLparen, "expected 'T(' to start iota_transpose_perm")) return false;
      do {
        int64_t d = 0;
        if (!ParseInt64(&d)) return false;
        iota_perm->push_back(d);
      } while (EatIfPresent(TokKind::kComma));
      if (!ParseToken(TokKind::kRparen, "expected ')' to end iota_transpose_perm")) return false;
    } else if (iota_reshape->size() > 1) {
      return TokenError("expected 'T(' to start sharding devices iota_transpose_perm");
    }
    if (iota_perm->empty()) {
      for (size_t i = 0; i < iota_reshape->size(); ++i) iota_perm->push_back(i);
    }
    if (iota_perm->size() != iota_reshape->size()) {
      return TokenError(
          absl::StrCat("iota_transpose_perm should have the same rank as "
                       "iota_reshape_dims: expected ",
                       iota_reshape->size(), ", saw ", iota_perm->size()));
    }
    std::vector<bool> seen(iota_perm->size(), false);
    for (int64_t p : *iota_perm) {
      if (p < 0 || p >= static_cast<int64_t>(seen.size()) || seen[p]) {
        return TokenError("iota_transpose_perm is not a permutation");
      }
      seen[p] = true;
    }
    return true;
  }
  if (!allow_explicit) return TokenError("expected '<=' for an iota device list");
  do {
    int64_t device = 0;
    if (!ParseInt64(&device)) return false;
    devices->push_back(device);
  } while (EatIfPresent(TokKind::kComma));
  return true;
}

bool HloParserImpl::ParseSharding(std::string* canonical) {
  // A single sharding is '{' not followed by '{'; a tuple sharding is '{'
  // followed by '{', or "{}".
  if (!ParseToken(TokKind::kLbrace, "expected '{' to start sharding attribute")) return false;
  if (kind() != TokKind::kLbrace && kind() != TokKind::kRbrace) {
    return ParseSingleSharding(canonical, /*lbrace_eaten=*/true);
  }
  std::vector<std::string> elements;
  if (kind() != TokKind::kRbrace) {
    do {
      elements.emplace_back();
      if (!ParseSingleSharding(&elements.back(), /*lbrace_eaten=*/false)) return false;
    } while (EatIfPresent(TokKind::kComma));
  }
  *canonical = absl::StrCat("{", absl::StrJoin(elements, ", "), "}");
  return ParseToken(TokKind::kRbrace, "expected '}' to end sharding attribute");
}

bool HloParserImpl::ParseSingleSharding(std::string* canonical, bool lbrace_eaten) {
  if (!lbrace_eaten && !ParseToken(TokKind::kLbrace, "expected '{' to start sharding attribute")) {
    return false;
  }
  if (kind() == TokKind::kIdent &&
      (lexer_.str_val() == "mesh" || lexer_.str_val() == "maximal_mesh")) {
    return ParseNamedSharding(canonical);
  }
  size_t offset = lexer_.token_start();
  bool maximal = false, replicated = false, manual = false, unknown = false, unreduced = false;
  bool last_tile_dim_replicate = false;
  std::optional<std::string> shard_group;
  std::optional<std::vector<std::string>> last_tile_dims;
  std::vector<int64_t> devices, dims, iota_reshape, iota_perm;
  bool has_device = false;
  std::vector<OpMetadata> metadata;
  while (kind() != TokKind::kRbrace) {
    switch (kind()) {
      case TokKind::kw_maximal:
        maximal = true;
        Lex();
        break;
      case TokKind::kw_replicated:
        replicated = true;
        Lex();
        break;
      case TokKind::kw_manual:
        manual = true;
        Lex();
        break;
      case TokKind::kw_unknown:
        unknown = true;
        Lex();
        break;
      case TokKind::kw_unreduced:
        unreduced = true;
        Lex();
        break;
      case TokKind::kw_last_tile_dim_replicate:
        last_tile_dim_replicate = true;
        Lex();
        break;
      case TokKind::kw_shard_as:
      case TokKind::kw_shard_like: {
        std::string keyword = kind() == TokKind::kw_shard_as ? "shard_as" : "shard_like";
        Lex();
        int64_t id = 0;
        if (!ParseInt64(&id)) return false;
        shard_group = absl::StrCat(keyword, " ", id);
        break;
      }
      case TokKind::kAttributeName: {
        std::string name = lexer_.str_val();
        Lex();
        if (name == "device") {
          if (kind() != TokKind::kInt) return TokenError("device= attribute must be an integer");
          devices = {lexer_.int64_val()};
          has_device = true;
          Lex();
        } else if (name == "devices") {
          devices.clear();
          dims.clear();
          iota_reshape.clear();
          iota_perm.clear();
          if (!ParseTileAssignment(&dims, &iota_reshape, &iota_perm, &devices, true)) return false;
        } else if (name == "metadata") {
          if (!ParseSingleOrListMetadata(&metadata)) return false;
        } else if (name == "last_tile_dims") {
          last_tile_dims.emplace();
          bool ok = ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
            switch (kind()) {
              case TokKind::kw_maximal:
                last_tile_dims->push_back("maximal");
                break;
              case TokKind::kw_replicated:
                last_tile_dims->push_back("replicated");
                break;
              case TokKind::kw_manual:
                last_tile_dims->push_back("manual");
                break;
              case TokKind::kw_unreduced:
                last_tile_dims->push_back("unreduced");
                break;
              default:
                return TokenError("expects a sharding type");
            }
            Lex();
            return true;
          });
          if (!ok) return false;
        } else {
          return TokenError(
              "unknown attribute in sharding: expected device=, devices= metadata= or "
              "last_tile_dims= ");
        }
        break;
      }
      default:
        return TokenError("unexpected token in sharding");
    }
  }
  std::string body;
  if (replicated || manual || unknown || unreduced) {
    if (!devices.empty() || !dims.empty()) {
      const char* what = replicated ? "replicated"
                         : manual   ? "manual"
                         : unknown  ? "unknown"
                                    : "unreduced";
      return Error(offset, absl::StrCat(what, " shardings should not have any devices assigned"));
    }
    body = replicated ? "replicated" : manual ? "manual" : unknown ? "unknown" : "unreduced";
  } else if (maximal) {
    if (!has_device || devices.size() != 1) {
      return Error(offset, "maximal shardings should have exactly one device assigned");
    }
    body = absl::StrCat("maximal device=", devices[0]);
  } else {
    if (dims.empty()) {
      return Error(offset,
                   "non-maximal shardings must have a tile assignment list including dimensions");
    }
    bool overflow = false;
    int64_t tiles = Product(dims, &overflow);
    if (overflow) return Error(offset, "sharding tile assignment is too large");
    if (!iota_reshape.empty()) {
      int64_t iota_size = Product(iota_reshape, &overflow);
      if (overflow || iota_size != tiles) {
        return Error(offset, absl::StrCat("sharding tile assignment [", absl::StrJoin(dims, ","),
                                          "] has ", tiles, " devices but the iota <=[",
                                          absl::StrJoin(iota_reshape, ","), "] has ", iota_size));
      }
    } else {
      if (devices.size() <= 1) {
        return Error(offset, "non-maximal shardings must have more than one device assigned");
      }
      if (static_cast<int64_t>(devices.size()) != tiles) {
        return Error(
            offset, absl::StrCat("sharding tile assignment [", absl::StrJoin(dims, ","), "] needs ",
                                 tiles, " devices but lists ", devices.size()));
      }
    }
    if (last_tile_dim_replicate && last_tile_dims.has_value()) {
      return Error(offset, "last_tile_dim_replicate and last_tile_dims cannot be combined");
    }
    if (last_tile_dims.has_value() && last_tile_dims->size() == 1 &&
        (*last_tile_dims)[0] == "replicated") {
      last_tile_dim_replicate = true;
      last_tile_dims.reset();
    }
    if (last_tile_dims.has_value() && last_tile_dims->size() > dims.size()) {
      return Error(offset,
                   "last_tile_dims has more entries than the tile assignment has dimensions");
    }
    body = TileAssignmentText(dims, iota_reshape, iota_perm, devices);
    if (last_tile_dim_replicate) absl::StrAppend(&body, " last_tile_dim_replicate");
    if (last_tile_dims.has_value()) {
      absl::StrAppend(&body, " last_tile_dims={", absl::StrJoin(*last_tile_dims, ", "), "}");
    }
  }
  if (shard_group.has_value()) absl::StrAppend(&body, " ", *shard_group);
  absl::StrAppend(&body, MetadataListText(metadata));
  *canonical = absl::StrCat("{", body, "}");
  Lex();  // '}'
  return true;
}

bool HloParserImpl::ParseMesh(std::vector<std::pair<std::string, int64_t>>* axes,
                              std::vector<int64_t>* device_ids, std::string* canonical) {
  // mesh['a'=2,'b'=4 (, device_ids=(...))?]  or  maximal_mesh[device_id=N]
  std::string kind_name = lexer_.str_val();
  Lex();
  if (!ParseToken(TokKind::kLsquare, absl::StrCat("expected '[' after ", kind_name))) return false;
  if (kind_name == "maximal_mesh") {
    std::string attr;
    int64_t device = 0;
    if (!ParseAttributeName(&attr) || attr != "device_id") {
      return TokenError("expected device_id= attribute in maximal_mesh");
    }
    if (!ParseInt64(&device) ||
        !ParseToken(TokKind::kRsquare, "expected ']' to end maximal_mesh")) {
      return false;
    }
    *canonical = absl::StrCat("maximal_mesh[device_id=", device, "]");
    return true;
  }
  auto parse_device_ids = [&]() {
    return ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, [&] {
      int64_t id = 0;
      if (!ParseInt64(&id)) return false;
      device_ids->push_back(id);
      return true;
    });
  };
  if (kind() != TokKind::kRsquare) {
    do {
      if (kind() == TokKind::kAttributeName && lexer_.str_val() == "device_ids") {
        Lex();
        if (!parse_device_ids()) return false;
        continue;
      }
      std::string name;
      int64_t size = 0;
      if (!ParseString(&name) ||
          !ParseToken(TokKind::kEqual, "expected '=' after mesh axis name") || !ParseInt64(&size)) {
        return false;
      }
      if (size <= 0) return TokenError("mesh axis sizes must be positive");
      for (const auto& axis : *axes) {
        if (axis.first == name) return TokenError(absl::StrCat("duplicate mesh axis '", name, "'"));
      }
      axes->push_back({name, size});
    } while (EatIfPresent(TokKind::kComma));
  }
  if (!ParseToken(TokKind::kRsquare, "expected ']' to end mesh axes")) return false;
  std::vector<std::string> items;
  for (const auto& [name, size] : *axes) items.push_back(absl::StrCat("'", name, "'=", size));
  *canonical = absl::StrCat("mesh[", absl::StrJoin(items, ","), "]");
  return true;
}

bool HloParserImpl::ParseAxisRefs(const std::vector<std::pair<std::string, int64_t>>& axes,
                                  bool allow_open, std::string* canonical) {
  std::vector<std::string> items;
  bool open = false;
  bool ok = ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    if (open) return TokenError("Saw axis ref after '?'");
    if (allow_open && EatIfPresent(TokKind::kQuestionMark)) {
      open = true;
      return true;
    }
    std::string name;
    if (kind() != TokKind::kString && kind() != TokKind::kIdent && kind() != TokKind::kName) {
      return TokenError("expects a mesh axis name");
    }
    name = lexer_.str_val();
    bool found = false;
    for (const auto& axis : axes) found |= axis.first == name;
    if (!found) {
      int64_t index;
      if (!absl::SimpleAtoi(name, &index) || index < 0 ||
          index >= static_cast<int64_t>(axes.size())) {
        return TokenError(absl::StrCat("'", name, "' is not an axis of the mesh"));
      }
      name = axes[index].first;
    }
    Lex();
    std::string item = absl::StrCat("'", name, "'");
    if (EatIfPresent(TokKind::kColon)) {
      // Sub-axis: 'x':(pre)size.
      int64_t pre = 0, size = 0;
      if (!ParseToken(TokKind::kLparen, "expected '(' for a sub-axis") || !ParseInt64(&pre) ||
          !ParseToken(TokKind::kRparen, "expected ')' after pre_size in sub axis") ||
          !ParseInt64(&size)) {
        return false;
      }
      absl::StrAppend(&item, ":(", pre, ")", size);
    }
    items.push_back(std::move(item));
    return true;
  });
  if (!ok) return false;
  if (open) items.push_back("?");
  *canonical = absl::StrCat("{", absl::StrJoin(items, ", "), "}");
  return true;
}

bool HloParserImpl::ParseNamedSharding(std::string* canonical) {
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<int64_t> device_ids;
  std::string mesh_text;
  size_t offset = lexer_.token_start();
  if (!ParseMesh(&axes, &device_ids, &mesh_text)) return false;
  std::string out = mesh_text;
  auto finish = [&]() {
    *canonical = absl::StrCat("{", out, "}");
    return ParseToken(TokKind::kRbrace, "expected '}' to end sharding attribute");
  };
  bool overflow = false;
  int64_t mesh_size = MeshSize(axes, &overflow);
  auto check_devices = [&]() {
    if (!device_ids.empty() && (overflow || static_cast<int64_t>(device_ids.size()) != mesh_size)) {
      return Error(offset,
                   absl::StrCat("Expected ", mesh_size, " device_ids based on mesh axes, but got ",
                                device_ids.size()));
    }
    return true;
  };
  while (EatIfPresent(TokKind::kComma)) {
    if (kind() == TokKind::kAttributeName && lexer_.str_val() == "device_ids") {
      Lex();
      if (!ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, [&] {
            int64_t id = 0;
            if (!ParseInt64(&id)) return false;
            device_ids.push_back(id);
            return true;
          })) {
        return false;
      }
      continue;
    }
    break;
  }
  if (!check_devices()) return false;
  if (!device_ids.empty())
    absl::StrAppend(&out, ", device_ids=(", absl::StrJoin(device_ids, ","), ")");
  if (kind() == TokKind::kRbrace) return finish();
  if (kind() == TokKind::kw_replicated || kind() == TokKind::kw_unreduced ||
      kind() == TokKind::kw_manual) {
    absl::StrAppend(&out, ", ", lexer_.token_text());
    Lex();
  } else {
    std::vector<std::string> dims;
    bool ok = ParseList(TokKind::kLsquare, TokKind::kRsquare, TokKind::kComma, [&] {
      dims.emplace_back();
      return ParseAxisRefs(axes, /*allow_open=*/true, &dims.back());
    });
    if (!ok) return false;
    absl::StrAppend(&out, ", [", absl::StrJoin(dims, ", "), "]");
  }
  while (kind() != TokKind::kRbrace) {
    if (!ParseToken(TokKind::kComma, "expected ',' before next attribute")) return false;
    std::string name;
    if (kind() == TokKind::kw_replicated || kind() == TokKind::kw_unreduced ||
        kind() == TokKind::kw_manual) {
      return TokenError("expected an attribute");
    }
    if (!ParseAttributeName(&name)) return false;
    if (name == "replicated" || name == "unreduced" || name == "manual") {
      std::string refs;
      if (!ParseAxisRefs(axes, /*allow_open=*/false, &refs)) return false;
      absl::StrAppend(&out, ", ", name, "=", refs);
    } else if (name == "metadata") {
      std::vector<OpMetadata> metadata;
      if (!ParseSingleOrListMetadata(&metadata)) return false;
      absl::StrAppend(&out, ",", MetadataListText(metadata));
    } else {
      return TokenError(
          "unknown attribute in named sharding: expected replicated, unreduced, manual or "
          "metadata");
    }
  }
  return finish();
}

// --- Collectives, aliasing, domains -------------------------------------------------

bool HloParserImpl::ParseCollectiveDevices(CollectiveAttrs* attrs, std::string* mesh_text) {
  if (kind() == TokKind::kLbrace) {
    std::vector<std::vector<int64_t>> groups;
    if (!ParseInt64ListList(&groups)) return false;
    attrs->replica_groups.clear();
    for (const auto& group : groups) {
      ReplicaGroup replica_group;
      *replica_group.mutable_replica_ids() = group;
      attrs->replica_groups.push_back(std::move(replica_group));
    }
    return true;
  }
  if (kind() == TokKind::kIdent && lexer_.str_val() == "mesh") {
    size_t offset = lexer_.token_start();
    std::vector<std::pair<std::string, int64_t>> axes;
    std::vector<int64_t> device_ids;
    if (!ParseMesh(&axes, &device_ids, mesh_text)) return false;
    bool overflow = false;
    int64_t mesh_size = MeshSize(axes, &overflow);
    if (!device_ids.empty() && (overflow || static_cast<int64_t>(device_ids.size()) != mesh_size)) {
      return Error(offset,
                   absl::StrCat("Expected ", mesh_size, " device_ids based on mesh axes, but got ",
                                device_ids.size()));
    }
    std::string refs;
    return ParseAxisRefs(axes, /*allow_open=*/false, &refs);
  }
  size_t offset = lexer_.token_start();
  std::vector<int64_t> dims, reshape, perm, devices;
  if (!ParseTileAssignment(&dims, &reshape, &perm, &devices, /*allow_explicit=*/false)) {
    return false;
  }
  if (dims.size() != 2) {
    return Error(offset,
                 "expects the iota replica groups to have 2 dimensions "
                 "[num_groups,group_size]");
  }
  bool overflow = false;
  int64_t total = Product(dims, &overflow);
  int64_t iota = Product(reshape, &overflow);
  if (overflow || total != iota) {
    return Error(offset, absl::StrCat("iota replica groups [", absl::StrJoin(dims, ","), "] have ",
                                      total, " devices but the iota has ", iota));
  }
  IotaReplicaGroupList list;
  list.num_groups = dims[0];
  list.group_size = dims[1];
  CanonicalizeIota(&reshape, &perm);
  list.reshape_dims = reshape;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (!identity) list.transpose_perm = perm;
  attrs->replica_groups = list.Expand();
  attrs->iota_replica_groups = std::move(list);
  return true;
}

bool HloParserImpl::ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* aliasing) {
  const char* format =
      "Expected format: <output_shape_index>: (<operand_index>, <operand_shape_index>)";
  if (!ParseToken(TokKind::kLbrace,
                  "Expects '{' at the start of instruction aliasing description")) {
    return false;
  }
  while (kind() != TokKind::kRbrace) {
    OutputOperandAlias alias;
    if (!ParseShapeIndex(&alias.output_index) || !ParseToken(TokKind::kColon, format) ||
        !ParseToken(TokKind::kLparen, format) || !ParseInt64(&alias.operand_number) ||
        !ParseToken(TokKind::kComma, format) || !ParseShapeIndex(&alias.operand_index) ||
        !ParseToken(TokKind::kRparen, format)) {
      return false;
    }
    aliasing->push_back(std::move(alias));
    if (!EatIfPresent(TokKind::kComma)) break;
  }
  return ParseToken(TokKind::kRbrace, "Expects '}' at the end of instruction aliasing description");
}

bool HloParserImpl::ParseDomain(std::string* canonical) {
  std::optional<std::string> kind_name, entry, exit;
  AttrMap attrs;
  attrs["kind"] = StringAttr(true, &kind_name);
  attrs["entry"] = {true, [&] {
                      entry.emplace();
                      return ParseSharding(&*entry);
                    }};
  attrs["exit"] = {true, [&] {
                     exit.emplace();
                     return ParseSharding(&*exit);
                   }};
  size_t offset = lexer_.token_start();
  if (!ParseSubAttributes(attrs)) return false;
  if (*kind_name != "sharding") {
    return Error(offset, absl::StrCat("unsupported domain kind: ", *kind_name));
  }
  *canonical = absl::StrCat("{kind=\"sharding\", entry=", *entry, ", exit=", *exit, "}");
  return true;
}

}  // namespace hlo_parser_internal
}  // namespace axle
