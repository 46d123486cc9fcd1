//===- cuda_bandwidth.cc - Memory-bound kernels against the copy bandwidth -===//
//
//   cuda-bandwidth [MIB] [ITERATIONS]
//
// On the `cuda` platform (issue 16: "memory-bound fused kernels reach >= 80%
// of the device's copy bandwidth, measured in the same run"): the device's
// copy bandwidth (a device-to-device memcpy of MIB MiB, default 256; bytes
// read plus written per second), then memory-bound modules compiled by
// Axle's CUDA backend over the same bytes, each timed as the best of
// ITERATIONS runs (default 20) after a warm-up, with its bytes moved (each
// operand read once, each result written once) per second and its share of
// the copy's. Prints one line per row:
//
//   copy          GB/s=...  share=1.000
//   <module>      GB/s=...  share=...  ms=...
//
// Exit 1 naming CUDA when there is no cuda platform; 2 on a failed run.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"

namespace axle {
namespace {

struct Workload {
  std::string name;
  // HLO text with $N (elements of the flat f32 arrays), $R and $C (rows and
  // columns of the 2-d ones: R * C == N, C == 1024).
  std::string hlo;
  // Bytes moved per run, in units of N * 4.
  double arrays_moved;
};

// The scalar reducers the modules call.
constexpr char kAdd[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
})";
constexpr char kMax[] = R"(
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
})";

// The sum of f32[$R,$C] over `dimension`, an f32[`result`].
std::string Sum(absl::string_view module, absl::string_view result, int dimension) {
  return absl::StrCat("HloModule ", module, kAdd, R"(
ENTRY e {
  x = f32[$R,$C] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[)",
                      result, "] reduce(x, zero), dimensions={", dimension, "}, to_apply=add\n}");
}

std::vector<Workload> Workloads() {
  return {
      {"scale-add (y = 2x + 1)", R"(
HloModule scale_add
ENTRY e {
  x = f32[$N] parameter(0)
  two = f32[] constant(2)
  one = f32[] constant(1)
  b2 = f32[$N] broadcast(two), dimensions={}
  b1 = f32[$N] broadcast(one), dimensions={}
  m = f32[$N] multiply(x, b2)
  ROOT y = f32[$N] add(m, b1)
})",
       2},
      {"add3 (a + b + c)", R"(
HloModule add3
ENTRY e {
  a = f32[$N] parameter(0)
  b = f32[$N] parameter(1)
  c = f32[$N] parameter(2)
  ab = f32[$N] add(a, b)
  ROOT s = f32[$N] add(ab, c)
})",
       4},
      {"row sum (f32[R,1024] -> [R])", Sum("row_sum", "$R", 1), 1},
      {"column sum (f32[R,1024] -> [1024])", Sum("column_sum", "$C", 0), 1},
      {"softmax rows (f32[R,1024])", absl::StrCat("HloModule softmax", kMax, kAdd, R"(
ENTRY e {
  x = f32[$R,$C] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[$R] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[$R,$C] broadcast(m), dimensions={0}
  d = f32[$R,$C] subtract(x, mb)
  e = f32[$R,$C] exponential(d)
  s = f32[$R] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[$R,$C] broadcast(s), dimensions={0}
  ROOT y = f32[$R,$C] divide(e, sb)
})"),
       2},
      {"layer norm rows (f32[R,1024])", absl::StrCat("HloModule layer_norm", kAdd, R"(
ENTRY e {
  x = f32[$R,$C] parameter(0)
  g = f32[$C] parameter(1)
  b = f32[$C] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant($C)
  nb = f32[$R] broadcast(n), dimensions={}
  sum = f32[$R] reduce(x, zero), dimensions={1}, to_apply=add
  mean = f32[$R] divide(sum, nb)
  meanb = f32[$R,$C] broadcast(mean), dimensions={0}
  centered = f32[$R,$C] subtract(x, meanb)
  sq = f32[$R,$C] multiply(centered, centered)
  var = f32[$R] reduce(sq, zero), dimensions={1}, to_apply=add
  varn = f32[$R] divide(var, nb)
  eps = f32[] constant(1e-5)
  epsb = f32[$R] broadcast(eps), dimensions={}
  ve = f32[$R] add(varn, epsb)
  r = f32[$R] rsqrt(ve)
  rb = f32[$R,$C] broadcast(r), dimensions={0}
  gb = f32[$R,$C] broadcast(g), dimensions={1}
  bb = f32[$R,$C] broadcast(b), dimensions={1}
  norm = f32[$R,$C] multiply(centered, rb)
  scaled = f32[$R,$C] multiply(norm, gb)
  ROOT out = f32[$R,$C] add(scaled, bb)
})"),
       2},
  };
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

absl::Status Run(int64_t mib, int iterations) {
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform("cuda");
  if (!platform.ok()) return platform.status();
  absl::StatusOr<LocalClient*> client = ClientLibrary::GetOrCreateLocalClient(*platform);
  if (!client.ok()) return client.status();
  const int64_t bytes = mib << 20;
  const int64_t n = bytes / 4;
  const int64_t columns = 1024;
  const int64_t rows = n / columns;

  // The copy: device to device, the platform's synchronous memcpy.
  se::DeviceMemoryAllocator* allocator = (*client)->memory_allocator();
  absl::StatusOr<se::OwningDeviceMemory> src = allocator->Allocate(0, bytes);
  if (!src.ok()) return src.status();
  absl::StatusOr<se::OwningDeviceMemory> dst = allocator->Allocate(0, bytes);
  if (!dst.ok()) return dst.status();
  se::DeviceMemoryBase dst_memory = dst->cref();
  double copy_best = 1e30;
  for (int i = 0; i <= iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    absl::Status status = (*platform)->SynchronousMemcpy(&dst_memory, src->cref(), bytes);
    if (!status.ok()) return status;
    if (i > 0) copy_best = std::min(copy_best, Seconds(std::chrono::steady_clock::now() - start));
  }
  const double copy_gbs = 2.0 * static_cast<double>(bytes) / copy_best / 1e9;
  std::printf("%-40s GB/s=%7.1f  share=1.000  ms=%.3f\n", "copy (device to device)", copy_gbs,
              copy_best * 1e3);

  for (const Workload& workload : Workloads()) {
    std::string text = absl::StrReplaceAll(
        workload.hlo, {{"$N", absl::StrCat(n)}, {"$R", absl::StrCat(rows)}, {"$C", "1024"}});
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
    if (!module.ok()) return module.status();
    std::vector<Shape> parameter_shapes;
    for (const HloInstruction* parameter :
         (*module)->entry_computation()->parameter_instructions()) {
      parameter_shapes.push_back(parameter->shape());
    }
    absl::StatusOr<std::unique_ptr<LocalExecutable>> executable =
        (*client)->Compile(*std::move(module), ExecutableBuildOptions());
    if (!executable.ok()) {
      std::printf("%-40s failed to compile: %s\n", workload.name.c_str(),
                  std::string(executable.status().message()).c_str());
      continue;
    }
    std::vector<ScopedShapedBuffer> arguments;
    for (const Shape& shape : parameter_shapes) {
      Literal literal(shape);
      float* data = literal.data<float>().data();
      for (int64_t i = 0; i < shape.num_elements(); ++i) {
        data[i] = static_cast<float>(i % 1000) * 1e-3f;
      }
      absl::StatusOr<ScopedShapedBuffer> buffer = (*client)->LiteralToShapedBuffer(literal, 0);
      if (!buffer.ok()) return buffer.status();
      arguments.push_back(*std::move(buffer));
    }
    std::vector<const ShapedBuffer*> pointers;
    pointers.reserve(arguments.size());
    for (const ScopedShapedBuffer& argument : arguments) pointers.push_back(&argument);
    double best = 1e30;
    for (int i = 0; i <= iterations; ++i) {
      auto start = std::chrono::steady_clock::now();
      absl::StatusOr<ScopedShapedBuffer> result = (*executable)->Run(pointers, {});
      if (!result.ok()) return result.status();
      if (i > 0) best = std::min(best, Seconds(std::chrono::steady_clock::now() - start));
    }
    const double gbs = workload.arrays_moved * static_cast<double>(bytes) / best / 1e9;
    std::printf("%-40s GB/s=%7.1f  share=%.3f  ms=%.3f\n", workload.name.c_str(), gbs,
                gbs / copy_gbs, best * 1e3);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace axle

int main(int argc, char** argv) {
  const int64_t mib = argc > 1 ? std::atoll(argv[1]) : 256;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  if (mib <= 0 || iterations <= 0) {
    std::fprintf(stderr, "usage: cuda-bandwidth [MIB > 0] [ITERATIONS > 0]\n");
    return 2;
  }
  absl::Status status = axle::Run(mib, iterations);
  if (!status.ok()) {
    std::fprintf(stderr, "cuda-bandwidth: %s\n", std::string(status.message()).c_str());
    return status.code() == absl::StatusCode::kUnavailable ? 1 : 2;
  }
  return 0;
}
