//===- fft_thunk.cc - fft as O(n log n) line transforms on the pool -------===//
//
// XLA's fft (semantics in axle/eval/fft.cc) on the executable's buffers:
// FFT, IFFT, RFFT and IRFFT over the 1-3 innermost dimensions (fft_length),
// c64/c128 (f32/f64 for RFFT's operand and IRFFT's result), the leading
// dimensions a batch. Each batch element is transformed one axis at a time
// with the 1-d plans of fft_plan.h, made when the thunk is:
//
//   FFT, IFFT  the innermost axis from the operand into the result, then
//              each outer axis in place in the result (a line is gathered
//              by the plan's strided read and scattered back).
//   RFFT       the innermost axis as real -> n/2 + 1 complex, then the
//              outer axes in place.
//   IRFFT      the outer axes from the operand into a work copy (the
//              operand stays as it is), then the innermost axis as
//              n/2 + 1 complex -> real into the result.
//
// IFFT and IRFFT scale by 1/N (N the product of fft_length) at the end.
// Threads: with at least as many batch elements as the intra-op pool has
// threads (ThreadPool::DefaultNumThreads()), the batch is split into one
// contiguous range per thread; with fewer, each pass of each element (its
// rows, lines or scaled elements) is split instead. Every range has its own
// slot of the thunk's scratch memory (line buffer, the plans' work memory;
// IRFFT's copy per range of elements), so a run allocates nothing and
// concurrent runs share only the read-only plans.
//
// Shapes XLA's verifier rejects but the interpreter accepts (FFT operand
// extents other than fft_length, zero lengths) keep running through the
// interpreter's kernel (linalg_thunk.h): EmitFftThunk decides, in
// fft_thunk_emitter.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/fft_thunk.h"

#include <algorithm>
#include <bit>
#include <complex>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/fft_lines.h"
#include "axle/cpu/runtime/fft_plan.h"
#include "axle/cpu/runtime/thunk_serialization.h"

namespace axle::cpu {
namespace {

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= d;
  return product;
}

// One batch element's transform, for element type std::complex<T>.
template <typename T>
class FftTransform {
 public:
  using Complex = std::complex<T>;

  FftTransform(FftType type, std::vector<int64_t> lengths)
      : type_(type), lengths_(std::move(lengths)) {
    const int64_t rank = static_cast<int64_t>(lengths_.size());
    const bool inverse = type_ == IFFT || type_ == IRFFT;
    const bool real = type_ == RFFT || type_ == IRFFT;
    complex_dims_ = lengths_;
    if (real) complex_dims_.back() = lengths_.back() / 2 + 1;
    for (int64_t a = 0; a < rank; ++a) {
      if (real && a == rank - 1) break;
      plans_.emplace_back(lengths_[a], inverse);
    }
    if (real) real_plan_ = std::make_unique<RealFftPlan<T>>(lengths_.back(), inverse);
    int64_t work = real_plan_ ? real_plan_->work_size() : 0;
    int64_t line = 0;
    for (const ComplexFftPlan<T>& plan : plans_) {
      work = std::max(work, plan.work_size());
      line = std::max(line, plan.size());
    }
    work_offset_ = line;
    slot_elements_ = line + work;
    // f32 power-of-two lines: 16 at a time (fft_lines.h), with 16 lines of
    // work memory (real lines: the half-length transform's and the n/2 + 1
    // frequencies').
    if constexpr (std::is_same_v<T, float>) {
      constexpr int64_t kLanes = LineBatchFft::kLanes;
      for (const ComplexFftPlan<T>& plan : plans_) {
        if (!LineBatchFft::Supports(plan.size())) {
          batched_.push_back(nullptr);
          continue;
        }
        batched_.push_back(std::make_unique<LineBatchFft>(plan.size(), inverse));
        slot_elements_ = std::max(slot_elements_, kLanes * plan.size());
      }
      const int64_t n = lengths_.back();
      if (real && n % 2 == 0 && LineBatchFft::Supports(n / 2)) {
        real_batched_ = std::make_unique<LineBatchFft>(n / 2, inverse);
        slot_elements_ = std::max(slot_elements_, real_batched_->real_work_floats() / 2);
      }
    }
    copy_elements_ = type_ == IRFFT && rank > 1 ? Product(complex_dims_) : 0;
    scale_ = T(1.0 / static_cast<double>(Product(lengths_)));
    for (int64_t l : lengths_) log_sum_ += std::bit_width(static_cast<uint64_t>(l));
  }

  FftType type() const { return type_; }
  const std::vector<int64_t>& lengths() const { return lengths_; }
  // Bytes of one batch element of the operand and of the result.
  int64_t operand_bytes() const {
    return type_ == RFFT ? Product(lengths_) * sizeof(T)
                         : Product(type_ == IRFFT ? complex_dims_ : lengths_) * sizeof(Complex);
  }
  int64_t result_bytes() const {
    return type_ == IRFFT ? Product(lengths_) * sizeof(T)
                          : Product(type_ == RFFT ? complex_dims_ : lengths_) * sizeof(Complex);
  }
  // Complex elements of one thread's slot (line buffer and plan work
  // memory) and of IRFFT's copy of one batch element (0 for a 1-d IRFFT
  // and the other types).
  int64_t slot_elements() const { return slot_elements_; }
  int64_t copy_elements() const { return copy_elements_; }
  // About the floating-point operations of one batch element / 5.
  int64_t work() const { return Product(complex_dims_) * std::max<int64_t>(1, log_sum_); }

  // One pass over independent units [begin, end) (lines, rows, elements),
  // with a slot's line buffer and work memory.
  using Pass = absl::FunctionRef<void(Complex* slot, int64_t begin, int64_t end)>;
  // Runs a pass over [0, units): all on one slot, or in ranges on several.
  using ForEachUnit = absl::FunctionRef<void(int64_t units, Pass pass)>;

  // Transforms one batch element: `in` and `out` point at its first
  // element, `copy` holds copy_elements().
  void Run(const void* in, void* out, Complex* copy, ForEachUnit for_each) const {
    const int64_t rank = static_cast<int64_t>(lengths_.size());
    const int64_t n = lengths_.back();
    switch (type_) {
      case FFT:
      case IFFT: {
        const auto* from = static_cast<const Complex*>(in);
        auto* to = static_cast<Complex*>(out);
        InnermostPass(
            Product(complex_dims_) / n, Batched(rank - 1), for_each,
            [&](const auto& batched, int64_t r, int lines, float* work) {
              batched.Run(from + r * n, n, 1, to + r * n, n, 1, lines, work);
            },
            [&](int64_t r, Complex* work) {
              plans_.back().Run(from + r * n, 1, to + r * n, work);
            });
        for (int64_t a = rank - 2; a >= 0; --a) AxisPass(to, to, a, for_each);
        if (type_ == IFFT) Scale(to, Product(complex_dims_), for_each);
        break;
      }
      case RFFT: {
        const T* from = static_cast<const T*>(in);
        auto* to = static_cast<Complex*>(out);
        const int64_t half = complex_dims_.back();
        InnermostPass(
            Product(lengths_) / n, RealBatched(), for_each,
            [&](const auto& batched, int64_t r, int lines, float* work) {
              batched.RunRealForward(from + r * n, n, to + r * half, half, lines, work);
            },
            [&](int64_t r, Complex* work) {
              real_plan_->Forward(from + r * n, to + r * half, work);
            });
        for (int64_t a = rank - 2; a >= 0; --a) AxisPass(to, to, a, for_each);
        break;
      }
      case IRFFT: {
        const Complex* from = static_cast<const Complex*>(in);
        T* to = static_cast<T*>(out);
        if (rank > 1) {
          AxisPass(from, copy, 0, for_each);
          for (int64_t a = 1; a < rank - 1; ++a) AxisPass(copy, copy, a, for_each);
          from = copy;
        }
        const int64_t half = complex_dims_.back();
        InnermostPass(
            Product(lengths_) / n, RealBatched(), for_each,
            [&](const auto& batched, int64_t r, int lines, float* work) {
              // Scaled by 1 / N on the way (no Scale pass after).
              batched.RunRealInverse(from + r * half, half, to + r * n, n, lines, scale_, work);
            },
            [&](int64_t r, Complex* work) {
              real_plan_->Inverse(from + r * half, to + r * n, work);
            });
        if (RealBatched() == nullptr) Scale(to, Product(lengths_), for_each);
        break;
      }
    }
  }

 private:
  // Transforms lines [0, count) of the innermost axis over for_each: in
  // groups of up to kLanes, group(*batched, first line, lines, work floats),
  // where `batched` is set (f32 only), else one at a time, line(line, plan
  // work memory). `group` takes `auto` so that it is instantiated for f32
  // only.
  template <typename Group, typename Line>
  void InnermostPass(int64_t count, const LineBatchFft* batched, ForEachUnit for_each, Group group,
                     Line line) const {
    for_each(count, [&](Complex* slot, int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<T, float>) {
        if (batched != nullptr) {
          for (int64_t r = begin; r < end; r += kLanes) {
            group(*batched, r, static_cast<int>(std::min<int64_t>(kLanes, end - r)), Floats(slot));
          }
          return;
        }
      }
      for (int64_t r = begin; r < end; ++r) line(r, slot + work_offset_);
    });
  }

  // Transforms every line along `axis` of the complex layout of `from` into
  // the same place of `to` (which may be `from`). Unit u is the line at
  // outer index u / stride, inner index u % stride: neighbouring units read
  // neighbouring columns.
  void AxisPass(const Complex* from, Complex* to, int64_t axis, ForEachUnit for_each) const {
    int64_t stride = 1;
    for (size_t d = axis + 1; d < complex_dims_.size(); ++d) stride *= complex_dims_[d];
    const int64_t length = complex_dims_[axis];
    const ComplexFftPlan<T>& plan = plans_[axis];
    for_each(Product(complex_dims_) / length, [&](Complex* slot, int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<T, float>) {
        if (const LineBatchFft* batched = Batched(axis)) {
          // Up to 16 lines at a time: neighbouring columns of one outer
          // index (whole vectors), or whole rows when the axis is innermost.
          for (int64_t u = begin; u < end;) {
            const int64_t base = u / stride * length * stride + u % stride;
            const int64_t lines = stride == 1 ? std::min(kLanes, end - u)
                                              : std::min({kLanes, end - u, stride - u % stride});
            const int64_t apart = stride == 1 ? length : 1;
            batched->Run(from + base, apart, stride, to + base, apart, stride,
                         static_cast<int>(lines), Floats(slot));
            u += lines;
          }
          return;
        }
      }
      Complex* line = slot;
      for (int64_t u = begin; u < end; ++u) {
        const int64_t base = u / stride * length * stride + u % stride;
        plan.Run(from + base, stride, line, slot + work_offset_);
        for (int64_t j = 0; j < length; ++j) to[base + j * stride] = line[j];
      }
    });
  }

  static constexpr int64_t kLanes = LineBatchFft::kLanes;
  // The batched plan of axis `axis` (f32 power-of-two lengths), or null.
  const LineBatchFft* Batched(int64_t axis) const {
    return axis < static_cast<int64_t>(batched_.size()) ? batched_[axis].get() : nullptr;
  }
  const LineBatchFft* RealBatched() const { return real_batched_.get(); }
  static float* Floats(Complex* slot) { return reinterpret_cast<float*>(slot); }

  template <typename E>
  void Scale(E* data, int64_t count, ForEachUnit for_each) const {
    for_each(count, [&](Complex*, int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) data[i] *= scale_;
    });
  }

  FftType type_;
  std::vector<int64_t> lengths_;
  // The transform's complex extents: lengths_, the innermost n/2 + 1 for
  // RFFT and IRFFT.
  std::vector<int64_t> complex_dims_;
  // Per axis of complex_dims_ (all but the innermost for RFFT and IRFFT).
  std::vector<ComplexFftPlan<T>> plans_;
  std::unique_ptr<RealFftPlan<T>> real_plan_;
  // f32 only: the batched plans of plans_ (null where unsupported) and of
  // the real lines' half-length transform.
  std::vector<std::unique_ptr<LineBatchFft>> batched_;
  std::unique_ptr<LineBatchFft> real_batched_;
  // A slot holds the line buffer at 0 and the plans' work memory at
  // work_offset_.
  int64_t work_offset_ = 0, slot_elements_ = 0, copy_elements_ = 0;
  T scale_ = 1;
  int64_t log_sum_ = 0;
};

template <typename T>
class FftThunk : public Thunk {
 public:
  using Complex = std::complex<T>;

  FftThunk(std::string name, FftTransform<T> transform, int64_t batch, int64_t operand_value,
           int64_t result_value)
      : Thunk(std::move(name)),
        transform_(std::move(transform)),
        batch_(batch),
        slots_(std::max(1, ThreadPool::DefaultNumThreads())),
        copies_(transform_.copy_elements() > 0 ? std::clamp<int64_t>(batch, 1, slots_) : 0),
        slot_bytes_(RoundUpToAlignment(transform_.slot_elements() * sizeof(Complex))),
        copy_bytes_(RoundUpToAlignment(transform_.copy_elements() * sizeof(Complex))),
        operand_value_(operand_value),
        result_value_(result_value) {}

  absl::Status Execute(const ThunkContext& context) const override {
    const auto* in = static_cast<const char*>(context.address(operand_value_));
    auto* out = static_cast<char*>(context.address(result_value_));
    // The slots and copies live in the executable's arena, or here when
    // the caller gave no scratch memory.
    std::vector<char> own;
    char* scratch = context.scratch;
    if (scratch == nullptr || context.scratch_bytes < scratch_bytes()) {
      own.resize(scratch_bytes() + kBufferAlignment);
      scratch = AlignUp(own.data());
    }
    auto slot = [&](int64_t s) { return reinterpret_cast<Complex*>(scratch + s * slot_bytes_); };
    auto copy = [&](int64_t c) {
      return reinterpret_cast<Complex*>(scratch + slots_ * slot_bytes_ + c * copy_bytes_);
    };
    const int64_t in_bytes = transform_.operand_bytes();
    const int64_t out_bytes = transform_.result_bytes();
    // Batch elements [begin, end), every pass on slot `s` and copy `c`.
    auto run = [&](int64_t s, int64_t c, int64_t begin, int64_t end) {
      auto on_slot = [&](int64_t units, typename FftTransform<T>::Pass pass) {
        pass(slot(s), 0, units);
      };
      for (int64_t b = begin; b < end; ++b) {
        transform_.Run(in + b * in_bytes, out + b * out_bytes, copy(c), on_slot);
      }
    };
    const bool parallel = context.thread_pool != nullptr && slots_ > 1 &&
                          context.max_threads != 1 &&
                          batch_ * transform_.work() >= kMinParallelWork;
    if (!parallel) {
      run(0, 0, 0, batch_);
      return absl::OkStatus();
    }
    // Range s of slots_ (contiguous) runs on slot s: whichever thread runs
    // it, no other uses that slot meanwhile.
    auto split = [&](int64_t count,
                     absl::FunctionRef<void(int64_t s, int64_t begin, int64_t end)> fn) {
      context.thread_pool->ParallelFor(
          slots_, 1,
          [&](int64_t first, int64_t last) {
            for (int64_t s = first; s < last; ++s) {
              fn(s, s * count / slots_, (s + 1) * count / slots_);
            }
          },
          context.max_threads);
    };
    if (batch_ >= slots_) {
      split(batch_, [&](int64_t s, int64_t begin, int64_t end) { run(s, s, begin, end); });
      return absl::OkStatus();
    }
    // Fewer elements than threads: each pass of each element is split.
    auto across_slots = [&](int64_t units, typename FftTransform<T>::Pass pass) {
      split(units, [&](int64_t s, int64_t begin, int64_t end) {
        if (begin < end) pass(slot(s), begin, end);
      });
    };
    for (int64_t b = 0; b < batch_; ++b) {
      transform_.Run(in + b * in_bytes, out + b * out_bytes, copy(0), across_slots);
    }
    return absl::OkStatus();
  }

  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{{operand_value_}, {result_value_}};
  }
  int64_t scratch_bytes() const override { return slots_ * slot_bytes_ + copies_ * copy_bytes_; }

  absl::Status Serialize(ThunkWriter& writer) const override {
    writer.Begin(ThunkTag::kFft, *this);
    writer.Bool(std::is_same_v<T, double>);
    writer.Int(static_cast<int64_t>(transform_.type()));
    writer.Ints(transform_.lengths());
    writer.Int(batch_);
    writer.Int(operand_value_);
    writer.Int(result_value_);
    return absl::OkStatus();
  }

  // Below this much work() in all the batch runs on the calling thread.
  static constexpr int64_t kMinParallelWork = int64_t{1} << 16;

 private:
  FftTransform<T> transform_;
  int64_t batch_;
  // Thread slots (line buffer and plan work memory each): the pool's
  // threads. IRFFT copies: one per slot that takes batch elements, at
  // most the batch.
  int64_t slots_;
  int64_t copies_;
  int64_t slot_bytes_;
  int64_t copy_bytes_;
  int64_t operand_value_;
  int64_t result_value_;
};

}  // namespace

std::unique_ptr<Thunk> MakeFftThunk(std::string name, bool f64, FftType type,
                                    std::vector<int64_t> lengths, int64_t batch,
                                    int64_t operand_value, int64_t result_value) {
  if (f64) {
    return std::make_unique<FftThunk<double>>(std::move(name),
                                              FftTransform<double>(type, std::move(lengths)), batch,
                                              operand_value, result_value);
  }
  return std::make_unique<FftThunk<float>>(std::move(name),
                                           FftTransform<float>(type, std::move(lengths)), batch,
                                           operand_value, result_value);
}

std::unique_ptr<Thunk> LoadFftThunk(std::string name, ThunkReader& reader) {
  const bool f64 = reader.Bool();
  const int64_t type = reader.Int();
  std::vector<int64_t> lengths = reader.Ints();
  const int64_t batch = reader.Int();
  const int64_t operand_value = reader.Value();
  const int64_t result_value = reader.Value();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("fft %", name, ": ", why));
    return nullptr;
  };
  if (type != FFT && type != IFFT && type != RFFT && type != IRFFT) {
    return fail(absl::StrCat("fft type ", type));
  }
  if (lengths.empty() || lengths.size() > 3) return fail("not 1 to 3 lengths");
  // The lengths EmitFftThunk admits, and the elements of one batch
  // element and of the batch: at most 2^28 per axis, 2^50 in all.
  int64_t elements = 1;
  for (int64_t length : lengths) {
    if (length < 1 || length > (int64_t{1} << 28)) {
      return fail(absl::StrCat("a length of ", length));
    }
    if (elements > (int64_t{1} << 50) / length) return fail("lengths too large");
    elements *= length;
  }
  if (batch < 0 || (batch > 0 && batch > (int64_t{1} << 50) / elements)) {
    return fail(absl::StrCat("a batch of ", batch));
  }
  // Bytes of one batch element: complex, but RFFT's operand and IRFFT's
  // result real, and the complex side of those n/2 + 1 long innermost.
  const int64_t real_bytes = f64 ? 8 : 4;
  const int64_t complex_bytes = 2 * real_bytes;
  const int64_t half = elements / lengths.back() * (lengths.back() / 2 + 1);
  const int64_t in_bytes = type == RFFT    ? elements * real_bytes
                           : type == IRFFT ? half * complex_bytes
                                           : elements * complex_bytes;
  const int64_t out_bytes = type == RFFT    ? half * complex_bytes
                            : type == IRFFT ? elements * real_bytes
                                            : elements * complex_bytes;
  if (!reader.ValueHas(operand_value, batch * in_bytes) ||
      !reader.ValueHas(result_value, batch * out_bytes)) {
    return fail("values whose sizes do not match its lengths and batch");
  }
  return MakeFftThunk(std::move(name), f64, static_cast<FftType>(type), std::move(lengths), batch,
                      operand_value, result_value);
}

}  // namespace axle::cpu
