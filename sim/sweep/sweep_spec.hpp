// What a sweep varies: axes of scenario keys and their values, crossed or zipped, times seeds; and the variants.
#pragma once

#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace cs {

struct SweepAxis {
  std::string key;                 // a scenario key path, as --set takes it ("cluster.nodes", "policies.sync")
  std::vector<std::string> values; // YAML texts
};

struct SweepSpec {
  std::vector<SweepAxis> axes;
  bool zip = false; // zipped: the i-th values of every axis together (all axes the same length); else crossed
  int seeds = 1;    // each variant with seeds s, s+1, ..., s+seeds-1 (s = the scenario's seed)
};

/** One run of a sweep: its settings (key, value) in axis order and its seed. `id` names it in results and resumes. */
struct SweepVariant {
  std::string id;        // "cluster.nodes=4,policies.sync=ring-allreduce,seed=1"
  std::size_t index = 0; // position in the sweep's order (merged shards are put back in it)
  std::vector<std::pair<std::string, std::string>> settings;
  long long seed = 1;
  // What every variant of the sweep shares and a resumed sweep must match: the backend that ran it, the --set
  // overrides (and --goodput-days), and a digest of the scenario file's bytes.
  std::string backend, overrides, scenario_digest;
};

/** What a finished row must match to count as this variant when a sweep resumes: its id and its shared settings. */
std::string resume_key(const SweepVariant& v);

/** Adds `--axis key=v1,v2,...` flags to `spec`; InputError at the command line for a malformed one. */
void add_axis_flags(SweepSpec& spec, const std::vector<std::string>& flags);
/** Reads a scenario's `sweep:` block ({axes: {key: [values]}, mode: cross | zip, seeds: N}) into `spec`;
 *  InputError at its position. An absent block leaves `spec` as it is. */
void read_sweep_block(SweepSpec& spec, const YAML::Node& block, const std::string& file);
/** The variants in a fixed order: axes in order (the last varying fastest), then seeds. InputError when zipped
 *  axes differ in length or there would be more than 100,000 variants. */
std::vector<SweepVariant> sweep_variants(const SweepSpec& spec, long long base_seed);

} // namespace cs
