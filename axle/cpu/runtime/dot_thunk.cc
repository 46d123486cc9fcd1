// DotThunk: dot and dot epilogues through oneDNN matmul (this file), or an
// emitted loop kernel for the element types oneDNN lacks (dot_loop_thunk.cc);
// both read the DotPlan of dot_plan.h. See dot_thunk.h.
#include "axle/cpu/runtime/dot_thunk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/dnnl_args.h"
#include "axle/cpu/runtime/dnnl_engine.h"
#include "axle/cpu/runtime/dnnl_post_ops.h"
#include "axle/cpu/runtime/dot_plan.h"
#include "axle/cpu/runtime/dot_split.h"
#include "axle/cpu/runtime/omp_team.h"
#include "axle/cpu/runtime/plan_serialization.h"
#include "axle/cpu/runtime/rhs_packing.h"
#include "axle/cpu/runtime/vector_activations.h"

namespace axle::cpu {
namespace {

using dot::DotPlan;
using dot::Source;

// 64-byte aligned memory on this thread for one oneDNN call's scratchpad
// (kScratchpad) or a run's packed rhs (kPackedRhs), kept for the thread's
// next calls (a thread runs one thunk at a time), so a warm run neither
// allocates nor touches fresh pages for it.
enum ThreadBufferSlot { kScratchpad, kPackedRhs, kThreadBufferSlots };
void* ThreadBuffer(ThreadBufferSlot slot, int64_t bytes) {
  thread_local std::vector<char> storage[kThreadBufferSlots];
  std::vector<char>& buffer = storage[slot];
  if (static_cast<int64_t>(buffer.size()) < bytes + kBufferAlignment) {
    buffer.resize(bytes + kBufferAlignment);
  }
  return AlignUp(buffer.data());
}

// The rhs of an unbatched bf16 dot that is not a constant is packed on
// each run into the layout the primitive prefers (as a constant one is at
// compile time: PackBA16a64b2a, or oneDNN's reorder for another layout)
// when the lhs has at least this many rows: oneDNN's brgemm matmul reading
// a plain bf16 rhs copies it into its VNNI layout again for every block of
// rows (1024^3: 12% of the run, against ~2.5% for packing it once).
constexpr int64_t kPackRhsMinRows = 64;
// For f32 the packed layout pays only with more rows: at 256 rows (the MLP
// step's forward dots) packing plus the packed matmul is no faster than
// reading the plain rhs (1 thread, k 784 / 1024: +1%), at 512 rows 2%
// faster, at 1024 rows 4% (packing is 1.2% of matmul 1024^3's time,
// rhs_packing.h). The same threshold for a transposed rhs (a backward
// dot's dX = dY W^T, PackBA16a64bTransposed): on a 2-core Zen 5, 1 thread,
// [512, K] x [N, K]^T (K, N of 256 to 1024) took the same time packed as
// read in place (within 2%, as did a plain rhs of [512, 512]), and at 128
// and 256 rows packing was 2-4% slower; 2-thread timings there were too
// noisy (a loaded machine) to tell either way. AXLE_CPU_DOT_PACK_ROWS
// overrides it (dot_split.h).
constexpr int64_t kPackF32RhsMinRows = 512;
// Values of a GELU after the matmul (vector_activations.h) a pool thread takes at
// least: 64 KiB.
constexpr int64_t kMinGeluBlock = 16384;

// A plain [1, d1, d2] memory desc as [d1, d2]. For bf16, oneDNN's brgemm
// matmul prefers a packed (VNNI) weights layout only for 2-d weights.
dnnl::memory::desc Squeeze(const dnnl::memory::desc& desc) {
  const dnnl_memory_desc_t& data = desc.data;
  return dnnl::memory::desc(
      {data.dims[1], data.dims[2]}, desc.data_type(),
      {data.format_desc.blocking.strides[1], data.format_desc.blocking.strides[2]});
}

// Whether `plain`, a 2-d [k, n] rhs read in place, is transposed: its rows
// (the contraction) dense, its columns not (dX = dY W^T's rhs W).
bool IsTransposedRhs(const dnnl::memory::desc& plain) {
  const dnnl_dims_t& strides = plain.data.format_desc.blocking.strides;
  return plain.data.ndims == 2 && strides[1] != 1 && strides[0] == 1;
}

// Whether `packed` (the layout the primitive chose for a [k, n] rhs of
// `type`) is one Axle packs itself, from `plain` with dense columns:
// BA16a64b2a (bf16) or BA16a64b (f32); for f32 also from a transposed
// `plain` (PackBA16a64bTransposed).
bool IsOwnPackingLayout(const dnnl::memory::desc& packed, const dnnl::memory::desc& plain,
                        int64_t k, int64_t n, PrimitiveType type) {
  if (plain.data.ndims != 2) return false;
  const bool dense_columns = plain.data.format_desc.blocking.strides[1] == 1;
  if (!dense_columns && !(type == F32 && IsTransposedRhs(plain))) return false;
  const dnnl_dims_t& padded = packed.data.padded_dims;
  if (padded[0] % 16 != 0 || padded[1] % 64 != 0) return false;
  if (type == BF16) {
    return packed == dnnl::memory::desc({k, n}, dnnl::memory::data_type::bf16,
                                        dnnl::memory::format_tag::BA16a64b2a);
  }
  return type == F32 && packed == dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32,
                                                     dnnl::memory::format_tag::BA16a64b);
}

// Whether `source` (a thunk operand) is a dense row-major array in dims
// `order`: its copy into that order would copy it byte for byte.
bool IsDenseInOrder(const Source& source, const std::vector<int64_t>& order) {
  if (source.literal != nullptr || source.operand < 0) return false;
  int64_t stride = 1;
  for (auto d = order.rbegin(); d != order.rend(); ++d) {
    if (source.dims[*d] != 1 && source.strides[*d] != stride) return false;
    stride *= source.dims[*d];
  }
  return true;
}

// `desc` (a plain strided desc) with its leading dim `length` long.
dnnl::memory::desc WithLeading(const dnnl::memory::desc& desc, int64_t length) {
  dnnl::memory::dims dims = desc.dims();
  dims[0] = length;
  const dnnl_dims_t& strides = desc.data.format_desc.blocking.strides;
  return dnnl::memory::desc(dims, desc.data_type(),
                            dnnl::memory::dims(strides, strides + desc.data.ndims));
}

// ---------------------------------------------------------------------------
// The oneDNN path.

// How the thunk gets one matmul input at run time.
struct MatmulInput {
  Source source;
  std::vector<int64_t> order;        // source dims in canonical order
  bool gather = false;               // copy into a dense canonical buffer first
  dnnl::memory::desc desc;           // the primitive's view
  std::shared_ptr<char[]> constant;  // a gathered constant
};

// Bytes of the dense copy of `input` a run makes (64-byte multiples), or
// 0 when it is read in place.
int64_t GatherBytes(const MatmulInput& input) {
  if (!input.gather || input.constant) return 0;
  int64_t count = 1;
  for (int64_t d : input.source.dims) count *= d;
  const int64_t bytes = std::max<int64_t>(1, count * primitive_util::ByteWidth(input.source.type));
  return RoundUpToAlignment(bytes);
}

// Decides whether `source` can be read in place as [d0, d1, d2] (oneDNN
// wants the innermost or the second-innermost dim dense), else gathers.
MatmulInput PlanInput(const Source& source, const std::vector<std::vector<int64_t>>& groups,
                      const int64_t (&dims)[3]) {
  MatmulInput input;
  input.source = source;
  input.order = dot::Flatten(groups);
  dnnl::memory::data_type type = DnnlType(source.type);
  std::optional<dot::View3> view = dot::Collapse(source, groups);
  bool in_place = view.has_value() && source.literal == nullptr;
  if (in_place) {
    // Strides of size-1 dims are free: pick the ones a plain layout has.
    int64_t* s = view->strides;
    bool rows = dims[2] == 1 || s[2] == 1;
    if (rows) {
      s[2] = 1;
      if (dims[1] == 1) s[1] = dims[2];
      in_place = s[1] >= dims[2];
    } else {
      if (dims[1] == 1) s[1] = 1;
      in_place = s[1] == 1 && s[2] >= dims[1];
    }
    int64_t span = std::max(dims[1] * s[1], dims[2] * s[2]);
    if (dims[0] == 1) s[0] = span;
    in_place = in_place && s[0] >= span;
    if (in_place) {
      input.desc = dnnl::memory::desc({dims[0], dims[1], dims[2]}, type, {s[0], s[1], s[2]});
      return input;
    }
  }
  input.gather = true;
  input.desc = dnnl::memory::desc({dims[0], dims[1], dims[2]}, type, dnnl::memory::format_tag::abc);
  if (source.literal != nullptr) {
    int64_t size = primitive_util::ByteWidth(source.type);
    input.constant.reset(new char[std::max<int64_t>(1, dims[0] * dims[1] * dims[2] * size)]);
    dot::GatherInto(static_cast<const char*>(source.literal->untyped_data()), source, input.order,
                    size, input.constant.get());
  }
  return input;
}

class DnnlDotThunk : public Thunk {
 public:
  DnnlDotThunk(std::string name, std::vector<int64_t> operand_values, int64_t output_value)
      : Thunk(std::move(name)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value) {}

  absl::Status Build(const DotPlan& plan) {
    // What Serialize writes: the plan without its HLO (the loader builds
    // from it again).
    plan_ = plan;
    plan_.chain.clear();
    plan_.bias_add = nullptr;
    // oneDNN fixes a primitive's team size (the matmul's and the run-time
    // rhs reorder's) when it creates it: the size a run gets when it runs
    // alone, no more than the dot's multiply-adds keep busy (a small dot
    // runs on the calling thread alone: waking the team would cost more;
    // less so where the pool runs on libgomp's team, RuntimeThreadPool).
    const dot::DotSplitOptions split = dot::DotSplitOptionsFrom(EnvironmentOptions::Read());
    team_ = TeamSizeForWork(DotWorkInF32MultiplyAdds(plan.batch * plan.m * plan.n * plan.k,
                                                     plan.lhs.type, plan.rhs.type),
                            RuntimeThreadPool().UsesTeam());
    if (split.max_threads > 0) team_ = std::min(team_, split.max_threads);
    OmpTeamShare share(nullptr, team_);
    // A bf16 result rounds after the dot and after each epilogue op (as the
    // HLO says); oneDNN's post-ops would round once, so they run here. A
    // plain bf16 dot has none: oneDNN writes its rounded result directly.
    rounded_epilogue_ =
        plan.output_type == BF16 && (plan.bias || plan.activation != Activation::kNone);
    // An f32 GELU runs after the primitive, on the intra-op pool
    // (vector_activations.h: faster than oneDNN's post-op).
    gelu_after_ = plan.output_type == F32 && plan.activation == Activation::kGeluTanh;
    activation_ = plan.activation;
    low_ = static_cast<float>(plan.low);
    high_ = static_cast<float>(plan.high);
    dims_[0] = plan.batch;
    dims_[1] = plan.m;
    dims_[2] = plan.n;
    dims_[3] = plan.k;
    int64_t lhs_dims[3] = {plan.batch, plan.m, plan.k};
    int64_t rhs_dims[3] = {plan.batch, plan.k, plan.n};
    lhs_ = PlanInput(plan.lhs, plan.lhs_groups, lhs_dims);
    rhs_ = PlanInput(plan.rhs, plan.rhs_groups, rhs_dims);
    dnnl::memory::desc dst_desc({plan.batch, plan.m, plan.n}, DnnlType(plan.output_type),
                                dnnl::memory::format_tag::abc);
    if (plan.bias) {
      // The bias as a dense [B|1, M|1, N|1] array: a group the bias does not
      // vary over is 1.
      std::vector<std::vector<int64_t>> groups = dot::OutputGroups(plan);
      bias_ = MatmulInput();
      bias_->source = *plan.bias;
      sum_source_ = *plan.bias;
      int64_t dims[3] = {plan.batch, plan.m, plan.n};
      for (int g = 0; g < 3; ++g) {
        bool varies = false;
        for (int64_t d : groups[g]) varies = varies || plan.bias->strides[d] != 0;
        if (!varies) {
          dims[g] = 1;
          // Read only the first element of this group.
          for (int64_t d : groups[g]) bias_->source.dims[d] = 1;
        }
      }
      bias_->order = dot::Flatten(groups);
      bias_->gather = true;
      bias_->desc = dnnl::memory::desc({dims[0], dims[1], dims[2]}, DnnlType(plan.bias->type),
                                       dnnl::memory::format_tag::abc);
      std::copy(dims, dims + 3, bias_dims_);
      if (plan.bias->literal != nullptr) {
        int64_t size = primitive_util::ByteWidth(plan.bias->type);
        bias_->constant.reset(new char[std::max<int64_t>(1, dims[0] * dims[1] * dims[2] * size)]);
        dot::GatherInto(static_cast<const char*>(plan.bias->literal->untyped_data()), bias_->source,
                        bias_->order, size, bias_->constant.get());
      }
    }
    // A bf16 dot without batch: 2-d descs (Squeeze).
    bool two_d = plan.batch == 1 && (plan.lhs.type == BF16 || plan.lhs.type == F32);
    dnnl::memory::dims weights_dims = {plan.batch, plan.k, plan.n};
    if (two_d) {
      lhs_.desc = Squeeze(lhs_.desc);
      rhs_.desc = Squeeze(rhs_.desc);
      dst_desc = Squeeze(dst_desc);
      if (bias_) bias_->desc = Squeeze(bias_->desc);
      weights_dims = {plan.k, plan.n};
    }
    // A bias of the output's shape (a residual) that is no constant:
    // copied into the output and added by a sum post-op (oneDNN 2.6 runs a
    // full-size binary post-op on a slower kernel: a residual above dot
    // 512x1024x256, 1 thread, 4% faster so).
    sum_bias_ = bias_ && !rounded_epilogue_ && plan.bias->literal == nullptr &&
                bias_dims_[0] == plan.batch && bias_dims_[1] == plan.m && bias_dims_[2] == plan.n;
    // A bias with one value per output column (a dense layer's): the
    // matmul's own bias argument, which the kernel adds to its accumulators
    // as it stores them. oneDNN 2.6 runs a binary post-op as a second pass
    // over each stored tile (512x256x1024 f32, 1 thread: +1% over the bare
    // dot instead of +11%; with GELU after it +17% instead of +30%).
    sum_in_place_ = sum_bias_ && IsDenseInOrder(sum_source_, bias_->order) &&
                    operand_values_[sum_source_.operand] != operand_values_[plan.lhs.operand] &&
                    operand_values_[sum_source_.operand] != operand_values_[plan.rhs.operand];
    native_bias_ = bias_ && !rounded_epilogue_ && !sum_bias_ && bias_dims_[0] == 1 &&
                   bias_dims_[1] == 1 && bias_dims_[2] == plan.n;
    dnnl::primitive_attr attr;
    auto set_post_ops = [&] {
      dnnl::post_ops post_ops;
      if (sum_bias_) {
        post_ops.append_sum(1.f);
      } else if (bias_ && !rounded_epilogue_ && !native_bias_) {
        post_ops.append_binary(dnnl::algorithm::binary_add, bias_->desc);
      }
      AppendActivationPostOp(post_ops,
                             rounded_epilogue_ || gelu_after_ ? Activation::kNone : plan.activation,
                             plan.low, plan.high);
      attr = dnnl::primitive_attr();
      attr.set_post_ops(post_ops);
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    };
    set_post_ops();
    auto matmul_desc = [&](const dnnl::memory::desc& weights) {
      return native_bias_ ? dnnl::matmul::desc(lhs_.desc, weights, bias_->desc, dst_desc)
                          : dnnl::matmul::desc(lhs_.desc, weights, dst_desc);
    };
    // A constant rhs: let the primitive choose its weights layout, reorder
    // once. A large bf16 one: reorder on each run (kPackRhsMinRows).
    bool constant_weights = plan.rhs.literal != nullptr;
    // (Batched weights keep oneDNN's plain layout: no packing to gain.)
    const int64_t pack_f32_rows = split.pack_rows > 0 ? split.pack_rows : kPackF32RhsMinRows;
    bool pack_at_run_time = !constant_weights && two_d &&
                            plan.m >= (plan.rhs.type == F32 ? pack_f32_rows : kPackRhsMinRows);
    dnnl::memory::desc weights_desc =
        constant_weights || pack_at_run_time
            ? dnnl::memory::desc(weights_dims, DnnlType(plan.rhs.type),
                                 dnnl::memory::format_tag::any)
            : rhs_.desc;
    try {
      dnnl::matmul::primitive_desc primitive_desc(matmul_desc(weights_desc), attr, DnnlEngine());
      if (native_bias_ && std::strncmp(primitive_desc.impl_info_str(), "ref", 3) == 0) {
        // Only oneDNN's reference matmul takes this bias: the post-op, which
        // its faster kernels may take.
        native_bias_ = false;
        set_post_ops();
        primitive_desc =
            dnnl::matmul::primitive_desc(matmul_desc(weights_desc), attr, DnnlEngine());
      }
      if (bias_ && !rounded_epilogue_ && !native_bias_ && !sum_bias_ &&
          std::strncmp(primitive_desc.impl_info_str(), "ref", 3) == 0) {
        // oneDNN 2.6 has only its reference matmul for some broadcasts of a
        // binary post-op (a [1, M, N] bias over a batch: attention's mask
        // above baddbmm ran 1000x slower than the bare dot): the bias is
        // broadcast into the output and added by a sum post-op instead.
        sum_bias_ = true;
        set_post_ops();
        primitive_desc =
            dnnl::matmul::primitive_desc(matmul_desc(weights_desc), attr, DnnlEngine());
      }
      scratchpad_size_ = static_cast<int64_t>(primitive_desc.scratchpad_desc().get_size());
      if (constant_weights) {
        packed_weights_ = dnnl::memory(primitive_desc.weights_desc(), DnnlEngine());
        dnnl::memory plain(rhs_.desc, DnnlEngine(), rhs_.constant.get());
        dnnl::stream stream(DnnlEngine());
        DnnlCopy(stream, plain, packed_weights_);
        stream.wait();
        rhs_.constant.reset();
      }
      if (pack_at_run_time && plan.rhs.type == F32 &&
          !IsOwnPackingLayout(primitive_desc.weights_desc(), rhs_.desc, plan.k, plan.n, F32)) {
        // Only our own f32 packing pays (oneDNN's f32 reorder costs more
        // than the packed layout saves): otherwise the plain layout.
        pack_at_run_time = false;
        primitive_desc = dnnl::matmul::primitive_desc(matmul_desc(rhs_.desc), attr, DnnlEngine());
        scratchpad_size_ = static_cast<int64_t>(primitive_desc.scratchpad_desc().get_size());
      }
      if (pack_at_run_time && primitive_desc.weights_desc() != rhs_.desc) {
        packed_rhs_desc_ = primitive_desc.weights_desc();
        own_packing_ =
            IsOwnPackingLayout(packed_rhs_desc_, rhs_.desc, plan.k, plan.n, plan.rhs.type);
        transposed_rhs_ = own_packing_ && IsTransposedRhs(rhs_.desc);
        dnnl::primitive_attr reorder_attr;
        reorder_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        dnnl::reorder::primitive_desc reorder_desc(DnnlEngine(), rhs_.desc, DnnlEngine(),
                                                   packed_rhs_desc_, reorder_attr);
        rhs_reorder_ = dnnl::reorder(reorder_desc);
        scratchpad_size_ = std::max(
            scratchpad_size_, static_cast<int64_t>(reorder_desc.scratchpad_desc().get_size()));
      }
      primitive_ = dnnl::matmul(primitive_desc);
      dst_desc_ = dst_desc;
      if (split.rows) BuildPieces(split, attr, primitive_desc.weights_desc());
    } catch (const dnnl::error& error) {
      return absl::UnimplementedError(absl::StrCat("oneDNN matmul: ", error.what()));
    }
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }

  // A residual added by the sum post-op, laid out as the output and dead
  // after the dot, becomes the output's memory (in_place_sharing.h): the copy into
  // the output is skipped ([4, 128, 1024] x [1024, 256] + a computed
  // residual, then a negate; 1 thread, best of 5 on a loaded 2-core VM:
  // 1.268 ms with the copy, 1.253 ms without).
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override {
    if (!sum_in_place_) return {};
    return {{operand_values_[sum_source_.operand], output_value_}};
  }

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kDnnlDot, *this);
    writer.Ints(operand_values_);
    writer.Int(output_value_);
    WriteDotPlan(plan_, writer);
    return absl::OkStatus();
  }

  // The dense copies of the operands that need gathering, one after the
  // other in the thunk's scratch memory.
  int64_t scratch_bytes() const override {
    int64_t bytes = 0;
    for (const MatmulInput* input : {&lhs_, &rhs_}) bytes += GatherBytes(*input);
    if (bias_ && !sum_bias_) bytes += GatherBytes(*bias_);
    return bytes;
  }

  absl::Status Execute(const ThunkContext& context) const override {
    OmpTeamShare share(context.run_options, team_);
    // A team of two or more runs the primitive: the intra-op pool's idle
    // workers sleep meanwhile rather than spin on the cores its threads
    // are woken on (thread_pool.h).
    ThreadPool::SpinPause pause(pieces_.empty() && share.threads() > 1 ? context.thread_pool
                                                                       : nullptr);
    // The executable's scratch memory, or (called without) our own.
    std::vector<char> own_scratch;
    char* scratch = context.scratch;
    if (scratch == nullptr || context.scratch_bytes < scratch_bytes()) {
      own_scratch.resize(scratch_bytes() + kBufferAlignment);
      scratch = AlignUp(own_scratch.data());
    }
    auto pointer = [&](const MatmulInput& input) -> void* {
      if (input.constant) return input.constant.get();
      const Source& source = input.source;
      void* base = context.address(operand_values_[source.operand]);
      if (!input.gather) return base;
      char* dense = scratch;
      scratch += GatherBytes(input);
      dot::GatherInto(static_cast<const char*>(base), source, input.order,
                      primitive_util::ByteWidth(source.type), dense);
      return dense;
    };
    try {
      static thread_local dnnl::stream stream(DnnlEngine());  // one per thread
      std::unordered_map<int, dnnl::memory> args;
      args[DNNL_ARG_SRC] = dnnl::memory(lhs_.desc, DnnlEngine(), pointer(lhs_));
      args[DNNL_ARG_WEIGHTS] =
          packed_weights_ ? packed_weights_ : dnnl::memory(rhs_.desc, DnnlEngine(), pointer(rhs_));
      args[DNNL_ARG_DST] = dnnl::memory(dst_desc_, DnnlEngine(), context.address(output_value_));
      if (sum_bias_) {
        // The bias into the output, in its order (broadcast to its dims):
        // the sum post-op adds it. Already there when it shares the
        // output's memory (in_place_pairs).
        const Source& source = sum_source_;
        const void* base = source.literal != nullptr
                               ? source.literal->untyped_data()
                               : context.address(operand_values_[source.operand]);
        if (!sum_in_place_ || base != context.address(output_value_)) {
          dot::GatherInto(static_cast<const char*>(base), source, bias_->order,
                          primitive_util::ByteWidth(source.type),
                          static_cast<char*>(context.address(output_value_)));
        }
      }
      const void* bias = bias_ && !sum_bias_ ? pointer(*bias_) : nullptr;
      if (native_bias_) {
        args[DNNL_ARG_BIAS] = dnnl::memory(bias_->desc, DnnlEngine(), const_cast<void*>(bias));
      } else if (bias_ && !rounded_epilogue_ && !sum_bias_) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
            dnnl::memory(bias_->desc, DnnlEngine(), const_cast<void*>(bias));
      }
      void* aligned = ThreadBuffer(kScratchpad, scratchpad_size_);
      if (scratchpad_size_ > 0) {
        args[DNNL_ARG_SCRATCHPAD] = DnnlScratchpad(scratchpad_size_, aligned);
      }
      if (own_packing_) {
        // On the intra-op pool (oneDNN's team sleeps meanwhile), blocks of
        // 16 row pairs (bf16) or 32 rows (f32): 64 / 128 KiB of a
        // 1024-wide rhs. A transposed rhs is split in units of 16 rows (its
        // register tiles').
        void* packed = ThreadBuffer(kPackedRhs, packed_rhs_desc_.get_size());
        dnnl::memory plain = args[DNNL_ARG_WEIGHTS];
        const void* src = plain.get_data_handle();
        const int64_t ld = plain.get_desc().data.format_desc.blocking.strides[transposed_rhs_];
        const int64_t padded_k = packed_rhs_desc_.data.padded_dims[0];
        const int64_t padded_n = packed_rhs_desc_.data.padded_dims[1];
        const bool f32 = packed_rhs_desc_.data_type() == dnnl::memory::data_type::f32;
        auto pack = [&](int64_t begin, int64_t end) {
          if (transposed_rhs_) {
            PackBA16a64bTransposed(static_cast<const float*>(src), dims_[3], dims_[2], ld, padded_k,
                                   padded_n, 16 * begin, 16 * end, static_cast<float*>(packed));
          } else if (f32) {
            PackBA16a64b(static_cast<const float*>(src), dims_[3], dims_[2], ld, padded_k, padded_n,
                         begin, end, static_cast<float*>(packed));
          } else {
            PackBA16a64b2a(static_cast<const uint16_t*>(src), dims_[3], dims_[2], ld, padded_k,
                           padded_n, begin, end, static_cast<uint16_t*>(packed));
          }
        };
        const int64_t units = transposed_rhs_ ? padded_k / 16 : f32 ? padded_k : padded_k / 2;
        const int64_t min_block = transposed_rhs_ ? 2 : f32 ? 32 : 16;
        if (context.thread_pool != nullptr) {
          context.thread_pool->ParallelFor(units, min_block, pack, context.max_threads);
        } else {
          pack(0, units);
        }
        args[DNNL_ARG_WEIGHTS] = dnnl::memory(packed_rhs_desc_, DnnlEngine(), packed);
      } else if (rhs_reorder_) {
        // The stream is in order: the reorder is done before the matmul
        // reads the packed rhs (and the two take turns on the scratchpad).
        dnnl::memory packed(packed_rhs_desc_, DnnlEngine(),
                            ThreadBuffer(kPackedRhs, packed_rhs_desc_.get_size()));
        std::unordered_map<int, dnnl::memory> reorder_args = {
            {DNNL_ARG_FROM, args[DNNL_ARG_WEIGHTS]}, {DNNL_ARG_TO, packed}};
        if (scratchpad_size_ > 0) reorder_args[DNNL_ARG_SCRATCHPAD] = args[DNNL_ARG_SCRATCHPAD];
        rhs_reorder_.execute(stream, reorder_args);
        args[DNNL_ARG_WEIGHTS] = packed;
      }
      if (!pieces_.empty()) {
        AXLE_RETURN_IF_ERROR(RunPieces(context, args));
        return absl::OkStatus();
      }
      primitive_.execute(stream, args);
      stream.wait();
      if (gelu_after_) GeluAfter(context, static_cast<float*>(context.address(output_value_)));
      if (rounded_epilogue_) {
        RoundedEpilogue(static_cast<const bfloat16*>(bias),
                        static_cast<bfloat16*>(context.address(output_value_)));
      }
    } catch (const dnnl::error& error) {
      return absl::InternalError(absl::StrCat("oneDNN matmul: ", error.what()));
    }
    return absl::OkStatus();
  }

 private:
  // A split dot (dot_split.h): the pieces along the leading dim of the
  // primitive's descs (rows of a 2-d dot, batch of a 3-d one), each a
  // one-thread primitive over the same weights (a batched dot's advance
  // with the piece), bias and post-ops. Leaves pieces_ empty (the whole
  // primitive on oneDNN's team) where a piece would differ from its share
  // of the whole: a bf16 dot, a binary post-op's bias (it may vary along the
  // leading dim), batched constant weights (oneDNN's blocked layout), or a
  // piece only oneDNN's reference matmul takes.
  void BuildPieces(const dot::DotSplitOptions& split, const dnnl::primitive_attr& attr,
                   const dnnl::memory::desc& weights) {
    pieces_.clear();
    piece_primitives_.clear();
    const int threads = std::min(team_, ThreadPool::DefaultNumThreads());
    if (threads < 2 || plan_.output_type != F32 || plan_.lhs.type != F32 || plan_.rhs.type != F32 ||
        rounded_epilogue_ || (rhs_reorder_ && !own_packing_) ||
        (bias_ && !native_bias_ && !sum_bias_)) {
      return;
    }
    const bool batched = lhs_.desc.data.ndims == 3;
    if (batched && packed_weights_) return;
    // Rows in multiples of 16 (the kernels' row blocks), at least 32 a
    // piece (each piece reads all of the rhs), 128 from a plain rhs, which
    // oneDNN's brgemm copies into blocks again for each piece (one thread,
    // [256, 784] x [784, 1024] plain: 2.33 ms whole, 2 x 1.20 in 128-row
    // pieces, 4 x 0.59 in 64-row ones; packed, 128-row pieces of
    // [512, 256] x [256, 768] took 4 x 0.22 ms against 1.00 whole).
    const int64_t min_rows = packed_weights_ || own_packing_ ? 32 : 128;
    const std::vector<dot::DotPiece> ranges =
        dot::SplitLeadingDim(lhs_.desc.dims()[0], batched ? 1 : 16, batched ? 1 : min_rows, threads,
                             split.pieces_per_thread);
    if (ranges.empty()) return;
    OmpTeamOfOne team;  // primitives for a team of one
    std::vector<Piece> pieces;
    std::vector<PiecePrimitive> primitives;
    int64_t scratchpad = 0;
    try {
      for (const dot::DotPiece& range : ranges) {
        Piece piece;
        piece.begin = range.begin;
        piece.length = range.end - range.begin;
        piece.primitive = -1;
        for (size_t p = 0; p < primitives.size(); ++p) {
          if (primitives[p].length == piece.length) piece.primitive = static_cast<int>(p);
        }
        if (piece.primitive < 0) {
          PiecePrimitive made;
          made.length = piece.length;
          made.src = WithLeading(lhs_.desc, piece.length);
          made.weights = batched ? WithLeading(weights, piece.length) : weights;
          made.dst = WithLeading(dst_desc_, piece.length);
          dnnl::matmul::desc desc =
              native_bias_ ? dnnl::matmul::desc(made.src, made.weights, bias_->desc, made.dst)
                           : dnnl::matmul::desc(made.src, made.weights, made.dst);
          dnnl::matmul::primitive_desc primitive_desc(desc, attr, DnnlEngine());
          if (std::strncmp(primitive_desc.impl_info_str(), "ref", 3) == 0 ||
              primitive_desc.weights_desc() != made.weights) {
            return;
          }
          scratchpad = std::max(scratchpad,
                                static_cast<int64_t>(primitive_desc.scratchpad_desc().get_size()));
          made.primitive = dnnl::matmul(primitive_desc);
          piece.primitive = static_cast<int>(primitives.size());
          primitives.push_back(std::move(made));
        }
        pieces.push_back(piece);
      }
    } catch (const dnnl::error&) {
      return;
    }
    const dnnl_dims_t& lhs_strides = lhs_.desc.data.format_desc.blocking.strides;
    const dnnl_dims_t& dst_strides = dst_desc_.data.format_desc.blocking.strides;
    lhs_lead_stride_ = lhs_strides[0];
    dst_lead_stride_ = dst_strides[0];
    rhs_lead_stride_ = batched ? weights.data.format_desc.blocking.strides[0] : 0;
    pieces_ = std::move(pieces);
    piece_primitives_ = std::move(primitives);
    // One scratchpad size for both, so that the calling thread's buffer
    // is never reallocated under the whole primitive's arguments.
    scratchpad_size_ = std::max(scratchpad_size_, scratchpad);
  }

  // The pieces on the intra-op pool (no more threads than the team), from
  // the whole primitive's arguments `args`; each piece's GELU right after
  // it, on its rows.
  absl::Status RunPieces(const ThunkContext& context,
                         const std::unordered_map<int, dnnl::memory>& args) const {
    auto base = [&](int arg) { return static_cast<char*>(args.at(arg).get_data_handle()); };
    char* src = base(DNNL_ARG_SRC);
    char* weights = base(DNNL_ARG_WEIGHTS);
    char* dst = base(DNNL_ARG_DST);
    const dnnl::memory* bias = args.count(DNNL_ARG_BIAS) != 0 ? &args.at(DNNL_ARG_BIAS) : nullptr;
    absl::InlinedVector<absl::Status, 8> status(pieces_.size());
    auto run = [&](int64_t begin, int64_t end) {
      OmpTeamOfOne team;
      for (int64_t i = begin; i < end; ++i) {
        const Piece& piece = pieces_[i];
        const PiecePrimitive& primitive = piece_primitives_[piece.primitive];
        float* out = reinterpret_cast<float*>(dst) + piece.begin * dst_lead_stride_;
        try {
          // One stream per thread; the piece's memories from the thread's
          // cache (dnnl_args.h): pieces run every few microseconds.
          static thread_local dnnl::stream stream(DnnlEngine());
          DnnlArgs piece_args;
          piece_args.Set(DNNL_ARG_SRC, DnnlThreadMemory(&primitive.src, DNNL_ARG_SRC, primitive.src,
                                                        reinterpret_cast<float*>(src) +
                                                            piece.begin * lhs_lead_stride_));
          piece_args.Set(
              DNNL_ARG_WEIGHTS,
              DnnlThreadMemory(&primitive.weights, DNNL_ARG_WEIGHTS, primitive.weights,
                               reinterpret_cast<float*>(weights) + piece.begin * rhs_lead_stride_));
          piece_args.Set(DNNL_ARG_DST,
                         DnnlThreadMemory(&primitive.dst, DNNL_ARG_DST, primitive.dst, out));
          if (bias != nullptr) piece_args.Set(DNNL_ARG_BIAS, *bias);
          if (scratchpad_size_ > 0) {
            piece_args.Set(DNNL_ARG_SCRATCHPAD,
                           DnnlThreadScratchpad(&primitive, scratchpad_size_,
                                                ThreadBuffer(kScratchpad, scratchpad_size_)));
          }
          piece_args.Execute(primitive.primitive, stream);
          stream.wait();
        } catch (const dnnl::error& error) {
          status[i] = absl::InternalError(absl::StrCat("oneDNN matmul: ", error.what()));
          continue;
        }
        if (gelu_after_) GeluTanhInPlace(out, piece.length * dst_lead_stride_);
      }
    };
    const int64_t count = static_cast<int64_t>(pieces_.size());
    if (context.thread_pool == nullptr) {
      run(0, count);
    } else {
      const int threads = context.max_threads > 0 ? std::min(context.max_threads, team_) : team_;
      context.thread_pool->ParallelFor(count, 1, run, threads, ThreadPool::AfterJob::kSpin);
    }
    for (const absl::Status& piece_status : status) AXLE_RETURN_IF_ERROR(piece_status);
    return absl::OkStatus();
  }

  // GELU over the f32 result `out`, in blocks of rows on the intra-op pool
  // (no more threads than the matmul's team).
  void GeluAfter(const ThunkContext& context, float* out) const {
    const int64_t n = dims_[2];
    auto activate = [&](int64_t begin, int64_t end) {
      GeluTanhInPlace(out + begin * n, (end - begin) * n);
    };
    const int64_t rows = dims_[0] * dims_[1];
    if (context.thread_pool == nullptr || team_ == 1) return activate(0, rows);
    const int max_threads = context.max_threads > 0 ? std::min(context.max_threads, team_) : team_;
    context.thread_pool->ParallelFor(rows, std::max<int64_t>(1, kMinGeluBlock / n), activate,
                                     max_threads);
  }

  // The epilogue of a bf16 result, row by row: each op rounds to bf16.
  void RoundedEpilogue(const bfloat16* bias, bfloat16* out) const {
    const int64_t* bias_dims = bias_dims_;
    const int64_t n = dims_[2];
    for (int64_t b = 0; b < dims_[0]; ++b) {
      for (int64_t i = 0; i < dims_[1]; ++i) {
        bfloat16* row = out + (b * dims_[1] + i) * n;
        if (bias != nullptr) {
          int64_t bb = bias_dims[0] == 1 ? 0 : b, bi = bias_dims[1] == 1 ? 0 : i;
          const bfloat16* bias_row = bias + (bb * bias_dims[1] + bi) * bias_dims[2];
          if (bias_dims[2] == 1) {
            float term = static_cast<float>(bias_row[0]);
            for (int64_t j = 0; j < n; ++j) row[j] = bfloat16(static_cast<float>(row[j]) + term);
          } else {
            for (int64_t j = 0; j < n; ++j) {
              row[j] = bfloat16(static_cast<float>(row[j]) + static_cast<float>(bias_row[j]));
            }
          }
        }
        ActivateRow(row, n);
      }
    }
  }

  void ActivateRow(bfloat16* row, int64_t n) const {
    ActivateInPlace(activation_, low_, high_, row, n);
  }

  DotPlan plan_;  // as Build got it, without HLO
  bool rounded_epilogue_ = false;
  bool sum_bias_ = false;      // the bias copied into the output, a sum post-op
  bool sum_in_place_ = false;  // sum_bias_'s bias may share the output's memory
  bool native_bias_ = false;   // the bias as the matmul's bias argument
  bool gelu_after_ = false;    // an f32 GELU after the primitive (GeluAfter)
  Activation activation_ = Activation::kNone;
  float low_ = 0, high_ = 0;
  int64_t dims_[4] = {1, 1, 1, 1};    // B, M, N, K
  int64_t bias_dims_[3] = {1, 1, 1};  // [B|1, M|1, N|1]
  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  MatmulInput lhs_, rhs_;
  std::optional<MatmulInput> bias_;
  Source sum_source_;  // the bias at the output's dims (sum_bias_'s gather)
  dnnl::memory packed_weights_;
  // A rhs packed on each run (kPackRhsMinRows): its layout and the reorder.
  dnnl::memory::desc packed_rhs_desc_;
  dnnl::primitive rhs_reorder_;
  bool own_packing_ = false;     // PackBA16a64b(2a) instead of rhs_reorder_
  bool transposed_rhs_ = false;  // own packing from a transposed rhs
  dnnl::memory::desc dst_desc_;
  dnnl::primitive primitive_;
  int64_t scratchpad_size_ = 0;
  int team_ = 1;  // the most OpenMP threads a run uses (TeamSizeForWork)
  // The split dot's pieces (BuildPieces), their primitives (one per piece
  // length) and the leading dim's strides in elements.
  struct Piece {
    int64_t begin = 0, length = 0;
    int primitive = 0;
  };
  struct PiecePrimitive {
    int64_t length = 0;
    dnnl::memory::desc src, weights, dst;
    dnnl::primitive primitive;
  };
  std::vector<Piece> pieces_;
  std::vector<PiecePrimitive> piece_primitives_;
  int64_t lhs_lead_stride_ = 0, rhs_lead_stride_ = 0, dst_lead_stride_ = 0;
};

}  // namespace

int DotThreads() { return ThreadPool::DefaultNumThreads(); }

std::unique_ptr<Thunk> LoadDnnlDotThunk(std::string name, ThunkReader& reader) {
  std::vector<int64_t> operand_values = reader.Values();
  const int64_t output_value = reader.Value();
  DotPlan plan = ReadDotPlan(reader);
  if (!reader.ok()) return nullptr;
  if (!DotPlanOperandsIn(plan, operand_values.size())) {
    reader.Fail(absl::StrCat("dot %", name, " reads an operand it does not have"));
    return nullptr;
  }
  auto thunk =
      std::make_unique<DnnlDotThunk>(std::move(name), std::move(operand_values), output_value);
  if (absl::Status status = thunk->Build(plan); !status.ok()) {
    reader.Fail(absl::StrCat("dot %", thunk->name(), ": ", status.message()));
    return nullptr;
  }
  return thunk;
}

absl::StatusOr<std::unique_ptr<Thunk>> dot::MakeDnnlDotThunk(std::string name,
                                                             std::vector<int64_t> operand_values,
                                                             int64_t output_value,
                                                             const DotPlan& plan) {
  auto thunk =
      std::make_unique<DnnlDotThunk>(std::move(name), std::move(operand_values), output_value);
  AXLE_RETURN_IF_ERROR(thunk->Build(plan));
  return std::unique_ptr<Thunk>(std::move(thunk));
}

}  // namespace axle::cpu
