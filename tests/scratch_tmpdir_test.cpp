#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

TEST(ScratchTmpdir, AProcessesScratchFilesGoToAFolderOfItsOwn)
{
  // tests/scratch_tmpdir.cpp points TMPDIR and TEST_TMPDIR at a fresh cs_tests_XXXXXX folder before any test runs,
  // so what the tests write under the temporary folder (and what the clustersim runs they start write) goes there and
  // is removed with it when the process exits.
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  EXPECT_EQ(dir.filename().string().rfind("cs_tests_", 0), 0u) << dir;
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  ASSERT_NE(std::getenv("TEST_TMPDIR"), nullptr);
  EXPECT_EQ(std::filesystem::path(std::getenv("TEST_TMPDIR")), dir);
}
