//===- hlo_proto.h - HLO modules as XLA's HloModuleProto -------------------===//
//
// XLA's serialized form of an HLO module (xla/service/hlo.proto), read and
// written wire-compatibly: hlo.proto here declares the same messages at the
// same field numbers (package axle.proto), so that XLA's and JAX's `.pb`
// dumps load and Axle's load in XLA. HloModule::ToProto() (declared in
// hlo_module.h, XLA's names) is defined in hlo_proto_writer.cc,
// HloModule::CreateFromProto() in hlo_proto_reader.cc; both map attributes
// to fields by one table (hlo_proto_internal.h). XlaComputation(const
// HloModuleProto&) is in axle/builder/xla_computation_proto.cc.
//
// What is converted: module name, entry, computations (callees first, ids),
// input/output aliasing, buffer donors, the schedule flag, frontend
// attributes; per instruction: name, opcode, shape with layout, operands,
// called computations, control predecessors, metadata, frontend
// attributes, constants' literals, parameter numbers, and the attributes of
// the common ops (see AttributeFields() in hlo_proto_internal.h:
// dimensions, slices, comparisons, fusion kinds, dot, gather and scatter
// dimension numbers, windows, convolution dimension numbers, padding,
// custom-call targets and backend configs, replicated / maximal / manual
// shardings, ...). Anything else (tiled and mesh shardings, tiled layouts,
// output_to_operand_aliasing, non-main execution threads, ...) is an
// Unimplemented error naming the field or the attribute.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_PROTO_HLO_PROTO_H_
#define AXLE_HLO_PROTO_HLO_PROTO_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/proto/hlo.pb.h"

namespace axle {

// XLA's message names, reachable as xla::... through compat/include.
using proto::HloComputationProto;
using proto::HloInstructionProto;
using proto::HloModuleProto;
using proto::LiteralProto;
using proto::ShapeProto;

absl::StatusOr<ShapeProto> ShapeToProto(const Shape& shape);
absl::StatusOr<Shape> ShapeFromProto(const ShapeProto& proto);
absl::StatusOr<LiteralProto> LiteralToProto(const Literal& literal);
absl::StatusOr<Literal> LiteralFromProto(const LiteralProto& proto);

// A binary HloModuleProto file (XLA's `*.pb` dumps), as a module.
absl::StatusOr<std::unique_ptr<HloModule>> ReadHloModuleProtoFile(
    const std::string& path, const HloModuleConfig& config = {});
// Writes `module` as a binary HloModuleProto.
absl::Status WriteHloModuleProtoFile(const HloModule& module, const std::string& path);

}  // namespace axle

#endif  // AXLE_HLO_PROTO_HLO_PROTO_H_
