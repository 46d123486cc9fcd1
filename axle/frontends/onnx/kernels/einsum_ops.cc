//===- einsum_ops.cc - ONNX Einsum ------------------------------------------===//
//
// Einsum lowered to HLO: each operand's repeated labels become a diagonal
// (a mask and a sum), labels no one else needs are summed away, operands
// combine left to right through one DotGeneral each (shared labels still
// needed are batch dimensions, the others contract), and the result is
// summed and transposed to the output's labels. The ellipsis stands for
// the leading dimensions, aligned right across operands.
//
//===----------------------------------------------------------------------===//
#include <map>

#include "absl/strings/str_split.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// An operand during lowering: its op and one label per dimension. Labels
// are letters; the ellipsis' dimensions get labels from '0' upwards
// (counted from the right).
struct Term {
  XlaOp op;
  std::string labels;
  std::vector<int64_t> dims;
};

// The labels of one side of the equation, with "..." expanded to
// `ellipsis` labels; an error for a bad character.
absl::StatusOr<std::string> ParseTerm(const XlaOpKernelContext& ctx, std::string term,
                                      int64_t ellipsis_rank) {
  std::string out;
  term.erase(std::remove(term.begin(), term.end(), ' '), term.end());
  size_t dots = term.find("...");
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int64_t k = ellipsis_rank - 1; k >= 0; --k) out.push_back(static_cast<char>('0' + k));
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(term[i]))) {
      return ctx.Error("equation term '", term, "' has the invalid character '",
                       std::string(1, term[i]), "'");
    }
    out.push_back(term[i]);
  }
  return out;
}

// Sums `t` over the dimensions whose labels `drop` accepts.
template <typename Pred>
void SumOut(Term& t, PrimitiveType type, Pred drop) {
  std::vector<int64_t> axes;
  std::string labels;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < t.labels.size(); ++d) {
    if (drop(t.labels[d])) {
      axes.push_back(static_cast<int64_t>(d));
    } else {
      labels.push_back(t.labels[d]);
      dims.push_back(t.dims[d]);
    }
  }
  if (axes.empty()) return;
  XlaBuilder* b = t.op.builder();
  t.op = Reduce(t.op, Zero(b, type), ReducerComputation(Reducer::kAdd, type), axes);
  t.labels = labels;
  t.dims = dims;
}

// Replaces each label repeated within `t` by the diagonal over its copies.
absl::Status TakeDiagonals(const XlaOpKernelContext& ctx, Term& t, PrimitiveType type) {
  XlaBuilder* b = t.op.builder();
  for (size_t d = 0; d < t.labels.size(); ++d) {
    size_t e = t.labels.find(t.labels[d], d + 1);
    while (e != std::string::npos) {
      if (t.dims[d] != t.dims[e]) {
        return ctx.Error("label '", std::string(1, t.labels[d]), "' has sizes ", t.dims[d], " and ",
                         t.dims[e]);
      }
      Shape s64 = ShapeUtil::MakeShape(S64, t.dims);
      XlaOp on = Eq(Iota(b, s64, static_cast<int64_t>(d)), Iota(b, s64, static_cast<int64_t>(e)));
      XlaOp masked = Select(on, t.op, Broadcast(Zero(b, type), t.dims));
      t.op = Reduce(masked, Zero(b, type), ReducerComputation(Reducer::kAdd, type),
                    {static_cast<int64_t>(e)});
      t.labels.erase(e, 1);
      t.dims.erase(t.dims.begin() + static_cast<int64_t>(e));
      e = t.labels.find(t.labels[d], d + 1);
    }
  }
  return absl::OkStatus();
}

class EinsumOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::string> equation = ctx->GetAttrString("equation", "");
    if (!equation.ok()) return equation.status();
    std::string lhs = *equation, rhs;
    bool explicit_output = false;
    if (size_t arrow = equation->find("->"); arrow != std::string::npos) {
      lhs = equation->substr(0, arrow);
      rhs = equation->substr(arrow + 2);
      explicit_output = true;
    }
    std::vector<std::string> sides = absl::StrSplit(lhs, ',');
    if (static_cast<int>(sides.size()) != ctx->num_inputs()) {
      return ctx->Error("equation '", *equation, "' has ", sides.size(), " operands, the node ",
                        ctx->num_inputs());
    }
    PrimitiveType type = ctx->InputType(0);
    std::vector<Term> terms;
    int64_t ellipsis_rank = 0;
    std::map<char, int64_t> sizes, counts;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Shape& s = ctx->InputShape(i);
      if (s.element_type() != type) return ctx->Error("operands have different element types");
      std::string side = sides[i];
      side.erase(std::remove(side.begin(), side.end(), ' '), side.end());
      int64_t named = static_cast<int64_t>(side.size());
      int64_t ell = 0;
      if (side.find("...") != std::string::npos) {
        named -= 3;
        ell = s.rank() - named;
      }
      if (ell < 0 || named + ell != s.rank()) {
        return ctx->Error("operand ", i, " ", s.ToString(false), " does not match term '", side,
                          "'");
      }
      ellipsis_rank = std::max(ellipsis_rank, ell);
      absl::StatusOr<std::string> labels = ParseTerm(*ctx, side, ell);
      if (!labels.ok()) return labels.status();
      Term t{ctx->Input(i), *labels, s.dimensions()};
      for (size_t d = 0; d < t.labels.size(); ++d) {
        char l = t.labels[d];
        auto [it, inserted] = sizes.emplace(l, t.dims[d]);
        if (!inserted && it->second != t.dims[d]) {
          return ctx->Error("label '", std::string(1, l), "' has sizes ", it->second, " and ",
                            t.dims[d], " (broadcasting is not supported)");
        }
        ++counts[l];
      }
      if (absl::Status st = TakeDiagonals(*ctx, t, type); !st.ok()) return st;
      terms.push_back(std::move(t));
    }
    std::string out;
    if (explicit_output) {
      absl::StatusOr<std::string> labels = ParseTerm(*ctx, rhs, ellipsis_rank);
      if (!labels.ok()) return labels.status();
      out = *labels;
      for (char l : out) {
        if (!sizes.count(l)) return ctx->Error("output label '", std::string(1, l), "' is unused");
      }
    } else {
      for (int64_t k = ellipsis_rank - 1; k >= 0; --k) out.push_back(static_cast<char>('0' + k));
      for (const auto& [l, n] : counts) {
        if (n == 1 && std::isalpha(static_cast<unsigned char>(l))) out.push_back(l);
      }
    }
    // Labels needed later: in the output or in an operand not yet combined.
    auto needed = [&](char l, size_t after) {
      if (out.find(l) != std::string::npos) return true;
      for (size_t j = after; j < terms.size(); ++j) {
        if (terms[j].labels.find(l) != std::string::npos) return true;
      }
      return false;
    };
    Term acc = terms[0];
    SumOut(acc, type, [&](char l) { return !needed(l, 1); });
    for (size_t j = 1; j < terms.size(); ++j) {
      Term& rhs_term = terms[j];
      SumOut(rhs_term, type,
             [&](char l) { return !needed(l, j + 1) && acc.labels.find(l) == std::string::npos; });
      DotDimensionNumbers dn;
      std::string batch, lhs_free, rhs_free;
      std::vector<int64_t> dims, lhs_free_dims, rhs_free_dims;
      for (size_t d = 0; d < acc.labels.size(); ++d) {
        char l = acc.labels[d];
        size_t r = rhs_term.labels.find(l);
        if (r == std::string::npos) {
          lhs_free.push_back(l);
          lhs_free_dims.push_back(acc.dims[d]);
        } else if (needed(l, j + 1)) {
          dn.add_lhs_batch_dimensions(static_cast<int64_t>(d));
          dn.add_rhs_batch_dimensions(static_cast<int64_t>(r));
          batch.push_back(l);
          dims.push_back(acc.dims[d]);
        } else {
          dn.add_lhs_contracting_dimensions(static_cast<int64_t>(d));
          dn.add_rhs_contracting_dimensions(static_cast<int64_t>(r));
        }
      }
      for (size_t d = 0; d < rhs_term.labels.size(); ++d) {
        if (acc.labels.find(rhs_term.labels[d]) == std::string::npos) {
          rhs_free.push_back(rhs_term.labels[d]);
          rhs_free_dims.push_back(rhs_term.dims[d]);
        }
      }
      acc.op = DotGeneral(acc.op, rhs_term.op, dn);
      acc.labels = absl::StrCat(batch, lhs_free, rhs_free);
      dims.insert(dims.end(), lhs_free_dims.begin(), lhs_free_dims.end());
      dims.insert(dims.end(), rhs_free_dims.begin(), rhs_free_dims.end());
      acc.dims = dims;
    }
    SumOut(acc, type, [&](char l) { return out.find(l) == std::string::npos; });
    std::vector<int64_t> perm;
    for (char l : out) {
      size_t d = acc.labels.find(l);
      if (d == std::string::npos || out.find(l) != out.rfind(l)) {
        return ctx->Error("output label '", std::string(1, l), "' is missing or repeated");
      }
      perm.push_back(static_cast<int64_t>(d));
    }
    ctx->SetOutput(0, Transpose(acc.op, perm));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Einsum").SinceVersion(12), EinsumOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(einsum)

}  // namespace axle::onnx
