//===- onednn_matmul.cc - oneDNN's own matmul primitive, the dot peer -------===//
//
//   onednn-matmul f32|bf16 [N=1024] [REPETITIONS=30]
//
// C = A x B with N x N row-major operands through oneDNN's matmul primitive,
// the weights (B) reordered once into the primitive's preferred layout, as
// a library user at their best would call it. bf16 operands give a bf16
// result, like the bf16 HLO module. Threads: oneDNN's OpenMP runtime
// (OMP_NUM_THREADS). Prints
//   ok min_ms=.. median_ms=.. best_gflops=..
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl.hpp"

int main(int argc, char** argv) {
  std::string type = argc > 1 ? argv[1] : "f32";
  dnnl::memory::dim n = argc > 2 ? std::atol(argv[2]) : 1024;
  int repetitions = argc > 3 ? std::atoi(argv[3]) : 30;
  if ((type != "f32" && type != "bf16") || n < 1 || repetitions < 1) {
    std::fprintf(stderr, "usage: onednn-matmul f32|bf16 [N] [REPETITIONS]\n");
    return 1;
  }
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dt data_type = type == "f32" ? dt::f32 : dt::bf16;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);

  dnnl::memory::desc a_md({n, n}, data_type, tag::ab);
  dnnl::memory::desc b_plain_md({n, n}, data_type, tag::ab);
  dnnl::memory::desc b_any_md({n, n}, data_type, tag::any);
  dnnl::memory::desc c_md({n, n}, data_type, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any_md, c_md), engine);

  // Operands: small values (exact in bf16), filled through f32 and reordered.
  std::vector<float> host(n * n);
  for (dnnl::memory::dim i = 0; i < n * n; ++i) host[i] = static_cast<float>(i % 7) - 3.0f;
  dnnl::memory::desc host_md({n, n}, dt::f32, tag::ab);
  dnnl::memory host_mem(host_md, engine, host.data());
  dnnl::memory a(a_md, engine), b_plain(b_plain_md, engine), c(c_md, engine);
  dnnl::reorder(host_mem, a).execute(stream, host_mem, a);
  dnnl::reorder(host_mem, b_plain).execute(stream, host_mem, b_plain);
  dnnl::memory b(pd.weights_desc(), engine);
  dnnl::reorder(b_plain, b).execute(stream, b_plain, b);
  stream.wait();

  dnnl::matmul matmul(pd);
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
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
  double flops = 2.0 * n * n * n;
  std::printf("ok min_ms=%.3f median_ms=%.3f best_gflops=%.1f\n", times.front(),
              times[times.size() / 2], flops / times.front() / 1e6);
  return 0;
}
