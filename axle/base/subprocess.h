//===- subprocess.h - Running an external program on scratch files --------===//
//
// Axle runs a few programs of other packages on files: the CUDA toolkit's
// ptxas, Graphviz's dot. ScratchDirectory holds one run's files and removes
// them when it goes; RunProgram runs a program to completion with its output
// in a log file (file_io.h reads and writes the files).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_SUBPROCESS_H_
#define AXLE_BASE_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace axle {

// A fresh directory under $TMPDIR (else /tmp), removed with the files named
// through File() when the object goes.
class ScratchDirectory {
 public:
  // `prefix` names the directory: <tmp>/<prefix>-XXXXXX.
  explicit ScratchDirectory(absl::string_view prefix);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  // False when the directory could not be made (errno says why).
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // The path of `name` in the directory; the file is removed with it.
  std::string File(absl::string_view name);

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// Runs `program` (a path, or a name looked up in PATH) with `arguments`
// (argv[1...]) and waits for it; its stdout and stderr go to `log_path`.
// Returns the exit code, or an error when it could not be started or was
// killed by a signal.
absl::StatusOr<int> RunProgram(const std::string& program,
                               const std::vector<std::string>& arguments,
                               const std::string& log_path);

}  // namespace axle

#endif  // AXLE_BASE_SUBPROCESS_H_
