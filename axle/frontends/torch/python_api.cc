//===- python_api.cc - The operators behind torch_axle's Python API --------===//
//
// torch_axle (python/torch_axle) loads this library with
// torch.ops.load_library and calls these operators (torch.ops.axle.*), so
// the library needs no Python headers of its own:
//   sync() / mark_step()        the step marker: computes every pending tensor
//   counter_value(str) -> int?  counter_names() -> str[]
//   metric_data(str) -> float[] [count, total s, min s, max s], [] if unknown
//   metric_names() -> str[]     metrics_report() -> str     clear_all()
//   manual_seed(int)            restarts the device's random stream
//   clear_compile_cache()       drops the compiled graphs (AXLE_PROFILE
//                               prints each one's thunk table then)
//
//===----------------------------------------------------------------------===//
#include <torch/library.h>

#include <string>
#include <vector>

#include "axle/frontends/lazy/compile_cache.h"
#include "axle/frontends/lazy/lazy_tensor.h"
#include "axle/frontends/lazy/metrics.h"
#include "axle/frontends/lazy/rng.h"

namespace axle::torch_device {
namespace {

void Sync() {
  absl::Status status = lazy::SyncLiveTensors();
  TORCH_CHECK(status.ok(), "axle: ", std::string(status.message()));
}

c10::optional<int64_t> CounterValue(c10::string_view name) {
  std::optional<int64_t> value =
      lazy::metrics::CounterValue(absl::string_view(name.data(), name.size()));
  if (!value.has_value()) return c10::nullopt;
  return *value;
}

std::vector<std::string> CounterNames() { return lazy::metrics::CounterNames(); }
std::vector<std::string> MetricNames() { return lazy::metrics::MetricNames(); }

std::vector<double> MetricData(c10::string_view name) {
  std::optional<lazy::metrics::MetricData> m =
      lazy::metrics::Metric(absl::string_view(name.data(), name.size()));
  if (!m.has_value()) return {};
  return {static_cast<double>(m->count), m->total_seconds, m->min_seconds, m->max_seconds};
}

std::string MetricsReport() { return lazy::metrics::Report(); }
void ClearAll() { lazy::metrics::ClearAll(); }
int64_t LiveTensors() { return lazy::LiveTensorCount(); }
void ManualSeed(int64_t seed) { lazy::SetRngSeed(static_cast<uint64_t>(seed)); }
void ClearCompileCache() { lazy::ClearCompileCache(); }

}  // namespace

TORCH_LIBRARY(axle, m) {
  m.def("sync() -> ()", &Sync);
  m.def("counter_value(str name) -> int?", &CounterValue);
  m.def("counter_names() -> str[]", &CounterNames);
  m.def("metric_names() -> str[]", &MetricNames);
  m.def("metric_data(str name) -> float[]", &MetricData);
  m.def("metrics_report() -> str", &MetricsReport);
  m.def("clear_all() -> ()", &ClearAll);
  m.def("live_tensors() -> int", &LiveTensors);
  m.def("manual_seed(int seed) -> ()", &ManualSeed);
  m.def("clear_compile_cache() -> ()", &ClearCompileCache);
}

}  // namespace axle::torch_device
