//===- conv_chain_thunk.cc - A chain of convolutions in bands of rows ------===//
//
// The thunk of conv_chain.h: its bands laid out at compile time from the
// stages' row windows, run band by band on the intra-op pool, and its
// serialized form.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/host_cache_sizes.h"
#include "axle/cpu/runtime/conv_chain.h"
#include "axle/cpu/runtime/conv_row_split.h"
#include "axle/cpu/runtime/convolution_plan.h"
#include "axle/cpu/runtime/convolution_thunk_internal.h"
#include "axle/cpu/runtime/depthwise_rows.h"
#include "axle/cpu/runtime/omp_team.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {
namespace {

using conv::BaseOf;
using conv::ConvPlan;
using conv::DnnlConvolutionThunk;

// --- The chain's thunk ---

// One band of the depthwise stage's output rows [out_begin, out_end): the
// expand's new rows [expand_begin, expand_end) (its buffer keeps the
// previous band's rows from depthwise_in_begin on), the depthwise stage's
// input rows [depthwise_in_begin, depthwise_in_end), and each stage's
// row-band primitive.
struct Band {
  int64_t out_begin = 0, out_end = 0;
  int64_t depthwise_in_begin = 0, depthwise_in_end = 0;
  int64_t expand_begin = 0, expand_end = 0;
  // Rows of padding above the depthwise stage's input rows.
  int64_t depthwise_pad_top = 0;
  int expand = -1, depthwise = -1, project = -1;
};

class ConvChainThunk : public Thunk {
 public:
  ConvChainThunk(std::string name, std::vector<int64_t> operand_values, int64_t output_value,
                 std::vector<std::unique_ptr<DnnlConvolutionThunk>> stages, bool has_expand)
      : Thunk(std::move(name)),
        operand_values_(std::move(operand_values)),
        output_value_(output_value),
        stages_(std::move(stages)),
        has_expand_(has_expand) {}

  // Lays out the bands; Unimplemented when a stage does not run in bands.
  absl::Status Build();

  absl::Status Execute(const ThunkContext& context) const override;
  bool runs_depthwise_rows() const { return depthwise().depthwise_rows() != nullptr; }
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, {output_value_}};
  }
  int64_t scratch_bytes() const override {
    return static_cast<int64_t>(bands_.size()) * thread_scratch_bytes_;
  }
  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kConvChain, *this);
    writer.Ints(operand_values_);
    writer.Int(output_value_);
    writer.Bool(has_expand_);
    writer.Int(static_cast<int64_t>(stages_.size()));
    for (const auto& stage : stages_) AXLE_RETURN_IF_ERROR(writer.Thunk(*stage));
    return absl::OkStatus();
  }

 private:
  const DnnlConvolutionThunk* expand() const { return has_expand_ ? stages_[0].get() : nullptr; }
  const DnnlConvolutionThunk& depthwise() const { return *stages_[has_expand_ ? 1 : 0]; }
  const DnnlConvolutionThunk* project() const {
    return stages_.size() > (has_expand_ ? 2u : 1u) ? stages_.back().get() : nullptr;
  }
  // Runs thread `t`'s bands with its scratch at `scratch`.
  absl::Status RunBands(const ThunkContext& context, int64_t t, char* scratch) const;

  std::vector<int64_t> operand_values_;
  int64_t output_value_;
  std::vector<std::unique_ptr<DnnlConvolutionThunk>> stages_;
  bool has_expand_;
  // Bytes of one row of: the chain's input, the expand's output (the
  // depthwise stage's input), the depthwise stage's output, the chain's
  // output.
  int64_t in_row_bytes_ = 0, mid_row_bytes_ = 0, depthwise_row_bytes_ = 0, out_row_bytes_ = 0;
  // Per thread, its bands in order; each thread's scratch: the expand's
  // rows, the depthwise stage's rows, the primitives' scratchpad.
  std::vector<std::vector<Band>> bands_;
  int64_t expand_buffer_bytes_ = 0, depthwise_buffer_bytes_ = 0, thread_scratch_bytes_ = 0;
};

int64_t RowBytes(const std::vector<int64_t>& dims) {
  // [1, C, H, W] dense with rows outermost: C * W elements a row.
  return dims[1] * dims[3] * static_cast<int64_t>(sizeof(float));
}

// Whether `plan` is a 1x1 convolution at stride 1 without padding or groups.
bool PointwisePlan(const ConvPlan& plan) {
  if (plan.feature_groups != 1 || plan.rhs_dims[2] != 1 || plan.rhs_dims[3] != 1) return false;
  for (const WindowDimension& w : plan.window) {
    if (w.stride() != 1 || w.padding_low() != 0 || w.padding_high() != 0) return false;
  }
  return true;
}

absl::Status ConvChainThunk::Build() {
  for (const auto& stage : stages_) {
    if (!stage->RowBandsAvailable()) {
      return absl::UnimplementedError(absl::StrCat("convolution %", stage->name(), " in bands"));
    }
  }
  // The stages as the emitter chains them (a serialized chain may say
  // anything): each reads the one before's output, the depthwise one
  // between 1x1 ones.
  const ConvPlan& dw = depthwise().plan();
  bool chained = stages_.size() == 2 || (stages_.size() == 3 && has_expand_);
  for (size_t s = 1; s < stages_.size(); ++s) {
    chained = chained && stages_[s - 1]->plan().out_dims == stages_[s]->plan().lhs_dims;
  }
  chained = chained && dw.feature_groups == dw.lhs_dims[1] && dw.out_dims[1] == dw.lhs_dims[1];
  for (const DnnlConvolutionThunk* stage : {expand(), project()}) {
    chained = chained && (stage == nullptr || PointwisePlan(stage->plan()));
  }
  if (!chained) return absl::InvalidArgumentError("convolutions that do not chain");
  in_row_bytes_ = RowBytes(stages_.front()->plan().lhs_dims);
  mid_row_bytes_ = RowBytes(dw.lhs_dims);
  depthwise_row_bytes_ = RowBytes(dw.out_dims);
  out_row_bytes_ = RowBytes(stages_.back()->plan().out_dims);
  const ConvRowWindow window = depthwise().RowBandWindow();
  const int64_t rows = window.OutRows();
  const int64_t threads = std::min<int64_t>(ThreadPool::DefaultNumThreads(), rows);
  // A band's expand and depthwise rows fill about half the L2 at most.
  const int64_t budget = HostCacheSizes().l2_bytes / 2;
  const int64_t per_out_row = (has_expand_ ? window.stride * mid_row_bytes_ : 0) +
                              (project() != nullptr ? depthwise_row_bytes_ : 0);
  const int64_t band_rows = std::max<int64_t>(1, budget / std::max<int64_t>(1, per_out_row));
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, int> depthwise_bands;
  std::map<int64_t, int> expand_bands, project_bands;
  auto band_of = [](auto& cache, auto key, auto make) {
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    const int band = make();
    cache.emplace(key, band);
    return band;
  };
  const int64_t extent = (window.size - 1) * window.dilation + 1;
  int64_t expand_rows = 0, depthwise_rows = 0;
  bands_.assign(threads, {});
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = rows * t / threads, end = rows * (t + 1) / threads;
    const int64_t count = (end - begin + band_rows - 1) / band_rows;
    int64_t have_begin = 0, have_end = 0;  // the expand's rows in the buffer
    for (int64_t b = 0; b < count; ++b) {
      Band band;
      // Even bands: the thread's rows in `count` near-equal parts.
      band.out_begin = begin + (end - begin) * b / count;
      band.out_end = begin + (end - begin) * (b + 1) / count;
      const int64_t first = band.out_begin * window.stride - window.pad_low;
      const int64_t last = (band.out_end - 1) * window.stride - window.pad_low + extent;
      band.depthwise_in_begin = std::max<int64_t>(0, first);
      band.depthwise_in_end = std::min(window.in_rows, last);
      if (band.depthwise_in_begin >= band.depthwise_in_end) {
        return absl::UnimplementedError("a band of padding only");
      }
      const int64_t in_rows = band.depthwise_in_end - band.depthwise_in_begin;
      const int64_t out_rows = band.out_end - band.out_begin;
      const int64_t pad_low = band.depthwise_in_begin - first,
                    pad_high = last - band.depthwise_in_end;
      band.depthwise_pad_top = pad_low;
      band.depthwise =
          band_of(depthwise_bands, std::make_tuple(in_rows, out_rows, pad_low, pad_high), [&] {
            return stages_[has_expand_ ? 1 : 0]->AddRowBand(in_rows, out_rows, pad_low, pad_high);
          });
      if (has_expand_) {
        if (b == 0 || have_end <= band.depthwise_in_begin) have_end = band.depthwise_in_begin;
        have_begin = band.depthwise_in_begin;
        band.expand_begin = have_end;
        band.expand_end = band.depthwise_in_end;
        const int64_t fresh = band.expand_end - band.expand_begin;
        if (fresh > 0) {
          band.expand = band_of(expand_bands, fresh,
                                [&] { return stages_[0]->AddRowBand(fresh, fresh, 0, 0); });
          if (band.expand < 0) return absl::UnimplementedError("an expand band");
        }
        have_end = band.depthwise_in_end;
        expand_rows = std::max(expand_rows, have_end - have_begin);
      }
      if (project() != nullptr) {
        band.project = band_of(project_bands, out_rows, [&] {
          return stages_.back()->AddRowBand(out_rows, out_rows, 0, 0);
        });
        if (band.project < 0) return absl::UnimplementedError("a project band");
        depthwise_rows = std::max(depthwise_rows, out_rows);
      }
      if (band.depthwise < 0) return absl::UnimplementedError("a depthwise band");
      bands_[t].push_back(band);
    }
  }
  int64_t scratchpad = 0;
  for (const auto& stage : stages_) {
    scratchpad = std::max(scratchpad, stage->row_band_scratchpad_bytes());
  }
  expand_buffer_bytes_ = RoundUpToAlignment(expand_rows * mid_row_bytes_);
  depthwise_buffer_bytes_ = RoundUpToAlignment(depthwise_rows * depthwise_row_bytes_);
  thread_scratch_bytes_ = expand_buffer_bytes_ + depthwise_buffer_bytes_ +
                          RoundUpToAlignment(std::max<int64_t>(1, scratchpad));
  return absl::OkStatus();
}

absl::Status ConvChainThunk::RunBands(const ThunkContext& context, int64_t t, char* scratch) const {
  OmpTeamOfOne team;
  const DnnlConvolutionThunk& first = *stages_.front();
  const DnnlConvolutionThunk* last = project();
  const char* in = BaseOf(context, first.plan().lhs, first.operand_values());
  char* out = static_cast<char*>(context.address(output_value_));
  const char* addend = last != nullptr && last->plan().addend
                           ? BaseOf(context, *last->plan().addend, last->operand_values())
                           : nullptr;
  char* expand_rows = scratch;
  char* depthwise_rows = scratch + expand_buffer_bytes_;
  char* scratchpad = depthwise_rows + depthwise_buffer_bytes_;
  int64_t have_begin = 0, have_end = 0;  // the expand's rows in expand_rows
  for (const Band& band : bands_[t]) {
    const char* depthwise_in = in + band.depthwise_in_begin * in_row_bytes_;
    if (const DnnlConvolutionThunk* e = expand()) {
      // Keep the rows this band needs again at the buffer's start.
      if (have_end > band.depthwise_in_begin && have_begin < band.depthwise_in_begin) {
        std::memmove(expand_rows,
                     expand_rows + (band.depthwise_in_begin - have_begin) * mid_row_bytes_,
                     (have_end - band.depthwise_in_begin) * mid_row_bytes_);
      }
      have_begin = band.depthwise_in_begin;
      have_end = band.expand_begin;
      if (band.expand >= 0) {
        AXLE_RETURN_IF_ERROR(e->RunRowBand(band.expand, in + band.expand_begin * in_row_bytes_,
                                           expand_rows + (have_end - have_begin) * mid_row_bytes_,
                                           nullptr, scratchpad));
      }
      have_end = band.expand_end;
      depthwise_in = expand_rows;
    }
    char* depthwise_out = last != nullptr ? depthwise_rows : out + band.out_begin * out_row_bytes_;
    // A 3x3 depthwise stage on depthwise_rows.h's kernel, else oneDNN's band.
    if (const DepthwiseRows* rows = depthwise().depthwise_rows()) {
      DepthwiseRows3x3(*rows, reinterpret_cast<const float*>(depthwise_in),
                       band.depthwise_in_end - band.depthwise_in_begin, band.depthwise_pad_top,
                       reinterpret_cast<float*>(depthwise_out), band.out_end - band.out_begin);
    } else {
      AXLE_RETURN_IF_ERROR(
          depthwise().RunRowBand(band.depthwise, depthwise_in, depthwise_out, nullptr, scratchpad));
    }
    if (last != nullptr) {
      AXLE_RETURN_IF_ERROR(last->RunRowBand(
          band.project, depthwise_rows, out + band.out_begin * out_row_bytes_,
          addend != nullptr ? addend + band.out_begin * out_row_bytes_ : nullptr, scratchpad));
    }
  }
  return absl::OkStatus();
}

absl::Status ConvChainThunk::Execute(const ThunkContext& context) const {
  std::vector<char> own_scratch;
  char* scratch = context.scratch;
  if (scratch == nullptr || context.scratch_bytes < scratch_bytes()) {
    own_scratch.resize(scratch_bytes() + kBufferAlignment);
    scratch = AlignUp(own_scratch.data());
  }
  const int64_t threads = static_cast<int64_t>(bands_.size());
  absl::InlinedVector<absl::Status, 4> status(threads);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      status[t] = RunBands(context, t, scratch + t * thread_scratch_bytes_);
    }
  };
  if (context.thread_pool == nullptr || threads == 1) {
    run(0, threads);
  } else {
    context.thread_pool->ParallelFor(threads, 1, run, context.max_threads,
                                     ThreadPool::AfterJob::kSpin);
  }
  for (const absl::Status& s : status) AXLE_RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Thunk>> MakeConvChainThunk(
    std::string name, std::vector<int64_t> operand_values, int64_t output_value,
    std::vector<std::unique_ptr<DnnlConvolutionThunk>> stages, bool has_expand) {
  auto thunk = std::make_unique<ConvChainThunk>(std::move(name), std::move(operand_values),
                                                output_value, std::move(stages), has_expand);
  AXLE_RETURN_IF_ERROR(thunk->Build());
  return std::unique_ptr<Thunk>(std::move(thunk));
}

bool IsConvChainThunk(const Thunk& thunk) {
  return dynamic_cast<const ConvChainThunk*>(&thunk) != nullptr;
}

bool ConvChainRunsDepthwiseRows(const Thunk& thunk) {
  const auto* chain = dynamic_cast<const ConvChainThunk*>(&thunk);
  return chain != nullptr && chain->runs_depthwise_rows();
}

std::unique_ptr<Thunk> LoadConvChainThunk(std::string name, ThunkReader& reader) {
  std::vector<int64_t> operand_values = reader.Values();
  const int64_t output_value = reader.Value();
  const bool has_expand = reader.Bool();
  const int64_t count = reader.Int();
  if (!reader.ok()) return nullptr;
  if (count < 2 || count > 3) {
    reader.Fail(absl::StrCat("convolution chain %", name, ": ", count, " stages"));
    return nullptr;
  }
  std::vector<std::unique_ptr<DnnlConvolutionThunk>> stages;
  for (int64_t s = 0; s < count; ++s) {
    std::unique_ptr<Thunk> stage = reader.Thunk();
    if (!reader.ok()) return nullptr;
    auto* dnnl = dynamic_cast<DnnlConvolutionThunk*>(stage.get());
    if (dnnl == nullptr) {
      reader.Fail(absl::StrCat("convolution chain %", name, ": a stage that is no convolution"));
      return nullptr;
    }
    stages.emplace_back(dnnl);
    static_cast<void>(stage.release());  // owned by stages now
  }
  absl::StatusOr<std::unique_ptr<Thunk>> thunk = MakeConvChainThunk(
      std::move(name), std::move(operand_values), output_value, std::move(stages), has_expand);
  if (!thunk.ok()) {
    reader.Fail(std::string(thunk.status().message()));
    return nullptr;
  }
  return *std::move(thunk);
}

}  // namespace axle::cpu
