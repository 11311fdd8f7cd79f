#include "sim/import/imported_run.hpp"

#include "base/input_error.hpp"

#include <fmt/format.h>
#include <sstream>

namespace cs {

namespace {

std::vector<std::string> split_key(const std::string& key)
{
  std::vector<std::string> parts;
  std::stringstream in(key);
  for (std::string part; std::getline(in, part, '.');)
    parts.push_back(part);
  return parts;
}

} // namespace

YAML::Node ImportedRun::node_at(const std::string& key)
{
  YAML::Node n = root;
  const auto parts = split_key(key);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    // yaml-cpp keeps a missing key's node only once it is assigned: make each map on the way before going in.
    if (i + 1 < parts.size() && !n[parts[i]].IsMap())
      n[parts[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node next = n[parts[i]];
    n.reset(next);
  }
  return n;
}

bool ImportedRun::has(const std::string& key) const
{
  YAML::Node n = YAML::Clone(root);
  for (const auto& part : split_key(key)) {
    if (!n.IsMap() || !n[part])
      return false;
    YAML::Node next = n[part];
    n.reset(next);
  }
  return true;
}

YAML::Node ImportedRun::get(const std::string& key) const
{
  YAML::Node n = YAML::Clone(root);
  for (const auto& part : split_key(key)) {
    YAML::Node next = n[part];
    n.reset(next);
  }
  return n;
}

std::string imported_scenario_yaml(const ImportedRun& run, const ImportCluster& cluster, const std::string& source,
                                   const std::string& format)
{
  const int per_node = cluster.gpus_per_node > 0 ? cluster.gpus_per_node
                       : run.gpus_per_node > 0   ? run.gpus_per_node
                                                 : 8;
  const int gpus = cluster.gpus > 0 ? cluster.gpus : run.gpus;
  if (gpus <= 0)
    throw InputError(source, 1, 1, fmt::format("the {} input does not say how many GPUs run it: give --gpus", format));
  if (gpus % per_node != 0)
    throw InputError(source, 1, 1,
                     fmt::format("{} GPUs do not fill whole nodes of {} (--gpus-per-node)", gpus, per_node));
  YAML::Node workload = YAML::Clone(run.root["workload"]);
  if (!workload["batch"]["global"]) { // both sources' default: one local batch per data-parallel rank
    auto degree = [&](const char* key) { return workload["parallel"][key] ? workload["parallel"][key].as<int>() : 1; };
    const int dp = gpus / (degree("tp") * degree("pp") * degree("cp"));
    const int micro = workload["batch"]["micro"] ? workload["batch"]["micro"].as<int>() : 1;
    if (dp <= 0)
      throw InputError(source, 1, 1, fmt::format("{} GPUs are fewer than tp x pp x cp", gpus));
    workload["batch"]["global"] = (run.local_batch > 0 ? run.local_batch : micro) * dp;
  }
  YAML::Node doc(YAML::NodeType::Map);
  doc["name"] = cluster.name;
  doc["description"] = fmt::format("imported from {} ({})", source, format);
  doc["backend"] = "analytical";
  YAML::Node c(YAML::NodeType::Map);
  c["device"] = cluster.device;
  c["nodes"] = gpus / per_node;
  c["gpus_per_node"] = per_node;
  c["intra_node"]["kind"] = "nvswitch";
  // A rail-optimised non-blocking fabric of one 400 Gb/s NIC a GPU (DGX H100's); edit to the real one.
  c["network"]["kind"] = "fat-tree";
  c["network"]["nic_bandwidth"] = "400Gb/s";
  c["network"]["nics_per_node"] = per_node;
  doc["cluster"] = c;
  doc["workload"] = workload;
  for (const auto& kv : run.root)
    if (kv.first.as<std::string>() != "workload")
      doc[kv.first.as<std::string>()] = kv.second;
  YAML::Emitter out;
  out << YAML::Comment(fmt::format("Imported by clustersim import from {} ({}).", source, format)) << YAML::Newline
      << YAML::Comment("The cluster block is not in the input: check the device and the network.") << YAML::Newline
      << doc;
  return std::string(out.c_str()) + "\n";
}

} // namespace cs
