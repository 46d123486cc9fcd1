//===- gpu_thunks.h - The GPU executable's own thunks ----------------------===//
//
// The thunks the GPU program builder (gpu_program.h) makes itself; library
// ops (cuBLAS, cuDNN, cuFFT, Axle's sort and scatter kernels) get theirs
// from MakeLibraryThunk (gpu_thunk_factories.h).
//
//   GpuKernelThunk       a loop fusion compiled to PTX at compile time
//                        (ptx_compiler.h); loaded in Initialize, launched
//                        with the operands' then the outputs' buffers.
//   GpuCopyThunk         device-to-device copies, in order.
//   GpuMemsetThunk       zero bytes (replica-id and partition-id: 0 on one
//                        device).
//   GpuSequenceThunk     a nested thunk sequence run in place (a call whose
//                        callee was not inlined).
//   GpuWhileThunk        init copies, then: the condition's thunks, its
//                        pred copied to the host (the stream synchronized),
//                        the body's thunks, until the pred is false; or,
//                        for a loop with a known trip count, the body's
//                        thunks that many times (no condition, no host
//                        read, nothing synchronized).
//   GpuConditionalThunk  the selector (pred or s32) copied to the host, then
//                        one branch's thunks (an out-of-range s32 runs the
//                        last branch, as XLA does).
//   GpuCustomCallThunk   a custom call's "CUDA" target called in XLA's GPU
//                        convention (cuda_custom_call.h): the run's CUstream,
//                        the operands' then the results' array leaves as
//                        void* device addresses, the opaque string.
//
// A nested sequence's thunks share the program's value table, so their
// uses are the enclosing thunk's uses (the buffer assignment keeps every
// value a loop touches live for the whole loop).
//
// Nested sequences run through RunGpuThunkSequence, which follows the run's
// plan (gpu_graph.h: CUDA graphs of kernel and copy runs, AXLE_PROFILE's
// timings) when the executable installed one, else enqueues each thunk.
// Kernel, copy and memset thunks, sequences of capturable thunks and
// known-trip-count loops of them are CapturableInGraph; a predicate loop
// and a conditional read the host and are not (their sequences are planned
// on their own).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_THUNKS_H_
#define AXLE_GPU_GPU_THUNKS_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axle/gpu/cuda_custom_call.h"
#include "axle/gpu/cuda_kernel.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"

namespace axle::gpu {

using GpuThunkSequence = std::vector<std::unique_ptr<GpuThunk>>;

// Runs `sequence` in order; a failure names the thunk ("... (in %name)").
absl::Status RunGpuThunkSequence(const GpuThunkSequence& sequence, const GpuThunkContext& context);
// True when every thunk of `sequence` is CapturableInGraph.
bool SequenceCapturableInGraph(const GpuThunkSequence& sequence);
// Initializes every thunk of `sequence`.
absl::Status InitializeGpuThunkSequence(const GpuThunkSequence& sequence, const CudaDevice& device);

class GpuKernelThunk : public GpuThunk {
 public:
  // `kernel` is shared with the process's kernel cache (gpu_compiler.h).
  GpuKernelThunk(std::string name, std::shared_ptr<const PtxKernel> kernel, GpuThunkValues values)
      : GpuThunk(std::move(name)), kernel_(std::move(kernel)), values_(std::move(values)) {}

  absl::Status Initialize(const CudaDevice& device) override;
  absl::Status Execute(const GpuThunkContext& context) const override;
  GpuThunkValues buffer_uses() const override { return values_; }
  bool CapturableInGraph() const override { return true; }

  const PtxKernel& kernel() const { return *kernel_; }

 private:
  std::shared_ptr<const PtxKernel> kernel_;
  GpuThunkValues values_;
  // Set by Initialize: the module (shared by the thunks of one kernel on
  // one device) and the kernel's function in it.
  std::shared_ptr<CudaModule> module_;
  CUfunction function_ = nullptr;
};

class GpuCopyThunk : public GpuThunk {
 public:
  // (from, to) value pairs, copied in order; sizes are the destinations'.
  GpuCopyThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> copies)
      : GpuThunk(std::move(name)), copies_(std::move(copies)) {}
  absl::Status Execute(const GpuThunkContext& context) const override;
  GpuThunkValues buffer_uses() const override;
  bool CapturableInGraph() const override { return true; }
  const std::vector<std::pair<int64_t, int64_t>>& copies() const { return copies_; }

 private:
  std::vector<std::pair<int64_t, int64_t>> copies_;
};

class GpuMemsetThunk : public GpuThunk {
 public:
  GpuMemsetThunk(std::string name, int64_t value) : GpuThunk(std::move(name)), value_(value) {}
  absl::Status Execute(const GpuThunkContext& context) const override;
  GpuThunkValues buffer_uses() const override { return {{}, {value_}}; }
  bool CapturableInGraph() const override { return true; }

 private:
  int64_t value_;
};

// A thunk that runs nested sequences: its uses are its own plus every nested
// thunk's, its scratch the most any nested thunk needs (they run one at a
// time).
class GpuNestedThunk : public GpuThunk {
 public:
  GpuThunkValues buffer_uses() const override { return uses_; }
  int64_t scratch_bytes() const override { return scratch_bytes_; }

 protected:
  explicit GpuNestedThunk(std::string name) : GpuThunk(std::move(name)) {}
  // Sets the uses to `own` and those of every thunk of `nested`.
  void SetUses(GpuThunkValues own, const std::vector<const GpuThunkSequence*>& nested);

 private:
  GpuThunkValues uses_;
  int64_t scratch_bytes_ = 0;
};

class GpuSequenceThunk : public GpuNestedThunk {
 public:
  GpuSequenceThunk(std::string name, GpuThunkSequence sequence);
  absl::Status Initialize(const CudaDevice& device) override {
    return InitializeGpuThunkSequence(sequence_, device);
  }
  absl::Status Execute(const GpuThunkContext& context) const override {
    return RunGpuThunkSequence(sequence_, context);
  }
  bool CapturableInGraph() const override;
  const GpuThunkSequence& sequence() const { return sequence_; }

 private:
  GpuThunkSequence sequence_;
};

class GpuWhileThunk : public GpuNestedThunk {
 public:
  // `init`: the copies that set the loop state from the while's operand;
  // `predicate`: the condition's pred[] value.
  GpuWhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init,
                GpuThunkSequence condition, int64_t predicate, GpuThunkSequence body);
  // A loop known to run its body `trip_count` times (>= 0): no condition.
  GpuWhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init, int64_t trip_count,
                GpuThunkSequence body);
  absl::Status Initialize(const CudaDevice& device) override;
  absl::Status Execute(const GpuThunkContext& context) const override;
  // A known trip count and a body of capturable thunks.
  bool CapturableInGraph() const override;
  const GpuCopyThunk& init() const { return init_; }
  const GpuThunkSequence& condition() const { return condition_; }
  const GpuThunkSequence& body() const { return body_; }
  // The known trip count, or nullopt for a loop that reads its predicate.
  std::optional<int64_t> trip_count() const { return trip_count_; }

 private:
  GpuCopyThunk init_;
  GpuThunkSequence condition_;
  int64_t predicate_ = -1;
  std::optional<int64_t> trip_count_;
  GpuThunkSequence body_;
};

class GpuConditionalThunk : public GpuNestedThunk {
 public:
  GpuConditionalThunk(std::string name, int64_t selector, bool selector_is_pred,
                      std::vector<GpuThunkSequence> branches);
  absl::Status Initialize(const CudaDevice& device) override;
  absl::Status Execute(const GpuThunkContext& context) const override;
  const std::vector<GpuThunkSequence>& branches() const { return branches_; }

 private:
  int64_t selector_;
  bool selector_is_pred_;
  std::vector<GpuThunkSequence> branches_;
};

class GpuCustomCallThunk : public GpuThunk {
 public:
  GpuCustomCallThunk(std::string name, CudaCustomCallTarget target, GpuThunkValues values)
      : GpuThunk(std::move(name)), target_(std::move(target)), values_(std::move(values)) {}
  absl::Status Execute(const GpuThunkContext& context) const override;
  GpuThunkValues buffer_uses() const override { return values_; }

 private:
  CudaCustomCallTarget target_;
  GpuThunkValues values_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_THUNKS_H_
