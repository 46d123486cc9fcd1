//===- tool_io.h - File and error handling shared by the tools -------------===//
#ifndef AXLE_TOOLS_TOOL_IO_H_
#define AXLE_TOOLS_TOOL_IO_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

// Reads a whole file; "-" is standard input.
absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path);

// Parses HLO text from `path` (errors name path:line:col), or reads a
// binary HloModuleProto when `path` ends in `.pb` (XLA's dumps), and
// verifies the module unless `verify` is false.
absl::StatusOr<std::unique_ptr<HloModule>> LoadModule(const std::string& path, bool verify);

// Writes `module` as a binary HloModuleProto (axle-opt -o FILE.pb).
absl::Status WriteModuleProto(const HloModule& module, const std::string& path);

// Creates --output_dir `dir` (and its parents) if missing.
absl::Status CreateOutputDir(const std::string& dir);

// Calls `run` `iterations` times; each call's wall time in ms, sorted.
absl::StatusOr<std::vector<double>> TimeRuns(int iterations,
                                             const std::function<absl::Status()>& run);
// "time per run: min X ms, median Y ms" for TimeRuns's (non-empty) result.
void PrintTimePerRun(const std::vector<double>& sorted_ms);

// Prints "<tool>: error: <message>" (or the message alone when it already
// carries a location) to stderr and returns exit code 1.
int ReportError(const char* tool, const absl::Status& status);

}  // namespace axle

#endif  // AXLE_TOOLS_TOOL_IO_H_
