// Every scratch file a test process writes goes to a folder of its own, removed when the process exits.
//
// The tests name their scratch files after /tmp (std::filesystem::temp_directory_path, ::testing::TempDir) and the
// process id; nothing removed them, and a developer's /tmp collected tens of thousands. Pointing TMPDIR and
// TEST_TMPDIR at a fresh folder before any test runs sends them all there, and the clustersim processes the CLI tests
// start inherit it. Children forked by the planner leave with _exit, so only the test process itself removes it.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

class TestProcessTmpdir {
public:
  TestProcessTmpdir()
  {
    std::error_code ec;
    const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec)
      return;
    std::string pattern = (base / "cs_tests_XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      return; // the tests write where they did before
    dir_ = pattern;
    ::setenv("TMPDIR", dir_.c_str(), 1);
    ::setenv("TEST_TMPDIR", dir_.c_str(), 1);
  }
  ~TestProcessTmpdir()
  {
    if (dir_.empty())
      return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TestProcessTmpdir(const TestProcessTmpdir&) = delete;
  TestProcessTmpdir& operator=(const TestProcessTmpdir&) = delete;

private:
  std::string dir_;
};

const TestProcessTmpdir test_process_tmpdir;

} // namespace
