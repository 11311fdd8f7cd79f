// Test helper: runs one scenario of scenarios/reference/ through the CLI and returns its report's metrics.
#pragma once

#include "tests/cli/run_cli.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cs::testing {

/** `sets`: further command-line arguments (e.g. " --set workload.model.seq=32768"). */
inline nlohmann::json reference_metrics(const std::string& file, const std::string& sets = "")
{
  auto out = std::filesystem::temp_directory_path() / ("cs_reference_" + std::to_string(::getpid()));
  auto r = run_clustersim(std::string("run ") + CS_SOURCE_DIR + "/scenarios/reference/" + file + " --quiet --out " +
                          out.string() + sets);
  EXPECT_EQ(r.code, 0) << file << ": " << r.err;
  std::ifstream in(out / "report.json");
  auto report = nlohmann::json::parse(in);
  std::filesystem::remove_all(out);
  return report["metrics"];
}

} // namespace cs::testing
