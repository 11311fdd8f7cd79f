// Test helper: runs `clustersim import` on a file into a fresh scenario path, keeping the exit code and the output.
#pragma once

#include "tests/test_support.hpp"

#include <filesystem>
#include <string>

namespace cs::testing {

struct ImportResult {
  CliResult r;
  std::filesystem::path file; // where the scenario was asked to be written
};

/** Imports `input` with `options` (--gpus, --format, ...) into a fresh directory's imported.yaml. */
inline ImportResult import_file(const std::string& input, const std::string& options = "")
{
  static int n = 0;
  const auto dir = fresh_dir("import_" + std::to_string(n++));
  const auto file = dir / "imported.yaml";
  return {clustersim("import " + input + " " + options + " --out " + file.string()), file};
}

} // namespace cs::testing
