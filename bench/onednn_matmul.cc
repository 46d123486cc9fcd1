//===- onednn_matmul.cc - oneDNN's own matmul primitive, the dot peer -------===//
//
//   onednn-matmul f32|bf16 [N=1024 | MxKxN] [REPETITIONS=30] [EPILOGUE=none]
//                 [WEIGHTS=packed]
//
// C = A x B with N x N (or [M, K] x [K, N]) row-major operands through
// oneDNN's matmul primitive, the weights (B) reordered once into the
// primitive's preferred layout, as a library user at their best would call
// it. bf16 operands give a bf16 result, like the bf16 HLO module. EPILOGUE
// (f32): bias (one value per column, the primitive's bias argument),
// bias_postop (the same as a binary add post-op), bias_gelu (the bias
// argument and an eltwise_gelu_tanh post-op): the ways a dot + bias (+ GELU)
// fusion can run (dot_thunk.cc). WEIGHTS plain: B stays row-major, read
// in place on every call, as a dot whose rhs is no constant (a parameter's
// weights) gets it. Threads: oneDNN's OpenMP runtime
// (OMP_NUM_THREADS). Prints
//   ok min_ms=.. median_ms=.. best_gflops=..
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl.hpp"

namespace {

int Run(int argc, char** argv) {
  std::string type = argc > 1 ? argv[1] : "f32";
  dnnl::memory::dim m = 1024, k = 1024, n = 1024;
  if (argc > 2) {
    long a = 0, b = 0, c = 0;
    if (std::sscanf(argv[2], "%ldx%ldx%ld", &a, &b, &c) == 3) {
      m = a, k = b, n = c;
    } else {
      m = k = n = std::atol(argv[2]);
    }
  }
  int repetitions = argc > 3 ? std::atoi(argv[3]) : 30;
  std::string epilogue = argc > 4 ? argv[4] : "none";
  const bool bias = epilogue != "none";
  const std::string weights = argc > 5 ? argv[5] : "packed";
  if ((type != "f32" && type != "bf16") || m < 1 || k < 1 || n < 1 || repetitions < 1 ||
      (epilogue != "none" && epilogue != "bias" && epilogue != "bias_postop" &&
       epilogue != "bias_gelu") ||
      (bias && type != "f32") || (weights != "packed" && weights != "plain")) {
    std::fprintf(stderr,
                 "usage: onednn-matmul f32|bf16 [N|MxKxN] [REPETITIONS] "
                 "[none|bias|bias_postop|bias_gelu (f32)] [packed|plain]\n");
    return 1;
  }
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dt data_type = type == "f32" ? dt::f32 : dt::bf16;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);

  dnnl::memory::desc a_md({m, k}, data_type, tag::ab);
  dnnl::memory::desc b_plain_md({k, n}, data_type, tag::ab);
  dnnl::memory::desc b_any_md({k, n}, data_type, weights == "plain" ? tag::ab : tag::any);
  dnnl::memory::desc c_md({m, n}, data_type, tag::ab);
  dnnl::memory::desc bias_md({1, n}, dt::f32, tag::ab);
  dnnl::post_ops post_ops;
  if (epilogue == "bias_postop") post_ops.append_binary(dnnl::algorithm::binary_add, bias_md);
  if (epilogue == "bias_gelu") {
    post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  dnnl::matmul::primitive_desc pd(epilogue == "bias" || epilogue == "bias_gelu"
                                      ? dnnl::matmul::desc(a_md, b_any_md, bias_md, c_md)
                                      : dnnl::matmul::desc(a_md, b_any_md, c_md),
                                  attr, engine);

  // Operands: small values (exact in bf16), filled through f32 and reordered.
  std::vector<float> host(std::max(m, n) * k);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 7) - 3.0f;
  dnnl::memory a_host({{m, k}, dt::f32, tag::ab}, engine, host.data());
  dnnl::memory b_host({{k, n}, dt::f32, tag::ab}, engine, host.data());
  dnnl::memory a(a_md, engine), b_plain(b_plain_md, engine), c(c_md, engine);
  dnnl::memory bias_values(bias_md, engine, host.data());
  dnnl::reorder(a_host, a).execute(stream, a_host, a);
  dnnl::reorder(b_host, b_plain).execute(stream, b_host, b_plain);
  dnnl::memory b(pd.weights_desc(), engine);
  dnnl::reorder(b_plain, b).execute(stream, b_plain, b);
  stream.wait();

  dnnl::matmul matmul(pd);
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
  if (epilogue == "bias" || epilogue == "bias_gelu") args[DNNL_ARG_BIAS] = bias_values;
  if (epilogue == "bias_postop") {
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = bias_values;
  }
  matmul.execute(stream, args);  // warm-up
  stream.wait();
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    matmul.execute(stream, args);
    stream.wait();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  double flops = 2.0 * m * k * n;
  std::printf("ok min_ms=%.3f median_ms=%.3f best_gflops=%.1f\n", times.front(),
              times[times.size() / 2], flops / times.front() / 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onednn-matmul: %s\n", e.what());
    return 1;
  }
}
