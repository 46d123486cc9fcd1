#include "tools/tool_io.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/text/hlo_parser.h"
#ifdef AXLE_HAVE_HLO_PROTO
#include "axle/hlo/proto/hlo_proto.h"
#endif

namespace axle {

absl::Status CreateOutputDir(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--output_dir ", dir, ": cannot create it: ", error.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> TimeRuns(int iterations,
                                             const std::function<absl::Status()>& run) {
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    AXLE_RETURN_IF_ERROR(run());
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times;
}

void PrintTimePerRun(const std::vector<double>& sorted_ms) {
  std::printf("time per run: min %.3f ms, median %.3f ms\n", sorted_ms.front(),
              sorted_ms[sorted_ms.size() / 2]);
}

absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path) {
  std::ostringstream contents;
  if (path == "-") {
    contents << std::cin.rdbuf();
    return contents.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  contents << in.rdbuf();
  return contents.str();
}

absl::StatusOr<std::unique_ptr<HloModule>> LoadModule(const std::string& path, bool verify) {
  std::unique_ptr<HloModule> module;
  if (absl::EndsWith(path, ".pb")) {
#ifdef AXLE_HAVE_HLO_PROTO
    AXLE_ASSIGN_OR_RETURN(module, ReadHloModuleProtoFile(path));
#else
    return absl::UnimplementedError(absl::StrCat(
        path,
        ": reading HloModuleProto (.pb) needs Axle built with protobuf (libprotobuf-dev, "
        "protobuf-compiler)"));
#endif
  } else {
    AXLE_ASSIGN_OR_RETURN(std::string text, ReadFileOrStdin(path));
    AXLE_ASSIGN_OR_RETURN(module,
                          ParseAndReturnUnverifiedModule(text, path == "-" ? "<stdin>" : path));
  }
  if (verify) {
    absl::Status status = VerifyHloModule(*module);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": error: invalid module: ", status.message()));
    }
  }
  return module;
}

absl::Status WriteModuleProto(const HloModule& module, const std::string& path) {
#ifdef AXLE_HAVE_HLO_PROTO
  return WriteHloModuleProtoFile(module, path);
#else
  return absl::UnimplementedError(absl::StrCat(
      path,
      ": writing HloModuleProto (.pb) needs Axle built with protobuf (libprotobuf-dev, "
      "protobuf-compiler)"));
#endif
}

int ReportError(const char* tool, const absl::Status& status) {
  std::string message(status.message());
  if (absl::StrContains(message, ": error: ")) {
    std::fprintf(stderr, "%s\n", message.c_str());
  } else {
    std::fprintf(stderr, "%s: error: %s\n", tool, message.c_str());
  }
  return 1;
}

}  // namespace axle
