//===- tfidf_ops.cc - ONNX TfIdfVectorizer over integer input ---------------===//
//
// TfIdfVectorizer with pool_int64s: for each n-gram length n in
// [min_gram_length, max_gram_length] and skip s (0 for unigrams, else
// 0..max_skip_count), the n-grams of every row (items s + 1 apart) compare
// with the pool's n-grams of length n in one broadcast Eq; matches summed
// over positions and skips are the counts, and a constant one-hot matrix
// moves each pool n-gram's count to its ngram_indexes slot. TF, IDF and
// TFIDF weight the counts. String pools are not supported.
//
//===----------------------------------------------------------------------===//
#include "absl/strings/str_join.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

class TfIdfVectorizerOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if ((x.rank() != 1 && x.rank() != 2) || !primitive_util::IsIntegralType(x.element_type())) {
      return ctx->Unimplemented("input ", x.ToString(false),
                                " is not supported (1-D or 2-D integers are)");
    }
    if (ctx->HasAttr("pool_strings")) {
      return ctx->Unimplemented("attribute 'pool_strings' is not supported (pool_int64s is)");
    }
    absl::StatusOr<std::string> mode = ctx->GetAttrString("mode", "");
    absl::StatusOr<int64_t> min_n = ctx->GetAttrInt("min_gram_length");
    absl::StatusOr<int64_t> max_n = ctx->GetAttrInt("max_gram_length");
    absl::StatusOr<int64_t> max_skip = ctx->GetAttrInt("max_skip_count");
    absl::StatusOr<std::vector<int64_t>> counts = ctx->GetAttrInts("ngram_counts");
    absl::StatusOr<std::vector<int64_t>> indexes = ctx->GetAttrInts("ngram_indexes");
    absl::StatusOr<std::vector<int64_t>> pool = ctx->GetAttrInts("pool_int64s");
    for (const absl::Status& s : {mode.status(), min_n.status(), max_n.status(), max_skip.status(),
                                  counts.status(), indexes.status(), pool.status()}) {
      if (!s.ok()) return s;
    }
    if (*mode != "TF" && *mode != "IDF" && *mode != "TFIDF") {
      return ctx->Unimplemented("attribute 'mode' = '", *mode, "' is not supported");
    }
    std::vector<float> weights;
    if (ctx->HasAttr("weights")) {
      absl::StatusOr<std::vector<float>> w = ctx->GetAttrFloats("weights");
      if (!w.ok()) return w.status();
      weights = *w;
    }
    // The pool's n-grams by length: (length, first item, count).
    int64_t levels = static_cast<int64_t>(counts->size());
    int64_t pool_size = static_cast<int64_t>(pool->size());
    struct Level {
      int64_t n, start, grams, first_gram;
    };
    std::vector<Level> table;
    int64_t total = 0;
    for (int64_t i = 0; i < levels; ++i) {
      int64_t start = (*counts)[i];
      int64_t end = i + 1 < levels ? (*counts)[i + 1] : pool_size;
      if (start < 0 || end < start || end > pool_size || (end - start) % (i + 1) != 0) {
        return ctx->Error("ngram_counts [", absl::StrJoin(*counts, ","),
                          "] do not split a pool of ", pool_size, " items");
      }
      table.push_back({i + 1, start, (end - start) / (i + 1), total});
      total += (end - start) / (i + 1);
    }
    if (static_cast<int64_t>(indexes->size()) != total ||
        (!weights.empty() && static_cast<int64_t>(weights.size()) != total)) {
      return ctx->Error("ngram_indexes and weights must hold one entry per pool n-gram (", total,
                        ")");
    }
    int64_t out_size = 0;
    for (int64_t i : *indexes) {
      if (i < 0) return ctx->Error("ngram_indexes has the negative entry ", i);
      out_size = std::max(out_size, i + 1);
    }
    XlaBuilder* b = ctx->builder();
    int64_t rows = x.rank() == 2 ? x.dimensions(0) : 1, cols = x.dimensions(x.rank() - 1);
    XlaOp in = Reshape(ConvertElementType(ctx->Input(0), S64), {rows, cols});
    // counts [rows, total] (F32), one column block per level.
    std::vector<XlaOp> blocks;
    for (const Level& level : table) {
      XlaOp count = Broadcast(ConstantR0<float>(b, 0), {rows, level.grams});
      if (level.grams > 0 && level.n >= *min_n && level.n <= *max_n) {
        std::vector<int64_t> grams(pool->begin() + level.start,
                                   pool->begin() + level.start + level.grams * level.n);
        XlaOp p = ConstantFromArray<int64_t>(b, {level.grams, level.n}, grams);
        int64_t skips = level.n == 1 ? 0 : *max_skip;
        for (int64_t s = 0; s <= skips; ++s) {
          int64_t len = cols - (level.n - 1) * (s + 1);
          if (len <= 0) break;
          std::vector<XlaOp> items;
          for (int64_t j = 0; j < level.n; ++j) {
            XlaOp item = SliceInDim(in, j * (s + 1), j * (s + 1) + len, 1, 1);
            items.push_back(Reshape(item, {rows, len, 1}));
          }
          std::vector<int64_t> eq_dims = {rows, len, level.grams, level.n};
          XlaOp windows = BroadcastInDim(ConcatInDim(b, items, 2), eq_dims, {0, 1, 3});
          XlaOp eq = Eq(windows, BroadcastInDim(p, eq_dims, {2, 3}));
          XlaOp match =
              Reduce(eq, ConstantR0<bool>(b, true), ReducerComputation(Reducer::kMul, PRED), {3});
          count = Add(count, Reduce(ConvertElementType(match, F32), ConstantR0<float>(b, 0),
                                    ReducerComputation(Reducer::kAdd, F32), {1}));
        }
      }
      blocks.push_back(count);
    }
    XlaOp all = ConcatInDim(b, blocks, 1);
    if (*mode == "IDF") {
      all = ConvertElementType(Gt(all, Broadcast(ConstantR0<float>(b, 0), {rows, total})), F32);
    }
    if (*mode != "TF" && !weights.empty()) {
      all = Mul(all, BroadcastInDim(ConstantR1<float>(b, weights), {rows, total}, {1}));
    }
    std::vector<float> onehot(total * out_size, 0);
    for (int64_t k = 0; k < total; ++k) onehot[k * out_size + (*indexes)[k]] = 1;
    XlaOp out = Dot(all, ConstantFromArray<float>(b, {total, out_size}, onehot));
    ctx->SetOutput(0, x.rank() == 2 ? out : Reshape(out, {out_size}));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("TfIdfVectorizer").SinceVersion(9), TfIdfVectorizerOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(tfidf)

}  // namespace axle::onnx
