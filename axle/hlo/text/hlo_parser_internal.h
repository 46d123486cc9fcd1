//===- hlo_parser_internal.h - The HLO text parser's state ----------------===//
//
// Shared by the parser's implementation files (not part of the API):
//   hlo_parser.cc               module, computations, instructions, operands,
//                               errors, names
//   hlo_parser_shapes.cc        shapes and layouts
//   hlo_parser_instructions.cc  CreateInstruction: opcode -> family, the
//                               shared preamble; source and elementwise ops
//   hlo_parser_data_movement.cc reshapes, slices, tuples, dimension ops
//   hlo_parser_control_flow.cc  ops that call computations, tokens, feeds
//   hlo_parser_linalg.cc        dot, convolution, gather, scatter, fft, ...
//   hlo_parser_collectives.cc   collectives, send and recv
//   hlo_parser_async.cc         async-start/update/done and their shorthand
//   hlo_parser_attributes.cc    attribute values: windows, dim labels,
//                               paddings, precision, literals, ...
//   hlo_parser_annotations.cc   metadata, shardings, replica groups,
//                               aliasing, domains
//
// Parse functions return false after recording an error (the first error is
// the one reported; later ones are notes), never crash, and keep the
// recursion depth under kMaxDepth.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_HLO_PARSER_INTERNAL_H_
#define AXLE_HLO_TEXT_HLO_PARSER_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_lexer.h"

namespace axle {
namespace hlo_parser_internal {

// Deepest nesting of shapes, literals, operands, computations and braces.
inline constexpr int kMaxDepth = 200;
// Largest constant the parser materializes (bytes of host storage).
inline constexpr int64_t kMaxConstantBytes = int64_t{1} << 30;

// One attribute an opcode accepts: whether it must appear, and how to parse
// its value (the parser stores the value where the closure says).
struct AttrSpec {
  bool required = false;
  std::function<bool()> parse;
};
using AttrMap = absl::flat_hash_map<std::string, AttrSpec>;

// Attributes every instruction may carry.
struct GenericAttrs {
  std::optional<HloSharding> sharding;
  std::optional<FrontendAttributes> frontend_attributes;
  std::optional<std::vector<bool>> parameter_replication;
  std::optional<std::vector<HloInstruction*>> control_predecessors;
  std::optional<OpMetadata> metadata;
  std::optional<std::string> backend_config;
};

// The shared preamble of every Create* function: the instruction line up to
// its operands, and the operands once parsed.
struct NewInstruction {
  std::optional<Shape> shape;  // empty when the text left it out
  HloOpcode opcode;
  std::optional<HloOpcode> async_wrapped;
  AttrMap& attrs;
  bool allow_attributes;
  size_t opcode_offset;                        // errors about the opcode and the shape
  size_t operands_offset;                      // errors about the operands
  const std::vector<HloInstruction*>* preset;  // operands already parsed, or null
  std::vector<HloInstruction*> operands = {};
};

// XLA's NameUniquer: "foo", "foo.1", "foo.2", ... A name not yet used is
// kept exactly as given.
class NameUniquer {
 public:
  std::string GetUniqueName(absl::string_view name);

 private:
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
};

class HloParserImpl {
 public:
  HloParserImpl(absl::string_view text, absl::string_view filename);

  absl::Status ParseModule(HloModule* module);
  absl::Status ParseSingleInstructionModule(HloModule* module);
  absl::StatusOr<Shape> ParseShapeOnly();
  absl::StatusOr<Layout> ParseLayoutOnly();
  absl::StatusOr<HloSharding> ParseShardingOnly();

 private:
  // --- Tokens and errors (hlo_parser.cc) -----------------------------------
  TokKind Lex();
  TokKind kind() const { return lexer_.kind(); }
  bool Error(size_t offset, absl::string_view message);
  void Note(size_t offset, absl::string_view message);
  bool TokenError(absl::string_view message);
  bool ParseToken(TokKind kind, absl::string_view message);
  bool EatIfPresent(TokKind kind);
  absl::Status ErrorStatus() const;

  struct DepthGuard {
    explicit DepthGuard(HloParserImpl* p) : parser(p) { ++parser->depth_; }
    ~DepthGuard() { --parser->depth_; }
    HloParserImpl* parser;
  };
  bool CheckDepth();

  // A saved position, to look further ahead than one token.
  struct Checkpoint {
    HloLexer lexer;
    size_t last_end;
  };
  Checkpoint Save() const { return {lexer_, last_end_}; }
  void Restore(const Checkpoint& c) {
    lexer_ = c.lexer;
    last_end_ = c.last_end;
  }

  // --- Module structure (hlo_parser.cc) -------------------------------------
  bool ParseHloModule(HloModule* module);
  bool ParseModuleHeader(HloModuleConfig* config, std::string* name);
  bool ParseStackFrameIndex(std::string* raw);
  bool ParseComputation();
  bool ParseInstructionList(HloComputation** computation, const std::string& name,
                            size_t name_offset);
  bool ParseInstruction(std::string* root_name, size_t* root_offset);
  bool ParseInstructionRhs(const std::string& name, size_t name_offset, bool allow_attributes);
  bool ParseOperands(std::vector<HloInstruction*>* operands);
  bool ParseOperands(std::vector<HloInstruction*>* operands, int64_t expected);
  bool ParseOperand(std::vector<HloInstruction*>* operands);
  bool ResolveTupleIndex(HloInstruction** instruction, size_t offset);
  bool ParseOpcode(HloOpcode* opcode, std::optional<HloOpcode>* async_wrapped);
  bool FinishModule(HloModule* module, const HloModuleConfig& config, const std::string& name);

  // --- Shapes and layouts (hlo_parser_shapes.cc) -------------------------------------
  bool CanBeShape() const;
  bool IsBufferShapeStart() const;  // `b(`
  bool ParseShape(Shape* shape, bool fill_default_layout = true);
  bool ParseLayout(Layout* layout);
  bool ParseParamListToShape(Shape* shape, size_t* shape_offset);

  // --- Instructions (hlo_parser_instructions.cc and the family files) ------
  // Parses operands (unless preset) and attributes of `opcode` and adds the
  // instruction to the current computation. `shape` is empty when the text
  // left it out.
  HloInstruction* CreateInstruction(std::optional<Shape> shape, HloOpcode opcode,
                                    std::optional<HloOpcode> async_wrapped, AttrMap& attrs,
                                    bool allow_attributes, size_t opcode_offset,
                                    const std::vector<HloInstruction*>* preset_operands = nullptr);
  // The steps every family takes. The operands `n.preset` (checking the
  // count unless `expected` is -1), or the ones the text writes.
  bool ParseOperandsOf(NewInstruction& n, int64_t expected = -1);
  bool ParseAttributesOf(NewInstruction& n);
  // An error at the operands; returns nullptr.
  HloInstruction* FailOperands(const NewInstruction& n, absl::string_view message);
  // "opcode X is not supported"; returns nullptr.
  HloInstruction* Unsupported(const NewInstruction& n);
  // Sets n.shape from `inference` when the text left it out; an inference
  // error names the opcode, at the opcode.
  bool InferShape(NewInstruction& n, const std::function<absl::StatusOr<Shape>()>& inference);
  // For opcodes whose shape the text must write.
  bool RequireShape(NewInstruction& n);
  bool SingleDimension(const NewInstruction& n, const std::vector<int64_t>& dims);
  // HloInstruction::Create(n.opcode, *n.shape, n.operands), added.
  HloInstruction* AddPlain(NewInstruction& n);
  // The families (one switch in CreateInstruction names each opcode's).
  HloInstruction* CreateLikeOperand(NewInstruction& n);      // hlo_parser_instructions.cc
  HloInstruction* CreateSourceOp(NewInstruction& n);         // hlo_parser_instructions.cc
  HloInstruction* CreateElementwise(NewInstruction& n);      // hlo_parser_instructions.cc
  HloInstruction* CreateDataMovement(NewInstruction& n);     // hlo_parser_data_movement.cc
  HloInstruction* CreateControlFlow(NewInstruction& n);      // hlo_parser_control_flow.cc
  HloInstruction* CreateLinearAlgebraOp(NewInstruction& n);  // hlo_parser_linalg.cc
  HloInstruction* CreateCollective(NewInstruction& n);       // hlo_parser_collectives.cc
  // A parameter `number` of an async wrapped computation the shorthand made.
  HloInstruction* AddAsyncParameter(HloComputation* wrapped, const Shape& shape, int64_t number);
  // `op-update(state, operands...)`: binds `operands` to the shorthand's
  // wrapped computation from parameter `first` on.
  void BindAsyncOperands(HloComputation* wrapped, int64_t first,
                         absl::Span<HloInstruction* const> operands);
  HloInstruction* CreateAsync(std::optional<Shape> shape, HloOpcode opcode,
                              std::optional<HloOpcode> async_wrapped, AttrMap& attrs,
                              bool allow_attributes, size_t opcode_offset,
                              std::vector<HloInstruction*> operands);
  HloInstruction* Add(std::unique_ptr<HloInstruction> instruction);

  // --- Attributes (hlo_parser_attributes.cc) --------------------------------
  bool ParseAttributes(const AttrMap& attrs, bool allow_attributes = true);
  bool ParseSubAttributes(const AttrMap& attrs);
  bool ParseAttributeHelper(const AttrMap& attrs, absl::flat_hash_set<std::string>* seen);
  // Wraps `parse` so that the value's text is kept as a raw attribute.
  AttrSpec Raw(const std::string& name, bool required, std::function<bool()> parse);
  // A raw attribute whose value is any balanced token sequence.
  AttrSpec RawAny(const std::string& name);
  bool SkipBalancedValue();

  bool ParseName(std::string* name);
  bool ParseAttributeName(std::string* name);
  bool ParseString(std::string* value);
  bool ParseJsonDict(std::string* value);
  // A string, or a JSON dictionary kept as its text.
  bool ParseStringOrJsonDict(std::string* value);
  bool ParseInt64(int64_t* value);
  bool ParseDouble(double* value);
  bool ParseBool(bool* value);
  bool ParseInt64List(TokKind start, TokKind end, TokKind delim, std::vector<int64_t>* out);
  bool ParseInt64ListList(std::vector<std::vector<int64_t>>* out);
  bool ParseList(TokKind start, TokKind end, TokKind delim, const std::function<bool()>& item);
  bool ParseShapeIndex(ShapeIndex* index);
  bool ParseShapeList(std::vector<Shape>* shapes);
  bool ParseComputationRef(HloComputation** computation);
  bool ParseComputationList(std::vector<HloComputation*>* computations);
  bool ParseInstructionNames(std::vector<HloInstruction*>* instructions);
  bool ParseWindow(Window* window, bool expect_outer_curlies);
  bool ParseDxD(const std::string& name, std::vector<int64_t>* out);
  bool ParseWindowPad(std::vector<std::vector<int64_t>>* pad);
  bool ParseConvolutionDimensionNumbers(ConvolutionDimensionNumbers* dnums);
  bool ParsePaddingConfig(PaddingConfig* padding);
  bool ParseSliceRanges(SliceAttrs* slice);
  bool ParsePrecisionList(std::vector<PrecisionConfig::Precision>* precisions);
  bool ParseAlgorithm(PrecisionConfig::Algorithm* algorithm);
  bool ParseMetadata(OpMetadata* metadata);
  bool ParseSingleOrListMetadata(std::vector<OpMetadata>* metadata);
  bool ParseFrontendAttributes(FrontendAttributes* attributes);
  bool ParseSharding(std::string* canonical);
  bool ParseSingleSharding(std::string* canonical, bool lbrace_eaten);
  bool ParseNamedSharding(std::string* canonical);
  bool ParseMesh(std::vector<std::pair<std::string, int64_t>>* axes,
                 std::vector<int64_t>* device_ids, std::string* canonical);
  bool ParseAxisRefs(const std::vector<std::pair<std::string, int64_t>>& axes, bool allow_open,
                     std::string* canonical);
  bool ParseTileAssignment(std::vector<int64_t>* dims, std::vector<int64_t>* iota_reshape,
                           std::vector<int64_t>* iota_perm, std::vector<int64_t>* devices,
                           bool allow_explicit);
  bool ParseCollectiveDevices(CollectiveAttrs* attrs, std::string* mesh_text);
  bool ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* aliasing);
  bool ParseParameterReplication(std::vector<bool>* replication);
  bool ParseBoolListOrBool(std::vector<bool>* values);
  bool ParseDomain(std::string* canonical);
  bool ParseResultAccuracy();
  bool ParseOriginalValue();
  bool ParseStatistics();
  bool ParseDebugAttributes();
  bool ParseOriginalValueRecoveryTable();
  bool ParseLiteralWithShape(Literal* literal);
  bool ParseLiteral(const Shape& shape, Literal* literal);

  // Typed attribute closures.
  AttrSpec Int64Attr(bool required, std::optional<int64_t>* out);
  AttrSpec Int32Attr(bool required, std::optional<int64_t>* out);
  AttrSpec BoolAttr(bool required, std::optional<bool>* out);
  AttrSpec FloatAttr(bool required, std::optional<float>* out);
  AttrSpec StringAttr(bool required, std::optional<std::string>* out);
  AttrSpec Int64ListAttr(bool required, std::optional<std::vector<int64_t>>* out);
  AttrSpec Int64ListListAttr(bool required, std::optional<std::vector<std::vector<int64_t>>>* out);
  AttrSpec ComputationAttr(bool required, std::optional<HloComputation*>* out);
  AttrSpec ComputationListAttr(bool required, std::optional<std::vector<HloComputation*>>* out);
  AttrSpec WindowAttr(bool required, std::optional<Window>* out);
  AttrSpec DimLabelsAttr(bool required, std::optional<ConvolutionDimensionNumbers>* out);
  AttrSpec PrecisionListAttr(bool required,
                             std::optional<std::vector<PrecisionConfig::Precision>>* out);
  AttrSpec ShapeAttr(bool required, std::optional<Shape>* out);
  AttrSpec ShapeListAttr(bool required, std::optional<std::vector<Shape>>* out);
  AttrSpec AliasingAttr(bool required, std::optional<std::vector<OutputOperandAlias>>* out);
  AttrSpec CollectiveDevicesAttr(CollectiveAttrs* out);
  // An identifier from a fixed set of names; `*out` gets its index.
  AttrSpec EnumAttr(bool required, std::vector<absl::string_view> names, std::optional<int>* out);

  // --- Computations being built ---------------------------------------------
  struct Scope {
    HloComputation* computation = nullptr;
    absl::flat_hash_map<std::string, std::pair<HloInstruction*, size_t>> names;
    // Compact get-tuple-element operands (`%t#0#1`): "id/0/1" -> instruction.
    absl::flat_hash_map<std::string, HloInstruction*> tuple_elements;
  };
  Scope& scope() { return scopes_.back(); }
  HloComputation* AdoptComputation(std::unique_ptr<HloComputation> computation,
                                   bool generated_name);

  HloLexer lexer_;
  std::string filename_;
  size_t last_end_ = 0;  // end of the last token consumed
  int depth_ = 0;
  std::vector<std::string> errors_;

  std::vector<Scope> scopes_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  absl::flat_hash_map<std::string, std::pair<HloComputation*, size_t>> computation_pool_;
  HloComputation* entry_ = nullptr;
  // Instructions and computations that the text did not name (nested
  // instructions, async wrappers, compact get-tuple-elements), with the
  // base of the name they get once every written name is known.
  std::vector<std::pair<HloInstruction*, std::string>> unnamed_instructions_;
  absl::flat_hash_set<HloComputation*> unnamed_computations_;
  // Raw attributes of the instruction being parsed.
  std::vector<RawAttribute> pending_raw_;
  // The instruction ParseInstructionRhs made last.
  HloInstruction* last_created_ = nullptr;
  // The async wrapped computation CreateAsync made last (the `op-start`
  // shorthand), to give it the generic attributes of its async op.
  HloComputation* last_wrapper_ = nullptr;
  // The wrapped computations the `op-start` shorthand made: the ones an
  // `op-update` may bind further operands to.
  absl::flat_hash_set<HloComputation*> shorthand_wrappers_;
  absl::flat_hash_set<HloInstruction*> unnamed_set_;
  // ParseSingleInstruction: an unknown operand with a written shape becomes a
  // parameter of the (only) computation.
  bool create_missing_operands_ = false;
};

// operand_precision as written, or DEFAULT for each of `default_count`.
PrecisionConfig MakePrecisionConfig(
    const std::optional<std::vector<PrecisionConfig::Precision>>& list, size_t default_count);
// Pointers to the shapes of operands [begin, end).
std::vector<const Shape*> OperandShapes(const std::vector<HloInstruction*>& operands, size_t begin,
                                        size_t end);

// The canonical text of metadata, as XLA prints it inside `metadata={...}`
// (without the braces).
std::string OpMetadataToText(const OpMetadata& metadata);

}  // namespace hlo_parser_internal
}  // namespace axle

#endif  // AXLE_HLO_TEXT_HLO_PARSER_INTERNAL_H_
