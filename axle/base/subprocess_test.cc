//===- subprocess_test.cc - Tests of ScratchDirectory and RunProgram ------===//
#include "axle/base/subprocess.h"

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "axle/base/file_io.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(SubprocessTest, ScratchDirectoryRemovesItsFiles) {
  std::string path;
  std::string file;
  {
    ScratchDirectory scratch("axle-subprocess-test");
    ASSERT_TRUE(scratch.ok());
    path = scratch.path();
    file = scratch.File("a.txt");
    ASSERT_TRUE(WriteWholeFile(file, "hello").ok());
    EXPECT_EQ(ReadFileOrEmpty(file), "hello");
  }
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SubprocessTest, RunProgramReportsExitCodesAndOutput) {
  ScratchDirectory scratch("axle-subprocess-test");
  ASSERT_TRUE(scratch.ok());
  const std::string log = scratch.File("log.txt");
  absl::StatusOr<int> ok = RunProgram("sh", {"-c", "echo out; echo err >&2"}, log);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, 0);
  EXPECT_EQ(ReadFileOrEmpty(log), "out\nerr\n");
  absl::StatusOr<int> failed = RunProgram("sh", {"-c", "exit 3"}, log);
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(*failed, 3);
}

TEST(SubprocessTest, MissingProgramIsNotFound) {
  ScratchDirectory scratch("axle-subprocess-test");
  ASSERT_TRUE(scratch.ok());
  absl::StatusOr<int> missing =
      RunProgram("/nonexistent/axle-no-such-program", {}, scratch.File("log.txt"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "axle-no-such-program"));
}

TEST(SubprocessTest, UnwritableFileIsAnError) {
  absl::Status status = WriteWholeFile("/nonexistent/dir/file.txt", "x");
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "/nonexistent/dir/file.txt"));
}

}  // namespace
}  // namespace axle
