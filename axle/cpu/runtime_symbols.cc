//===- runtime_symbols.cc - C helpers that JIT-compiled code calls ---------===//
//
// The complex math helpers use std::complex with the interpreter's special
// cases, so that generated code computes exactly as the reference
// interpreter does.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime_symbols.h"

#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"

namespace axle::cpu {
namespace {

// Complex math exactly as axle/eval computes it.
#define AXLE_COMPLEX_UNARY(Name, expression) \
  struct Name {                              \
    template <typename C>                    \
    C operator()(C v) const {                \
      return expression;                     \
    }                                        \
  };
AXLE_COMPLEX_UNARY(Sqrt, std::sqrt(v))
AXLE_COMPLEX_UNARY(Rsqrt, C(1) / std::sqrt(v))
AXLE_COMPLEX_UNARY(Sin, std::sin(v))
AXLE_COMPLEX_UNARY(Cos, std::cos(v))
AXLE_COMPLEX_UNARY(Tan, std::tan(v))
AXLE_COMPLEX_UNARY(Tanh, std::tanh(v))
AXLE_COMPLEX_UNARY(Sinh, std::sinh(v))
AXLE_COMPLEX_UNARY(Cosh, std::cosh(v))
AXLE_COMPLEX_UNARY(Asin, std::asin(v))
AXLE_COMPLEX_UNARY(Acos, std::acos(v))
AXLE_COMPLEX_UNARY(Atan, std::atan(v))
AXLE_COMPLEX_UNARY(Asinh, std::asinh(v))
AXLE_COMPLEX_UNARY(Acosh, std::acosh(v))
AXLE_COMPLEX_UNARY(Atanh, std::atanh(v))
AXLE_COMPLEX_UNARY(Expm1, std::exp(v) - C(1))
AXLE_COMPLEX_UNARY(Log1p, std::log(C(1) + v))
AXLE_COMPLEX_UNARY(Logistic, C(1) / (C(1) + std::exp(-v)))
#undef AXLE_COMPLEX_UNARY

template <typename T, typename Op>
void ComplexUnary(const T* z, T* out) {
  const std::complex<T> r = Op()(std::complex<T>(z[0], z[1]));
  out[0] = r.real();
  out[1] = r.imag();
}

// Power, with the interpreter's special cases of 1, 0 and +inf.
struct Power {
  template <typename C>
  C operator()(C x, C y) const {
    if (x == C(1) || y == C(0)) return C(1);
    const bool x_is_positive_infinity = x.imag() == 0 && x.real() > 0 && std::isinf(x.real());
    if (x_is_positive_infinity && y.imag() == 0 && y.real() > 0) return x;
    if (x_is_positive_infinity && y.imag() == 0 && y.real() < 0) return C(0);
    return std::pow(x, y);
  }
};

// atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), as XLA defines it.
struct Atan2 {
  template <typename C>
  C operator()(C y, C x) const {
    const C i(0, 1);
    return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
  }
};

template <typename T, typename Op>
void ComplexBinary(const T* a, const T* b, T* out) {
  const std::complex<T> r = Op()(std::complex<T>(a[0], a[1]), std::complex<T>(b[0], b[1]));
  out[0] = r.real();
  out[1] = r.imag();
}

}  // namespace

std::string ComplexMathName(absl::string_view op, PrimitiveType type) {
  return absl::StrCat("axle_cpu_", op, "_", primitive_util::LowercasePrimitiveTypeName(type));
}

const std::vector<RuntimeSymbol>& RuntimeSymbols() {
  static const auto* symbols = [] {
    auto* list = new std::vector<RuntimeSymbol>();
    // `op`'s c64 and c128 helpers.
    auto add_pair = [&](const char* op, void* c64, void* c128) {
      list->push_back({ComplexMathName(op, C64), c64});
      list->push_back({ComplexMathName(op, C128), c128});
    };
    auto add_complex = [&]<typename Op>(const char* op) {
      add_pair(op, reinterpret_cast<void*>(&ComplexUnary<float, Op>),
               reinterpret_cast<void*>(&ComplexUnary<double, Op>));
    };
    add_complex.operator()<Sqrt>("sqrt");
    add_complex.operator()<Rsqrt>("rsqrt");
    add_complex.operator()<Sin>("sine");
    add_complex.operator()<Cos>("cosine");
    add_complex.operator()<Tan>("tan");
    add_complex.operator()<Tanh>("tanh");
    add_complex.operator()<Sinh>("sinh");
    add_complex.operator()<Cosh>("cosh");
    add_complex.operator()<Asin>("asin");
    add_complex.operator()<Acos>("acos");
    add_complex.operator()<Atan>("atan");
    add_complex.operator()<Asinh>("asinh");
    add_complex.operator()<Acosh>("acosh");
    add_complex.operator()<Atanh>("atanh");
    add_complex.operator()<Expm1>("exponential-minus-one");
    add_complex.operator()<Log1p>("log-plus-one");
    add_complex.operator()<Logistic>("logistic");
    auto add_binary = [&]<typename Op>(const char* op) {
      add_pair(op, reinterpret_cast<void*>(&ComplexBinary<float, Op>),
               reinterpret_cast<void*>(&ComplexBinary<double, Op>));
    };
    add_binary.operator()<Power>("power");
    add_binary.operator()<Atan2>("atan2");
    return list;
  }();
  return *symbols;
}

}  // namespace axle::cpu
