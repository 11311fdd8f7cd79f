// What `clustersim import` reads out of a configuration users already keep (Megatron arguments, a torchtitan TOML):
// scenario keys with their values, the cluster the run needs, and every setting it could not model, named.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace cs {

/** A scenario under construction: values set by dotted key path (workload.parallel.tp), the GPUs it asks for, and the
 *  warnings to print. */
class ImportedRun {
public:
  /** Sets `key` (a dotted path) to `value`, creating the maps on the way. */
  template <class T> void set(const std::string& key, const T& value) { node_at(key) = value; }
  /** Whether `key` was set. */
  bool has(const std::string& key) const;
  /** The value set at `key` (it must be set). */
  YAML::Node get(const std::string& key) const;

  void warn(const std::string& message) { warnings_.push_back(message); }
  const std::vector<std::string>& warnings() const { return warnings_; }

  int gpus = 0;          // world size when the input says it (torchrun's --nnodes x --nproc_per_node), else 0
  int gpus_per_node = 0; // when the input says it
  int local_batch = 0; // samples per data-parallel rank a step when not one microbatch (torchtitan's pipeline), else 0
  YAML::Node root{YAML::NodeType::Map};

private:
  YAML::Node node_at(const std::string& key);
  std::vector<std::string> warnings_;
};

/** Where the imported run runs: what the input does not say about the machine. */
struct ImportCluster {
  std::string name;      // scenario name
  std::string device;    // catalog device
  int gpus = 0;          // 0: the input's
  int gpus_per_node = 0; // 0: the input's, else 8
};

/** The scenario YAML of `run` on `cluster`, with a header naming the source; throws InputError (at `source`) when
 *  the GPU count is missing or does not fill whole nodes. */
std::string imported_scenario_yaml(const ImportedRun& run, const ImportCluster& cluster, const std::string& source,
                                   const std::string& format);

} // namespace cs
