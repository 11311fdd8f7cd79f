// User-named input files: regular files only, within the size limit, errors naming the file and the problem.
#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "base/json_input.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {
std::string message_of(const std::function<void()>& f)
{
  try {
    f();
  } catch (const cs::InputError& e) {
    return e.where();
  }
  return "";
}
} // namespace

TEST(InputFile, RefusesFoldersDevicesAndMissingFiles)
{
  EXPECT_NE(message_of([] { cs::check_input_file("/tmp", "scenario file"); }).find("it is a folder"),
            std::string::npos);
  EXPECT_NE(message_of([] { cs::check_input_file("/dev/zero", "scenario file"); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(message_of([] { cs::read_text_file("/dev/urandom", "device profile"); }).find("device profile"),
            std::string::npos);
  EXPECT_NE(message_of([] { cs::open_input_file("/nonexistent/trace.tsv", "SWIM trace"); }).find("no such file"),
            std::string::npos);
}

TEST(InputFile, RefusesDocumentsPastTheSizeLimitAndReadsRegularFiles)
{
  const fs::path big = fs::temp_directory_path() / ("cs_big_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream(big) << "name: x\n";
  }
  EXPECT_EQ(cs::read_text_file(big.string()), "name: x\n");
  fs::resize_file(big, cs::kMaxDocumentBytes + 1); // sparse: no disk is used
  const std::string m = message_of([&] { cs::read_text_file(big.string(), "scenario file"); });
  EXPECT_NE(m.find("more than the 67108864 bytes"), std::string::npos) << m;
  EXPECT_NO_THROW(cs::open_input_file(big.string(), "trace")); // traces stream: no size limit
  fs::remove(big);
}
