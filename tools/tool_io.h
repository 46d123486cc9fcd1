//===- tool_io.h - File and error handling shared by the tools -------------===//
#ifndef AXLE_TOOLS_TOOL_IO_H_
#define AXLE_TOOLS_TOOL_IO_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

// Reads a whole file; "-" is standard input.
absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path);
absl::Status WriteTextFile(const std::string& path, const std::string& contents);

// Parses HLO text from `path` (errors name path:line:col) and verifies it
// unless `verify` is false.
absl::StatusOr<std::unique_ptr<HloModule>> LoadModule(const std::string& path, bool verify);

// Prints "<tool>: error: <message>" (or the message alone when it already
// carries a location) to stderr and returns exit code 1.
int ReportError(const char* tool, const absl::Status& status);

}  // namespace axle

#endif  // AXLE_TOOLS_TOOL_IO_H_
