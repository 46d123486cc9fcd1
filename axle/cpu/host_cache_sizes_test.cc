//===- host_cache_sizes_test.cc - Reading the host's cache sizes ----------===//
#include "axle/cpu/host_cache_sizes.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

TEST(HostCacheSizesTest, ParsesSysfsSizes) {
  EXPECT_EQ(ParseCacheSize("36608K"), int64_t{36608} * 1024);
  EXPECT_EQ(ParseCacheSize("2M\n"), int64_t{2} << 20);
  EXPECT_EQ(ParseCacheSize("512"), 512);
  EXPECT_EQ(ParseCacheSize("big"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("-1K"), std::nullopt);
  EXPECT_EQ(ParseCacheSize(""), std::nullopt);
}

void WriteIndex(const std::filesystem::path& root, int index, const std::string& level,
                const std::string& type, const std::string& size) {
  const std::filesystem::path dir = root / ("index" + std::to_string(index));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "level") << level << "\n";
  std::ofstream(dir / "type") << type << "\n";
  std::ofstream(dir / "size") << size << "\n";
}

TEST(HostCacheSizesTest, ReadsL2AndTheLastLevelFromSysfs) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      ("axle-cache-sizes-test-" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::remove_all(root);
  WriteIndex(root, 0, "1", "Data", "32K");
  WriteIndex(root, 1, "1", "Instruction", "32K");
  WriteIndex(root, 2, "2", "Unified", "1024K");
  WriteIndex(root, 3, "3", "Unified", "36608K");
  CacheSizes sizes = ReadSysfsCacheSizes(root.string());
  EXPECT_EQ(sizes.l2_bytes, int64_t{1} << 20);
  EXPECT_EQ(sizes.last_level_bytes, int64_t{36608} * 1024);
  // Without an L3, L2 is the last level.
  std::filesystem::remove_all(root / "index3");
  sizes = ReadSysfsCacheSizes(root.string());
  EXPECT_EQ(sizes.last_level_bytes, int64_t{1} << 20);
  std::filesystem::remove_all(root);
  // A missing directory reports nothing.
  sizes = ReadSysfsCacheSizes(root.string());
  EXPECT_EQ(sizes.l2_bytes, 0);
  EXPECT_EQ(sizes.last_level_bytes, 0);
}

TEST(HostCacheSizesTest, HostSizesArePositiveAndOrdered) {
  const CacheSizes& sizes = HostCacheSizes();
  EXPECT_GT(sizes.l2_bytes, 0);
  EXPECT_GE(sizes.last_level_bytes, sizes.l2_bytes);
}

}  // namespace
}  // namespace axle::cpu
