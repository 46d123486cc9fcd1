//===- file_io.cc - Whole files in and out ---------------------------------===//
#include "axle/base/file_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace axle {

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

absl::Status WriteWholeFile(const std::string& path, absl::string_view contents, bool append) {
  errno = 0;
  std::ofstream file(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  file.close();
  if (!file) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path,
                     errno != 0 ? absl::StrCat(": ", std::strerror(errno)) : std::string()));
  }
  return absl::OkStatus();
}

}  // namespace axle
