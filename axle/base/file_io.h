//===- file_io.h - Whole files in and out ----------------------------------===//
//
// The one way Axle reads and writes a whole file: dumps (AXLE_DUMP_TO),
// the tools' outputs, the scratch files of external programs
// (subprocess.h). An error names the path and why.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_FILE_IO_H_
#define AXLE_BASE_FILE_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace axle {

// The whole contents of a file, or "" when it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);

// Writes `contents` to `path` (replacing the file, or after its end when
// `append`); an Internal error names the path and why.
absl::Status WriteWholeFile(const std::string& path, absl::string_view contents,
                            bool append = false);

}  // namespace axle

#endif  // AXLE_BASE_FILE_IO_H_
