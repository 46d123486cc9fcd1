#include "axle/hlo/pass/hlo_pass_pipeline.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "axle/base/environment_options.h"
#include "axle/base/file_io.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/pass/hlo_graph_dumper.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle {

std::string HloPassPipeline::dump_dir() const {
  if (!dump_dir_.empty()) return dump_dir_;
  return EnvironmentOptions::Read().dump_to;
}

absl::StatusOr<bool> HloPassPipeline::Run(HloModule* module) {
  bool changed_any = false;
  int dump_index = 0;
  const std::string dump_dir_ = dump_dir();
  if (!dump_dir_.empty()) std::filesystem::create_directories(dump_dir_);
  for (const auto& pass : passes_) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass->Run(module);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!changed.ok()) {
      return absl::Status(changed.status().code(),
                          absl::StrCat("pass ", pass->name(), ": ", changed.status().message()));
    }
    timings_.push_back({std::string(pass->name()), ms, *changed});
    if (!*changed) continue;
    changed_any = true;
    if (verify_) {
      absl::Status status = VerifyHloModule(*module);
      if (!status.ok()) {
        return absl::InternalError(
            absl::StrCat("module is invalid after pass ", pass->name(), ": ", status.message()));
      }
    }
    if (!dump_dir_.empty()) {
      const std::string path = absl::StrFormat("%s/%04d.%s.%s", dump_dir_, dump_index++,
                                               module->name(), std::string(pass->name()));
      // Large constants elided, as XLA's dumps do by default (a model's
      // weights compiled in as constants printed in full took a minute).
      absl::Status status = WriteWholeFile(
          absl::StrCat(path, ".hlo"),
          axle::ToString(*module, HloPrintOptions::Canonical().set_print_large_constants(false)));
      if (!status.ok()) return status;
      // And as a graph (XLA's --xla_dump_hlo_as_dot).
      status = WriteWholeFile(absl::StrCat(path, ".dot"),
                              RenderModuleAsDot(*module, absl::StrCat("after ", pass->name())));
      if (!status.ok()) return status;
    }
  }
  if (!dump_dir_.empty()) {
    std::string text;
    for (const PassTiming& t : timings_) {
      absl::StrAppend(&text, absl::StrFormat("%-32s %10.3f ms%s\n", t.pass, t.milliseconds,
                                             t.changed ? "  (changed)" : ""));
    }
    absl::Status status =
        WriteWholeFile(absl::StrCat(dump_dir_, "/", module->name(), ".timings.txt"), text);
    if (!status.ok()) return status;
    // The module as the pipeline leaves it, as a page with its picture (XLA's
    // --xla_dump_hlo_as_html).
    status = WriteWholeFile(
        absl::StrCat(dump_dir_, "/", module->name(), ".", name_, ".html"),
        RenderGraph(*module, absl::StrCat("after pipeline ", name_), RenderedGraphFormat::kHtml));
    if (!status.ok()) return status;
  }
  return changed_any;
}

}  // namespace axle
