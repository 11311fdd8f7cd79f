// The scenario: typed params for cluster, workload and policies, loaded from YAML with --set overrides.
#pragma once

#include "sim/scenario/yaml_reader.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cs {

/** GPUs' links inside a node. Zero bandwidth/latency mean "take the device catalog's value". */
struct IntraNodeParams {
  std::string kind = "nvswitch"; // nvswitch | nvlink-mesh | pcie
  Rate bandwidth;                // per GPU and direction
  Seconds latency;
  bool nvls = false;             // NVSwitch in-switch reduction (NVLink SHARP), H100/H200
};

/** One level of switches above the hosts (level 0 = leaf/ToR). */
struct FabricLevel {
  double oversubscription = 1.0; // downlink capacity / uplink capacity of a switch at this level
  int radix = 0;                 // children per switch at this level; 0 = default
  Seconds latency{-1};           // per-hop latency of the links into this level; negative = network.latency
};

/** Background load on some links (the multi-tenant setting): what share of their bandwidth other traffic takes. */
struct BackgroundParams {
  std::string tier;                // links of this tier (nic, leaf-uplink, tor-uplink, host-link, ...)
  std::vector<std::string> links;  // or these links by name
  std::string kind = "constant";   // constant | on-off | csv
  double load = 0.5;               // share taken (constant, and on-off while on)
  Seconds on{1e-3}, off{1e-3};     // on-off phases
  std::string file;                // csv: "time_s,load" rows, relative to the scenario file
  Seconds period;                  // csv: repeat every period (0 = no repeat)
};

struct NetworkParams {
  std::string kind = "fat-tree"; // fat-tree | rail-optimized | star (GPU clusters); tree (CPU clusters)
  std::string model = "ideal";   // ideal (max-min, no TCP factors) | lv08 (SimGrid's TCP-calibrated model)
  Rate nic_bandwidth{400e9 / 8};
  double nic_efficiency = 0.97; // share of the line rate a NIC delivers
  int nics_per_node = 8;
  std::vector<FabricLevel> levels{FabricLevel{}, FabricLevel{}};
  Seconds latency{1e-6};
  // CPU-cluster tree (host -> ToR -> aggregation -> core).
  Rate host_link{10e9 / 8};
  Rate tor_uplink;  // 0 = hosts_per_rack * host_link / oversubscription[0]
  Rate agg_uplink;  // 0 = racks_per_agg * tor_uplink / oversubscription[1]
  std::vector<double> oversubscription{1.0, 1.0};
  int racks_per_agg = 0; // 0 = all racks under one aggregation switch
  std::vector<BackgroundParams> background;
};

struct HostParams {
  int cores = 0;       // 0 = catalog's cpu node
  Bytes memory;        // 0 = catalog
  Rate disk_bandwidth; // 0 = catalog
  double core_speed = 0; // FLOP/s per core; 0 = catalog
};

struct ClusterParams {
  std::string device = "h100-sxm5";
  std::string profile; // device profile JSON for the kernel cost models; "" = the one shipped for the device
  int nodes = 1;
  int gpus_per_node = 8;
  int gpus = 0; // optional total; must equal nodes * gpus_per_node when given with nodes
  IntraNodeParams intra_node;
  NetworkParams network;
  // CPU clusters
  int racks = 0;
  int hosts_per_rack = 0;
  HostParams host;

  bool is_cpu_cluster() const { return racks > 0; }
};

/** One layer of a generic layer graph (workload.model.graph): costs per sample, forward pass. */
struct GraphLayerParams {
  std::string name;
  double flops = 0;                 // forward FLOPs per sample
  Bytes bytes;                      // forward memory traffic per sample
  double params = 0;                // parameters
  Bytes activations;                // its output per sample: sent to the layers it feeds, kept for backward
  std::vector<std::string> inputs;  // earlier layers it reads; none = the model's input
};

struct ModelParams {
  int layers = 24;
  int hidden = 2048;
  int ffn = 0; // 0 = 4 * hidden
  int heads = 16;
  int seq = 2048;
  int vocab = 51200;
  std::string dtype = "bf16";
  std::string recompute = "none"; // none | selective | full
  std::string attention = "flash"; // flash (fused, scores stay on chip) | materialized (scores written to memory)
  std::string preset; // filled in first, then keys given next to it override (see model_presets())
  int kv_heads = 0;           // 0 = heads (multi-head attention); fewer = grouped-query attention
  std::string mlp = "gelu";   // gelu (up, GeLU, down) | swiglu (gate and up, SiLU-gated product, down)
  std::string norm = "layernorm"; // layernorm | rmsnorm (weight only)
  bool tie_embeddings = true; // the output layer reuses the input embedding
  std::vector<GraphLayerParams> graph; // non-empty: this layer graph replaces the transformer
  int kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

struct BatchParams {
  int global = 256;
  int micro = 4;
};

struct ParallelParams {
  int dp = 0; // 0 = all GPUs / (tp * pp)
  int tp = 1;
  int pp = 1;
  int vpp = 1;
  int ep = 1;
  bool sequence_parallel = false;
  int zero = 0;
  std::string partition = "even"; // pipeline stages: even (same layers each) | balanced (by cost)
  std::string placement = "tp-pp-dp"; // rank order on GPUs, innermost first: tp-pp-dp | tp-dp-pp
  std::vector<int> stage_layers;   // layers of each virtual stage, given (e.g. by `clustersim plan`); overrides partition
};

/** A collective swept over message sizes, like nccl-tests. */
struct CollectiveParams {
  std::string op = "all-reduce";
  std::string algorithm = "auto";
  Bytes min_bytes{1024};
  Bytes max_bytes{8.0 * 1073741824.0};
  double factor = 2;   // size multiplier between rows
  int ranks = 0;       // 0 = every GPU
  int root = 0;        // broadcast root
  std::string pricing = "auto"; // analytical backend: auto | closed-form | flows (simgrid always runs flows)
};

/** A MapReduce workload read from a production trace. */
struct MapReduceTraceParams {
  std::string format = "swim"; // swim | rumen | jhist
  std::string file;            // relative to the scenario file
  Seconds start;               // replay jobs submitted in [start, start + duration)
  Seconds duration;            // 0 = to the end of the trace
  double scale = 1.0;          // multiplies every byte count (SWIM: ratio of cluster sizes)
  int max_jobs = 0;            // 0 = no limit
};

/** Synthetic MapReduce jobs: Poisson arrivals, log-uniform input sizes. */
struct SyntheticJobsParams {
  int jobs = 0;
  Seconds mean_interarrival{10};
  Bytes min_input{1073741824.0};
  Bytes max_input{10.0 * 1073741824.0};
  double shuffle_ratio = 1.0; // shuffle bytes / input bytes
  double output_ratio = 0.1;  // output bytes / shuffle bytes (or / input when there is no shuffle)
};

struct QueueParams {
  std::string name = "default";
  double capacity = 1.0; // share of the cluster's containers
};

struct MapReduceParams {
  MapReduceTraceParams trace;
  SyntheticJobsParams synthetic;
  Bytes block_size{134217728.0};
  int replication = 3;
  int writer_racks = 0;       // 0: input written from outside the cluster; k: each dataset written from k racks
  int containers_per_host = 0; // 0 = the host's cores
  Bytes reduce_bytes_per_task{1073741824.0};
  int max_reduces = 999;
  double slowstart = 0.05;    // mapreduce.job.reduce.slowstart.completedmaps
  double reduce_rampup_limit = 0.5; // share of a job's containers reducers may hold while maps are pending
  Seconds heartbeat{1};
  int parallel_copies = 5;    // mapreduce.reduce.shuffle.parallelcopies
  Rate map_rate{100e6};       // bytes/s one container's map function processes
  Rate reduce_rate{100e6};
  bool speculative = false;
  double speculative_slowdown = 1.5; // a running map this many times slower than its job's mean gets a copy
  double slow_host_fraction = 0;     // share of hosts that compute slowly (stragglers)
  double slow_host_factor = 3;       // how much slower
  std::vector<double> level_costs{0, 1, 2, 4}; // c0..c3: same host, rack, pod, core
  int node_locality_delay = 40;      // capacity scheduler; -1 = number of hosts
  int rack_locality_additional_delay = -1; // -1 = L*C/N per job
  std::vector<QueueParams> queues{QueueParams{}};
  std::vector<std::string> middleboxes; // switches every inter-rack flow must traverse, in order (PAT's policy)
};

struct WorkloadParams {
  std::string kind = "transformer-training";
  MapReduceParams mapreduce;
  CollectiveParams collective;
  ModelParams model;
  BatchParams batch;
  ParallelParams parallel;
  int iterations = 2;
  Bytes gradient_bucket{25.0 * 1048576.0};
};

struct PolicyParams {
  std::string pipeline;
  std::string sync = "ring-allreduce";
  std::string moe;
  std::string mapreduce;
  std::string spark_cache;
  std::string spark_provisioning;
  std::string cluster;
};

struct Scenario {
  std::string name;
  std::string description;
  long long seed = 1;
  std::string backend = "simgrid"; // simgrid | analytical
  ClusterParams cluster;
  WorkloadParams workload;
  PolicyParams policies;

  std::string file;      // where it was loaded from
  std::vector<std::string> overrides; // the --set texts applied, in order
  YAML::Node resolved;   // the document after --set overrides, written next to the report
};

/** Loads `path`, applies `overrides` ("a.b.c=value", in order) and checks the result.
 *  Throws InputError (file:line:col) on any problem: missing file, YAML syntax, unknown key, bad value. */
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

/** Parses an already-loaded document (tests use this with inline YAML). */
Scenario parse_scenario(YAML::Node root, std::shared_ptr<const SourceInfo> source);

/** Named model configurations for `model.preset`. */
const std::map<std::string, ModelParams>& model_presets();

/** Every key the scenario format accepts, with type, default and help (docs and `clustersim validate --keys`). */
std::vector<FieldDoc> describe_scenario_keys();

} // namespace cs
