//===- hlo_pass_pipeline.h - Passes run in order ---------------------------===//
//
// A pipeline runs its passes in order, optionally verifying the module after
// each pass that changed it, and records per-pass timings. A pipeline is
// itself a pass, so pipelines nest; HloPassFix<P> reruns P until it reports
// no change.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_PASS_HLO_PASS_PIPELINE_H_
#define AXLE_HLO_PASS_HLO_PASS_PIPELINE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class HloPassPipeline : public HloPassInterface {
 public:
  explicit HloPassPipeline(std::string name, bool verify_between_passes = true)
      : name_(std::move(name)), verify_(verify_between_passes) {}

  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  void AddPass(std::unique_ptr<HloPassInterface> pass) { passes_.push_back(std::move(pass)); }

  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(HloModule* module) override;

  struct PassTiming {
    std::string pass;
    double milliseconds = 0;
    bool changed = false;
  };
  const std::vector<PassTiming>& timings() const { return timings_; }

  // When set, the module text is written to DIR/NNNN.<module>.<pass>.hlo,
  // and drawn as a graph in DIR/NNNN.<module>.<pass>.dot, after every pass
  // that changed it; at the end, DIR/<module>.timings.txt and the page
  // DIR/<module>.<pipeline>.html with the module's picture
  // (hlo_graph_dumper.h).
  // Without it, the environment variable AXLE_DUMP_TO names the directory
  // (so any program that runs a pipeline can be asked for its dumps).
  void set_dump_dir(std::string dir) { dump_dir_ = std::move(dir); }
  // The directory dumps go to: set_dump_dir's, else $AXLE_DUMP_TO, else "".
  std::string dump_dir() const;

 private:
  std::string name_;
  bool verify_;
  std::vector<std::unique_ptr<HloPassInterface>> passes_;
  std::vector<PassTiming> timings_;
  std::string dump_dir_;
};

// Runs Pass until it reports no change (at most `max_iterations` times).
template <typename Pass>
class HloPassFix : public Pass {
 public:
  using Pass::Pass;
  absl::StatusOr<bool> Run(HloModule* module) override {
    bool changed_any = false;
    for (int i = 0; i < kMaxIterations; ++i) {
      absl::StatusOr<bool> changed = Pass::Run(module);
      if (!changed.ok()) return changed.status();
      if (!*changed) break;
      changed_any = true;
    }
    return changed_any;
  }

 private:
  static constexpr int kMaxIterations = 25;
};

}  // namespace axle

#endif  // AXLE_HLO_PASS_HLO_PASS_PIPELINE_H_
