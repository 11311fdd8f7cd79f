// Helpers the tests share (source paths, scratch folders and files, built-in devices): one definition each, so that
// the unity build of the test binary (tests/CMakeLists.txt) sees no two helpers of the same name.
#pragma once

#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "tests/cli/run_cli.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace cs::testing {

/** A path inside the source tree. */
inline std::string src(const std::string& rel) { return std::string(CS_SOURCE_DIR) + "/" + rel; }

/** An empty scratch folder's path (removed if it exists, not created), unique to this process. */
inline std::filesystem::path fresh_dir(const std::string& name)
{
  auto dir = std::filesystem::temp_directory_path() / ("cs_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

/** A scratch file holding `text`, unique to this process. */
inline std::filesystem::path write_temp(const std::string& name, const std::string& text)
{
  auto path = std::filesystem::temp_directory_path() / ("cs_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline nlohmann::json read_json(const std::filesystem::path& path)
{
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/** Bytes the events of category `cat` in a Chrome trace moved (their args.bytes); 0 for a trace that did not parse. */
inline double trace_bytes(const nlohmann::json& trace, const std::string& cat)
{
  double bytes = 0;
  if (!trace.is_discarded() && trace.contains("traceEvents"))
    for (const auto& e : trace["traceEvents"])
      if (e.value("cat", "") == cat && e.contains("args"))
        bytes += e["args"].value("bytes", 0.0);
  return bytes;
}

inline CliResult clustersim(const std::string& args) { return run_clustersim(args); }

/** A device of the built-in catalog, and its shipped profile. */
inline const DeviceSpec& device(const char* name) { return *DeviceCatalog::builtin().find(name); }
inline const DeviceProfile& profile(const char* name) { return *builtin_profile(name); }
inline const DeviceSpec& h100() { return device("h100-sxm5"); }
/** `nodes` H100 machines of 8 GPUs on NVSwitch, a 400 Gb/s NIC each, in one non-blocking fabric. */
inline PlatformSpec h100_nodes(int nodes)
{
  ClusterParams c;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.network.nics_per_node = 8;
  return build_platform_spec(c, h100());
}

} // namespace cs::testing
