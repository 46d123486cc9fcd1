//===- plan_serialization.cc - Dot and convolution plans as bytes ----------===//
#include "axle/cpu/runtime/plan_serialization.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "axle/core/primitive_type.h"

namespace axle::cpu {
namespace {

void WriteType(PrimitiveType type, ThunkWriter& writer) { writer.Int(static_cast<int64_t>(type)); }

PrimitiveType ReadType(ThunkReader& reader) {
  const int64_t type = reader.Int();
  if (!IsArrayTypeNumber(type)) {
    reader.Fail(absl::StrCat("element type ", type, " is not an array type"));
    return F32;
  }
  return static_cast<PrimitiveType>(type);
}

void WriteGroups(const std::vector<std::vector<int64_t>>& groups, ThunkWriter& writer) {
  writer.Int(static_cast<int64_t>(groups.size()));
  for (const std::vector<int64_t>& group : groups) writer.Ints(group);
}

std::vector<std::vector<int64_t>> ReadGroups(ThunkReader& reader) {
  const int64_t count = reader.Count();
  std::vector<std::vector<int64_t>> groups;
  for (int64_t i = 0; i < count && reader.ok(); ++i) groups.push_back(reader.Ints());
  return groups;
}

void WriteSource(const dot::Source& source, ThunkWriter& writer) {
  writer.Int(source.operand);
  writer.Literal(source.literal.get());
  WriteType(source.type, writer);
  writer.Ints(source.dims);
  writer.Ints(source.strides);
}

// `operand` indexes the thunk's operands: checked by the thunk's loader.
dot::Source ReadSource(ThunkReader& reader) {
  dot::Source source;
  source.operand = reader.Int();
  source.literal = reader.Literal();
  source.type = ReadType(reader);
  source.dims = reader.Ints();
  source.strides = reader.Ints();
  if (reader.ok() && source.dims.size() != source.strides.size()) {
    reader.Fail("a dot operand with as many strides as dims");
  }
  if (reader.ok() && source.literal == nullptr && source.operand < 0) {
    reader.Fail("a dot operand that is neither an operand nor a literal");
  }
  return source;
}

template <typename T, typename Write>
void WriteOptional(const std::optional<T>& value, ThunkWriter& writer, Write write) {
  writer.Bool(value.has_value());
  if (value) write(*value, writer);
}

}  // namespace

void WriteConvOperand(const conv::Operand& operand, ThunkWriter& writer) {
  writer.Int(operand.operand);
  writer.Literal(operand.literal.get());
  writer.Shape(operand.buffer_shape);
  writer.Ints(operand.strides);
}

conv::Operand ReadConvOperand(ThunkReader& reader) {
  conv::Operand operand;
  operand.operand = reader.Int();
  operand.literal = reader.Literal();
  operand.buffer_shape = reader.Shape();
  operand.strides = reader.Ints();
  if (reader.ok() && operand.literal == nullptr && operand.operand < 0) {
    reader.Fail("a convolution operand that is neither an operand nor a literal");
  }
  return operand;
}

bool DotPlanOperandsIn(const dot::DotPlan& plan, size_t operands) {
  for (const dot::Source* source : {&plan.lhs, &plan.rhs}) {
    if (source->literal == nullptr && static_cast<size_t>(source->operand) >= operands) {
      return false;
    }
  }
  return !plan.bias || plan.bias->literal != nullptr ||
         static_cast<size_t>(plan.bias->operand) < operands;
}

bool ConvPlanOperandsIn(const conv::ConvPlan& plan, size_t operands) {
  for (const std::optional<conv::Operand>& operand :
       {std::optional<conv::Operand>(plan.lhs), std::optional<conv::Operand>(plan.rhs), plan.scale,
        plan.bias, plan.addend}) {
    if (operand && operand->literal == nullptr &&
        static_cast<size_t>(operand->operand) >= operands) {
      return false;
    }
  }
  return true;
}

void WriteActivation(Activation activation, ThunkWriter& writer) {
  writer.Int(static_cast<int64_t>(activation));
}

Activation ReadActivation(ThunkReader& reader) {
  const int64_t activation = reader.Int();
  if (activation < 0 || activation > static_cast<int64_t>(Activation::kGeluTanh)) {
    reader.Fail(absl::StrCat("activation ", activation));
    return Activation::kNone;
  }
  return static_cast<Activation>(activation);
}

void WriteDotPlan(const dot::DotPlan& plan, ThunkWriter& writer) {
  WriteGroups(plan.lhs_groups, writer);
  WriteGroups(plan.rhs_groups, writer);
  WriteSource(plan.lhs, writer);
  WriteSource(plan.rhs, writer);
  WriteOptional(plan.bias, writer, WriteSource);
  WriteActivation(plan.activation, writer);
  writer.Double(plan.low);
  writer.Double(plan.high);
  WriteType(plan.output_type, writer);
  writer.Ints(plan.output_dims);
  for (int64_t size :
       {plan.batch, plan.m, plan.k, plan.n, plan.output_batch_rank, plan.output_m_rank}) {
    writer.Int(size);
  }
  writer.Bool(plan.packed_nibble);
}

dot::DotPlan ReadDotPlan(ThunkReader& reader) {
  dot::DotPlan plan;
  plan.lhs_groups = ReadGroups(reader);
  plan.rhs_groups = ReadGroups(reader);
  plan.lhs = ReadSource(reader);
  plan.rhs = ReadSource(reader);
  if (reader.Bool()) plan.bias = ReadSource(reader);
  plan.activation = ReadActivation(reader);
  plan.low = reader.Double();
  plan.high = reader.Double();
  plan.output_type = ReadType(reader);
  plan.output_dims = reader.Ints();
  for (int64_t* size :
       {&plan.batch, &plan.m, &plan.k, &plan.n, &plan.output_batch_rank, &plan.output_m_rank}) {
    *size = reader.Int();
    if (*size < 0) reader.Fail("a negative dot size");
  }
  plan.packed_nibble = reader.Bool();
  if (reader.ok() && (plan.lhs_groups.size() != 3 || plan.rhs_groups.size() != 3)) {
    reader.Fail("a dot plan without three dimension groups per operand");
  }
  return plan;
}

void WriteConvPlan(const conv::ConvPlan& plan, ThunkWriter& writer) {
  WriteConvOperand(plan.lhs, writer);
  WriteConvOperand(plan.rhs, writer);
  WriteOptional(plan.scale, writer, WriteConvOperand);
  WriteOptional(plan.bias, writer, WriteConvOperand);
  WriteOptional(plan.addend, writer, WriteConvOperand);
  WriteActivation(plan.activation, writer);
  writer.Double(plan.low);
  writer.Double(plan.high);
  WriteType(plan.output_type, writer);
  writer.Shape(plan.output_shape);
  writer.Int(plan.spatial);
  for (const std::vector<int64_t>* ints : {&plan.lhs_order, &plan.rhs_order, &plan.out_order,
                                           &plan.lhs_dims, &plan.rhs_dims, &plan.out_dims}) {
    writer.Ints(*ints);
  }
  writer.Int(static_cast<int64_t>(plan.window.size()));
  for (const WindowDimension& dimension : plan.window) {
    for (int64_t field :
         {dimension.size(), dimension.stride(), dimension.padding_low(), dimension.padding_high(),
          dimension.window_dilation(), dimension.base_dilation()}) {
      writer.Int(field);
    }
    writer.Bool(dimension.window_reversal());
  }
  writer.Int(plan.feature_groups);
  writer.Int(plan.batch_groups);
  writer.Int(plan.output_offset);
  writer.Ints(plan.output_strides);
}

conv::ConvPlan ReadConvPlan(ThunkReader& reader) {
  conv::ConvPlan plan;
  plan.lhs = ReadConvOperand(reader);
  plan.rhs = ReadConvOperand(reader);
  if (reader.Bool()) plan.scale = ReadConvOperand(reader);
  if (reader.Bool()) plan.bias = ReadConvOperand(reader);
  if (reader.Bool()) plan.addend = ReadConvOperand(reader);
  plan.activation = ReadActivation(reader);
  plan.low = reader.Double();
  plan.high = reader.Double();
  plan.output_type = ReadType(reader);
  plan.output_shape = reader.Shape();
  plan.spatial = reader.Int();
  for (std::vector<int64_t>* ints : {&plan.lhs_order, &plan.rhs_order, &plan.out_order,
                                     &plan.lhs_dims, &plan.rhs_dims, &plan.out_dims}) {
    *ints = reader.Ints();
  }
  const int64_t window = reader.Count(56);
  for (int64_t i = 0; i < window && reader.ok(); ++i) {
    WindowDimension dimension;
    dimension.set_size(reader.Int());
    dimension.set_stride(reader.Int());
    dimension.set_padding_low(reader.Int());
    dimension.set_padding_high(reader.Int());
    dimension.set_window_dilation(reader.Int());
    dimension.set_base_dilation(reader.Int());
    dimension.set_window_reversal(reader.Bool());
    plan.window.push_back(dimension);
  }
  plan.feature_groups = reader.Int();
  plan.batch_groups = reader.Int();
  plan.output_offset = reader.Int();
  plan.output_strides = reader.Ints();
  if (!reader.ok()) return plan;
  const size_t rank = static_cast<size_t>(plan.spatial) + 2;
  if (plan.spatial < 0 || plan.window.size() != static_cast<size_t>(plan.spatial) ||
      plan.lhs_order.size() != rank || plan.rhs_order.size() != rank ||
      plan.out_order.size() != rank || plan.lhs_dims.size() != rank ||
      plan.rhs_dims.size() != rank || plan.out_dims.size() != rank || plan.feature_groups < 1 ||
      plan.batch_groups < 1) {
    reader.Fail("a convolution plan whose ranks do not agree");
    return plan;
  }
  // A slice's strides: one per output dim, none negative.
  if (plan.output_offset < 0 ||
      (!plan.output_strides.empty() &&
       (plan.output_strides.size() != rank ||
        std::any_of(plan.output_strides.begin(), plan.output_strides.end(),
                    [](int64_t stride) { return stride < 0; })))) {
    reader.Fail("a convolution plan whose output slice is malformed");
  }
  return plan;
}

}  // namespace axle::cpu
