//===- single_device_collectives.h - Collectives of a one-device run -------===//
//
// For a backend that runs a module on one device (one replica, one
// partition; the cpu platform today). There every collective has a single
// participant, so this pass rewrites them into plumbing, as the interpreter computes
// them (axle/eval/hlo_evaluator.cc, EvaluateCollective):
//
//  - replica-id, partition-id: the constant 0.
//  - all-reduce, all-gather, reduce-scatter, all-to-all,
//    collective-broadcast: the operand (a tuple of the operands when there
//    are several), reshaped when the result has the same elements in
//    another shape.
//  - collective-permute: the operand when source_target_pairs has {0,0},
//    else zeros.
//  - their -start forms: all-reduce-start is the value itself; the others
//    are the tuple (operand, value, zeros for any context elements); a
//    -done is element 1 of its start.
//  - async-start: a call of the wrapped computation (call-inliner then
//    inlines it) in the tuple ((operands), result, ...); async-update
//    forwards its operand; async-done is element 1.
//  - copy-start: the tuple (operand, operand, u32 0); copy-done element 1.
//  - ragged-all-to-all (input, output, input_offsets, send_sizes,
//    output_offsets, recv_sizes): for each update u in order, rows
//    [input_offsets[u], +send_sizes[u]) of the input replace rows
//    [output_offsets[u], +send_sizes[u]) of the output; rows outside either
//    array are skipped (as EvaluateRaggedAllToAll in axle/eval).
//
// A module with more than one device (replica_count * num_partitions > 1)
// whose collective groups are not all groups of one, a ragged-all-to-all
// among several participants, and a collective whose shapes imply several
// participants stay Unimplemented, naming the op.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_SINGLE_DEVICE_COLLECTIVES_H_
#define AXLE_HLO_TRANSFORMS_SINGLE_DEVICE_COLLECTIVES_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

// `keep_multi_device`: in a module of several devices, replica-id,
// partition-id and the collectives (their -start forms included; not those
// whose every replica group has one member) stay for a
// backend that runs them among the devices (the cpu platform's collective
// thunks), each -start/-done pair of all-reduce, all-gather and
// collective-permute becoming the synchronous op, and each send/recv-done
// pair (same channel and _xla_send_recv_source_target_pairs) a
// collective-permute of the sent data; async-start/update/done
// and copy-start/done are still lowered as above.
// `keep_on_one_device` (with keep_multi_device): a module of one device
// keeps them too, groups of one member included (the cuda backend's
// AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE: its NCCL thunks tested with one
// rank).
class LowerSingleDeviceCollectives : public HloPassInterface {
 public:
  explicit LowerSingleDeviceCollectives(bool keep_multi_device = false,
                                        bool keep_on_one_device = false)
      : keep_multi_device_(keep_multi_device),
        keep_on_one_device_(keep_multi_device && keep_on_one_device) {}
  absl::string_view name() const override { return "single-device-collectives"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  bool keep_multi_device_;
  bool keep_on_one_device_;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_SINGLE_DEVICE_COLLECTIVES_H_
