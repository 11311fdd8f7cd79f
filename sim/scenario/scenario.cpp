#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace cs {
namespace {

void require_positive(ObjectReader& r, const char* key, double value)
{
  if (!r.describing() && !(value > 0))
    r.fail_at(key, fmt::format("'{}' must be positive, got {}", r.path_of(key), value));
}

void require_non_negative(ObjectReader& r, const char* key, double value)
{
  if (!r.describing() && value < 0)
    r.fail_at(key, fmt::format("'{}' must not be negative, got {}", r.path_of(key), value));
}

void read_level(ObjectReader& r, FabricLevel& l)
{
  r.field("oversubscription", l.oversubscription, "downlink / uplink capacity ratio of a switch at this level (1 = non-blocking)")
      .field("radix", l.radix, "children per switch at this level (0 = default: 32 NIC ports at the leaf, all below at the top)")
      .field("latency", l.latency, "per-hop latency of the links up into this level (default: network.latency)");
  if (!r.describing() && l.oversubscription < 1.0)
    r.fail_at("oversubscription", "oversubscription must be >= 1");
  require_non_negative(r, "radix", l.radix);
}

void read_background(ObjectReader& r, BackgroundParams& b)
{
  r.field("tier", b.tier, "apply to every link of this tier (nic, leaf-uplink, pod-uplink, host-link, tor-uplink, ...)")
      .field("links", b.links, "or to these links by name (as in trace.json and docs/architecture.md)")
      .choice("kind", b.kind, {"constant", "on-off", "csv"}, "load over time")
      .field("load", b.load, "share of the bandwidth background traffic takes, in [0, 1)")
      .field("on", b.on, "on-off: how long the load lasts")
      .field("off", b.off, "on-off: how long the link is free")
      .field("file", b.file, "csv: 'time_s,load' rows (path relative to the scenario)")
      .field("period", b.period, "csv: repeat the series every period (0 = once, the last load then holds)");
  if (r.describing())
    return;
  if (b.tier.empty() == b.links.empty())
    r.fail(r.node(), "a background entry needs either 'tier' or 'links'");
  if (!(b.load >= 0 && b.load < 1))
    r.fail_at("load", "load must be in [0, 1)");
  if (b.kind == "on-off" && (!(b.on.value > 0) || !(b.off.value > 0)))
    r.fail_at(b.on.value > 0 ? "off" : "on", "on-off needs positive 'on' and 'off'");
  if (b.kind == "csv" && b.file.empty())
    r.fail_at("kind", "kind csv needs a 'file'");
  if (b.period.value < 0)
    r.fail_at("period", "period must not be negative");
}

void read_network(ObjectReader r, NetworkParams& n)
{
  r.choice("kind", n.kind, {"fat-tree", "rail-optimized", "star", "tree"},
           "fabric shape: fat-tree, rail-optimized or star for GPU clusters; tree for CPU clusters")
      .choice("model", n.model, {"ideal", "lv08"},
              "flow model: ideal = max-min sharing with exact size/bandwidth + latency; lv08 = SimGrid's TCP-calibrated factors")
      .field("nic_bandwidth", n.nic_bandwidth, "bandwidth of one NIC port, per direction")
      .field("nic_efficiency", n.nic_efficiency, "share of the line rate a NIC delivers (0.97: 48.5 of 50 GB/s on NDR)")
      .field("nics_per_node", n.nics_per_node, "NICs per GPU node (equal to gpus_per_node gives one NIC per GPU)")
      .list<FabricLevel>("levels", n.levels, "switch levels above the NICs, leaf first (2 or 3 for fat-tree)", read_level)
      .field("latency", n.latency, "per-hop link latency")
      .field("host_link", n.host_link, "CPU cluster: host to ToR link bandwidth")
      .field("tor_uplink", n.tor_uplink, "CPU cluster: ToR to aggregation bandwidth (default from oversubscription)")
      .field("agg_uplink", n.agg_uplink, "CPU cluster: aggregation to core bandwidth (default from oversubscription)")
      .field("oversubscription", n.oversubscription, "CPU cluster: [ToR, aggregation] oversubscription ratios")
      .field("racks_per_agg", n.racks_per_agg, "CPU cluster: racks under one aggregation switch (0 = all)")
      .list<BackgroundParams>("background", n.background, "time-varying background load on links", read_background);
  r.finish();
  require_positive(r, "nic_bandwidth", n.nic_bandwidth.value);
  require_positive(r, "nics_per_node", n.nics_per_node);
  if (!r.describing() && !(n.nic_efficiency > 0 && n.nic_efficiency <= 1))
    r.fail_at("nic_efficiency", "nic_efficiency must be in (0, 1]");
  require_non_negative(r, "latency", n.latency.value);
  require_positive(r, "host_link", n.host_link.value);
  require_non_negative(r, "tor_uplink", n.tor_uplink.value);
  require_non_negative(r, "agg_uplink", n.agg_uplink.value);
  require_non_negative(r, "racks_per_agg", n.racks_per_agg);
  if (r.describing())
    return;
  if (n.levels.empty() || n.levels.size() > 3)
    r.fail_at("levels", fmt::format("network.levels must list 1 to 3 switch levels, got {}", n.levels.size()));
  for (double o : n.oversubscription)
    if (o < 1.0)
      r.fail_at("oversubscription", "oversubscription ratios must be >= 1");
}

void read_cluster(ObjectReader r, ClusterParams& c)
{
  r.field("device", c.device, "device catalog name (clustersim list devices)")
      .field("profile", c.profile, "device profile JSON for kernel costs (default: the one shipped in calibrate/profiles/)")
      .field("nodes", c.nodes, "GPU nodes")
      .field("gpus_per_node", c.gpus_per_node, "GPUs in each node")
      .field("gpus", c.gpus, "total GPUs (optional; must divide into nodes of gpus_per_node)");
  ObjectReader intra = r.child("intra_node", "links between the GPUs of a node");
  intra.choice("kind", c.intra_node.kind, {"nvswitch", "nvlink-mesh", "pcie"}, "intra-node interconnect")
      .field("bandwidth", c.intra_node.bandwidth, "per-GPU bandwidth per direction (default from the device catalog)")
      .field("latency", c.intra_node.latency, "per-hop latency (default from the device catalog)")
      .field("nvls", c.intra_node.nvls, "NVSwitch in-switch reduction (NVLink SHARP; H100/H200 only)");
  intra.finish();
  require_non_negative(intra, "bandwidth", c.intra_node.bandwidth.value);
  require_non_negative(intra, "latency", c.intra_node.latency.value);
  read_network(r.child("network", "the data-centre network"), c.network);
  r.field("racks", c.racks, "CPU cluster: number of racks (makes this a CPU cluster)")
      .field("hosts_per_rack", c.hosts_per_rack, "CPU cluster: hosts in each rack");
  ObjectReader host = r.child("host", "CPU cluster: one host's resources (defaults from the catalog's cpu-node)");
  host.field("cores", c.host.cores, "cores per host")
      .field("memory", c.host.memory, "memory per host")
      .field("disk_bandwidth", c.host.disk_bandwidth, "disk read/write bandwidth per host")
      .field("core_speed", c.host.core_speed, "FLOP/s per core");
  host.finish();
  require_non_negative(host, "cores", c.host.cores);
  require_non_negative(host, "memory", c.host.memory.value);
  require_non_negative(host, "disk_bandwidth", c.host.disk_bandwidth.value);
  require_non_negative(host, "core_speed", c.host.core_speed);
  r.finish();
  if (r.describing())
    return;
  require_non_negative(r, "racks", c.racks);
  if (c.is_cpu_cluster()) {
    require_positive(r, "hosts_per_rack", c.hosts_per_rack);
    if (r.has("nodes") || r.has("gpus"))
      r.fail_at(r.has("nodes") ? "nodes" : "gpus", "a CPU cluster (racks) takes hosts_per_rack, not nodes or gpus");
    if (!r.has("device"))
      c.device = "cpu-node";
    const YAML::Node network = r.node()["network"];
    if (!network.IsDefined() || !network.IsMap() || !network["kind"].IsDefined())
      c.network.kind = "tree";
    else if (c.network.kind != "tree")
      r.child("network", "").fail_at("kind", "a CPU cluster's network.kind must be 'tree'");
    return;
  }
  if (c.network.kind == "tree")
    r.child("network", "").fail_at("kind", "network.kind 'tree' is for CPU clusters (racks); use fat-tree, rail-optimized or star");
  require_positive(r, "gpus_per_node", c.gpus_per_node);
  require_non_negative(r, "gpus", c.gpus);
  if (c.gpus > 0) {
    if (c.gpus % c.gpus_per_node != 0)
      r.fail_at("gpus", fmt::format("cluster.gpus = {} does not divide into nodes of {} GPUs", c.gpus, c.gpus_per_node));
    if (r.has("nodes") && c.nodes * c.gpus_per_node != c.gpus)
      r.fail_at("gpus", fmt::format("cluster.gpus = {} but nodes x gpus_per_node = {}", c.gpus, c.nodes * c.gpus_per_node));
    c.nodes = c.gpus / c.gpus_per_node;
  }
  require_positive(r, "nodes", c.nodes);
  if (c.network.kind == "rail-optimized" && c.network.nics_per_node != c.gpus_per_node)
    r.child("network", "").fail_at("nics_per_node", "rail-optimized needs one NIC per GPU (nics_per_node = gpus_per_node)");
  if (c.network.nics_per_node > c.gpus_per_node)
    r.child("network", "").fail_at("nics_per_node", "more NICs than GPUs in a node is not supported");
  if (c.gpus_per_node % c.network.nics_per_node != 0)
    r.child("network", "").fail_at("nics_per_node", "nics_per_node must divide gpus_per_node");
  c.gpus = c.nodes * c.gpus_per_node;
}

void read_queue(ObjectReader& r, QueueParams& q)
{
  r.field("name", q.name, "queue name (jobs name their queue in rumen and jhist traces)")
      .field("capacity", q.capacity, "share of the cluster's containers guaranteed to this queue");
  require_positive(r, "capacity", q.capacity);
}

void read_mapreduce(ObjectReader r, MapReduceParams& m, bool selected)
{
  ObjectReader t = r.child("trace", "replay jobs from a trace (SWIM TSV, Hadoop rumen JSON or MRv2 .jhist)");
  t.choice("format", m.trace.format, {"swim", "rumen", "jhist"}, "trace format")
      .field("file", m.trace.file, "trace file, relative to the scenario")
      .field("start", m.trace.start, "replay jobs submitted from this time on")
      .field("duration", m.trace.duration, "replay this long a window (0 = to the end)")
      .field("scale", m.trace.scale, "multiplies every byte count (SWIM: your cluster size / the trace's)")
      .field("max_jobs", m.trace.max_jobs, "replay at most this many jobs (0 = all)");
  t.finish();
  require_non_negative(t, "start", m.trace.start.value);
  require_non_negative(t, "duration", m.trace.duration.value);
  require_positive(t, "scale", m.trace.scale);
  require_non_negative(t, "max_jobs", m.trace.max_jobs);
  ObjectReader g = r.child("synthetic", "generate jobs: Poisson arrivals, log-uniform input sizes");
  g.field("jobs", m.synthetic.jobs, "number of jobs (0 = none; then a trace is needed)")
      .field("mean_interarrival", m.synthetic.mean_interarrival, "mean time between submissions")
      .field("min_input", m.synthetic.min_input, "smallest job input")
      .field("max_input", m.synthetic.max_input, "largest job input")
      .field("shuffle_ratio", m.synthetic.shuffle_ratio, "shuffle bytes / input bytes")
      .field("output_ratio", m.synthetic.output_ratio, "output bytes / shuffle bytes");
  g.finish();
  require_non_negative(g, "jobs", m.synthetic.jobs);
  require_positive(g, "mean_interarrival", m.synthetic.mean_interarrival.value);
  require_positive(g, "min_input", m.synthetic.min_input.value);
  require_positive(g, "max_input", m.synthetic.max_input.value);
  require_non_negative(g, "shuffle_ratio", m.synthetic.shuffle_ratio);
  require_non_negative(g, "output_ratio", m.synthetic.output_ratio);
  if (!g.describing() && m.synthetic.min_input.value > m.synthetic.max_input.value)
    g.fail_at("min_input", "min_input is larger than max_input");
  r.field("block_size", m.block_size, "HDFS block size: one map per block")
      .field("replication", m.replication, "HDFS replicas per block")
      .field("writer_racks", m.writer_racks,
             "0: input written from outside the cluster (first replica on a random host); k: each dataset was "
             "written from the hosts of k racks (HDFS puts the first replica on the writer)")
      .field("containers_per_host", m.containers_per_host, "YARN containers per host (0 = its cores)")
      .field("reduce_bytes_per_task", m.reduce_bytes_per_task, "shuffle bytes per reducer when a trace gives no count")
      .field("max_reduces", m.max_reduces, "most reducers per job when derived (Hive's default 999)")
      .field("slowstart", m.slowstart, "share of maps done before reducers start (Hadoop's default 0.05)")
      .field("reduce_rampup_limit", m.reduce_rampup_limit,
             "share of a job's containers reducers may hold while maps are pending")
      .field("heartbeat", m.heartbeat, "node heartbeat interval: one scheduling round per heartbeat")
      .field("parallel_copies", m.parallel_copies, "concurrent shuffle fetches per reducer")
      .field("map_rate", m.map_rate, "bytes/s a map container processes")
      .field("reduce_rate", m.reduce_rate, "bytes/s a reduce container processes")
      .field("speculative", m.speculative, "speculative execution of slow maps")
      .field("speculative_slowdown", m.speculative_slowdown,
             "a map running this many times longer than its job's mean map gets a speculative copy")
      .field("slow_host_fraction", m.slow_host_fraction, "share of hosts that compute slowly (stragglers)")
      .field("slow_host_factor", m.slow_host_factor, "how many times slower those hosts compute")
      .field("level_costs", m.level_costs, "traffic cost per byte by level: same host, rack, pod, core")
      .field("node_locality_delay", m.node_locality_delay,
             "capacity: missed scheduling opportunities before rack-local (-1 = number of hosts)")
      .field("rack_locality_additional_delay", m.rack_locality_additional_delay,
             "capacity: further misses before off-rack (-1 = L*C/N)")
      .list<QueueParams>("queues", m.queues, "capacity scheduler queues", read_queue)
      .field("middleboxes", m.middleboxes,
             "switches (e.g. agg0, core) every inter-rack flow must traverse, in order: the network policy PAT "
             "optimises and `communication_cost` measures");
  r.finish();
  require_positive(r, "block_size", m.block_size.value);
  require_positive(r, "replication", m.replication);
  require_non_negative(r, "writer_racks", m.writer_racks);
  require_non_negative(r, "containers_per_host", m.containers_per_host);
  require_positive(r, "reduce_bytes_per_task", m.reduce_bytes_per_task.value);
  require_positive(r, "max_reduces", m.max_reduces);
  require_positive(r, "heartbeat", m.heartbeat.value);
  require_positive(r, "parallel_copies", m.parallel_copies);
  require_positive(r, "map_rate", m.map_rate.value);
  require_positive(r, "reduce_rate", m.reduce_rate.value);
  if (r.describing())
    return;
  if (m.slowstart < 0 || m.slowstart > 1)
    r.fail_at("slowstart", "slowstart must be between 0 and 1");
  if (!(m.reduce_rampup_limit > 0) || m.reduce_rampup_limit > 1)
    r.fail_at("reduce_rampup_limit", "reduce_rampup_limit must be in (0, 1]");
  if (!(m.speculative_slowdown > 1))
    r.fail_at("speculative_slowdown", "speculative_slowdown must be greater than 1");
  if (m.slow_host_fraction < 0 || m.slow_host_fraction > 1)
    r.fail_at("slow_host_fraction", "slow_host_fraction must be between 0 and 1");
  if (!(m.slow_host_factor >= 1))
    r.fail_at("slow_host_factor", "slow_host_factor must be at least 1");
  if (m.level_costs.size() != 4)
    r.fail_at("level_costs", "level_costs needs 4 numbers: same host, rack, pod, core");
  for (std::size_t i = 0; i < 4; ++i)
    if (m.level_costs[i] < 0 || (i > 0 && m.level_costs[i] < m.level_costs[i - 1]))
      r.fail_at("level_costs", "level_costs must be non-negative and non-decreasing");
  if (m.node_locality_delay < -1)
    r.fail_at("node_locality_delay", "node_locality_delay must be -1 or more");
  if (m.rack_locality_additional_delay < -1)
    r.fail_at("rack_locality_additional_delay", "rack_locality_additional_delay must be -1 or more");
  if (m.queues.empty())
    r.fail_at("queues", "at least one queue is needed");
  if (selected && m.synthetic.jobs == 0 && m.trace.file.empty())
    r.fail_at("synthetic", "a mapreduce workload needs jobs: set synthetic.jobs or trace.file");
  if (m.synthetic.jobs > 0 && !m.trace.file.empty())
    r.fail_at("synthetic", "give either synthetic jobs or a trace, not both");
}

} // namespace

const std::map<std::string, ModelParams>& model_presets()
{
  // Megatron-LM (Narayanan et al., SC'21) Table 1: seq 2048, vocab 51,200, fp16, full recomputation, attention
  // through memory (2021). BERT-large (Devlin et al., 2019): 24 layers, 1024 hidden, 16 heads, seq 512, vocab 30,522.
  static const std::map<std::string, ModelParams> presets = [] {
    auto gpt = [](int layers, int hidden, int heads) {
      ModelParams m;
      m.layers = layers;
      m.hidden = hidden;
      m.ffn = 4 * hidden;
      m.heads = heads;
      m.seq = 2048;
      m.vocab = 51200;
      m.dtype = "fp16";
      m.recompute = "full";
      m.attention = "materialized";
      return m;
    };
    std::map<std::string, ModelParams> p;
    p["gpt-1.7b"] = gpt(24, 2304, 24);
    p["gpt-7.5b"] = gpt(36, 4096, 32);
    p["gpt-39.1b"] = gpt(48, 8192, 64);
    p["gpt-145.6b"] = gpt(80, 12288, 96);
    p["gpt-529.6b"] = gpt(105, 20480, 128);
    ModelParams bert;
    bert.layers = 24;
    bert.hidden = 1024;
    bert.ffn = 4096;
    bert.heads = 16;
    bert.seq = 512;
    bert.vocab = 30522;
    bert.dtype = "fp16";
    bert.recompute = "none";
    bert.attention = "materialized";
    p["bert-large"] = bert;
    // Llama 2 (Touvron et al., 2023, Table 1 and section 2.2): SwiGLU, RMSNorm, untied embeddings, 4,096-token
    // context, 32,000-token vocabulary; the 70B model uses grouped-query attention with 8 key/value heads.
    auto llama = [](int layers, int hidden, int ffn, int heads, int kv_heads) {
      ModelParams m;
      m.layers = layers;
      m.hidden = hidden;
      m.ffn = ffn;
      m.heads = heads;
      m.kv_heads = kv_heads;
      m.seq = 4096;
      m.vocab = 32000;
      m.dtype = "bf16";
      m.recompute = "selective";
      m.attention = "flash";
      m.mlp = "swiglu";
      m.norm = "rmsnorm";
      m.tie_embeddings = false;
      return m;
    };
    p["llama2-7b"] = llama(32, 4096, 11008, 32, 32);
    p["llama2-70b"] = llama(80, 8192, 28672, 64, 8);
    return p;
  }();
  return presets;
}

namespace {

void read_workload(ObjectReader r, WorkloadParams& w)
{
  // A layer of a generic graph; names are unique and inputs refer to layers above it (so file order is a
  // topological order).
  auto read_layer = [&w](ObjectReader& l, GraphLayerParams& layer) {
    l.required("name", layer.name, "layer name (unique)")
        .field("flops", layer.flops, "forward FLOPs per sample")
        .field("bytes", layer.bytes, "forward memory traffic per sample")
        .field("params", layer.params, "parameters")
        .field("activations", layer.activations, "output per sample: sent to the layers it feeds, kept for backward")
        .field("inputs", layer.inputs, "names of earlier layers it reads (none: the model's input)");
    if (l.describing())
      return;
    require_non_negative(l, "flops", layer.flops);
    require_non_negative(l, "bytes", layer.bytes.value);
    require_non_negative(l, "params", layer.params);
    require_non_negative(l, "activations", layer.activations.value);
    if (!(layer.flops > 0) && !(layer.bytes.value > 0))
      l.fail_at("flops", "layer '" + layer.name + "' needs flops or bytes");
    const auto& earlier = w.model.graph;
    for (const auto& other : earlier)
      if (other.name == layer.name)
        l.fail_at("name", "layer name '" + layer.name + "' is used twice");
    for (const auto& input : layer.inputs)
      if (std::none_of(earlier.begin(), earlier.end(), [&](const auto& e) { return e.name == input; }))
        l.fail_at("inputs", "input '" + input + "' of layer '" + layer.name + "' is not a layer defined above it");
  };
  r.choice("kind", w.kind, {"transformer-training", "collective", "mapreduce"},
           "what runs: transformer-training, collective (an nccl-tests-like sweep) or mapreduce (jobs on a CPU "
           "cluster)");
  read_mapreduce(r.child("mapreduce", "workload.kind mapreduce: jobs, HDFS, YARN and shuffle settings"), w.mapreduce,
                 w.kind == "mapreduce");
  ObjectReader col = r.child("collective", "workload.kind collective: the operation and the sizes to sweep");
  col.choice("op", w.collective.op, {"all-reduce", "reduce-scatter", "all-gather", "broadcast", "all-to-all", "p2p"},
             "operation (sizes as nccl-tests counts them)")
      .choice("algorithm", w.collective.algorithm, {"auto", "ring", "tree", "rhd", "nvls", "direct", "hierarchical", "p2p"},
              "algorithm; auto = the tuner's fastest by the closed forms")
      .field("min_bytes", w.collective.min_bytes, "smallest size (0 is valid: latency only)")
      .field("max_bytes", w.collective.max_bytes, "largest size")
      .field("factor", w.collective.factor, "size multiplier between rows")
      .field("ranks", w.collective.ranks, "GPUs taking part, from the first (0 = all)")
      .field("root", w.collective.root, "broadcast root rank")
      .choice("pricing", w.collective.pricing, {"auto", "closed-form", "flows"},
              "analytical backend: closed-form prices each size by the tuner's formula, flows list-schedules the "
              "step-wise transfers; auto = closed-form on an idle non-blocking fabric, else flows");
  col.finish();
  require_non_negative(col, "min_bytes", w.collective.min_bytes.value);
  require_positive(col, "max_bytes", w.collective.max_bytes.value);
  require_non_negative(col, "ranks", w.collective.ranks);
  require_non_negative(col, "root", w.collective.root);
  if (!col.describing() && !(w.collective.factor > 1))
    col.fail_at("factor", "factor must be greater than 1");
  if (!col.describing() && w.collective.min_bytes.value > w.collective.max_bytes.value)
    col.fail_at("min_bytes", "min_bytes is larger than max_bytes");
  ObjectReader m = r.child("model", "the dense transformer");
  std::vector<std::string> preset_names{""};
  for (const auto& [name, preset] : model_presets())
    preset_names.push_back(name);
  m.choice("preset", w.model.preset, preset_names,
           "start from a published configuration (Megatron-LM Table 1 GPTs, BERT-large, Llama 2 7B and 70B); keys "
           "given override it");
  if (!m.describing() && !w.model.preset.empty()) {
    const std::string name = w.model.preset;
    w.model = model_presets().at(name);
    w.model.preset = name;
  }
  m.field("layers", w.model.layers, "transformer layers")
      .field("hidden", w.model.hidden, "hidden size")
      .field("ffn", w.model.ffn, "feed-forward inner size (0 = 4 x hidden)")
      .field("heads", w.model.heads, "attention (query) heads")
      .field("kv_heads", w.model.kv_heads, "key/value heads (0 = heads; fewer = grouped-query attention)")
      .field("seq", w.model.seq, "sequence length in tokens")
      .field("vocab", w.model.vocab, "vocabulary size")
      .choice("dtype", w.model.dtype, {"fp32", "tf32", "fp16", "bf16", "fp8"}, "compute and storage type")
      .choice("recompute", w.model.recompute, {"none", "selective", "full"}, "activation recomputation")
      .choice("attention", w.model.attention, {"flash", "materialized"},
              "flash: fused attention, scores never reach memory; materialized: QK^T GEMM, softmax, dropout and PV GEMM "
              "through memory (Megatron-LM before FlashAttention)")
      .choice("mlp", w.model.mlp, {"gelu", "swiglu"},
              "feed-forward block: gelu (up GEMM, GeLU, down GEMM) or swiglu (fused gate and up GEMM, SiLU-gated "
              "product, down GEMM)")
      .choice("norm", w.model.norm, {"layernorm", "rmsnorm"}, "normalisation layers")
      .field("tie_embeddings", w.model.tie_embeddings, "the output layer shares the input embedding's weights")
      .list<GraphLayerParams>("graph", w.model.graph,
                              "a generic layer graph (layers with costs and inputs) that replaces the transformer; "
                              "branches run concurrently under policies.pipeline: graph-pipeline",
                              read_layer);
  m.finish();
  require_positive(m, "layers", w.model.layers);
  require_positive(m, "hidden", w.model.hidden);
  require_positive(m, "heads", w.model.heads);
  require_positive(m, "seq", w.model.seq);
  require_positive(m, "vocab", w.model.vocab);
  require_non_negative(m, "ffn", w.model.ffn);
  require_non_negative(m, "kv_heads", w.model.kv_heads);
  if (!m.describing() && w.model.heads % w.model.kv() != 0)
    m.fail_at("kv_heads", fmt::format("kv_heads ({}) must divide heads ({})", w.model.kv(), w.model.heads));
  if (!m.describing() && w.model.hidden % w.model.heads != 0)
    m.fail_at("heads", fmt::format("hidden ({}) must be divisible by heads ({})", w.model.hidden, w.model.heads));
  ObjectReader b = r.child("batch", "batch sizes in samples");
  b.field("global", w.batch.global, "samples per iteration over all data-parallel replicas")
      .field("micro", w.batch.micro, "samples per microbatch");
  b.finish();
  require_positive(b, "global", w.batch.global);
  require_positive(b, "micro", w.batch.micro);
  ObjectReader p = r.child("parallel", "how the model is split over GPUs");
  p.field("dp", w.parallel.dp, "data-parallel degree (0 = all GPUs / (tp x pp))")
      .field("tp", w.parallel.tp, "tensor-parallel degree")
      .field("pp", w.parallel.pp, "pipeline-parallel degree")
      .field("vpp", w.parallel.vpp, "virtual pipeline chunks per GPU (interleaved schedule)")
      .field("ep", w.parallel.ep, "expert-parallel degree")
      .field("sequence_parallel", w.parallel.sequence_parallel, "Megatron sequence parallelism")
      .field("zero", w.parallel.zero, "ZeRO stage 0-3")
      .choice("partition", w.parallel.partition, {"even", "balanced"},
              "pipeline stages: even (layers divide equally) or balanced (the output layer's stage takes fewer "
              "layers so the slowest stage is as fast as it can be)")
      .choice("placement", w.parallel.placement, {"tp-pp-dp", "tp-dp-pp"},
              "how ranks map to GPUs, innermost first: tp-pp-dp keeps a replica's pipeline stages together (data "
              "parallelism across nodes); tp-dp-pp keeps a stage's replicas together (pipeline across nodes)")
      .field("stage_layers", w.parallel.stage_layers,
             "layers of each virtual stage (pp x vpp entries, summing to the layers); overrides partition");
  p.finish();
  require_non_negative(p, "dp", w.parallel.dp);
  require_positive(p, "tp", w.parallel.tp);
  require_positive(p, "pp", w.parallel.pp);
  require_positive(p, "vpp", w.parallel.vpp);
  require_positive(p, "ep", w.parallel.ep);
  if (!p.describing() && (w.parallel.zero < 0 || w.parallel.zero > 3))
    p.fail_at("zero", "parallel.zero must be 0, 1, 2 or 3");
  r.field("iterations", w.iterations, "training iterations to simulate")
      .field("gradient_bucket", w.gradient_bucket, "gradient bucket size for data-parallel all-reduce");
  r.finish();
  require_positive(r, "iterations", w.iterations);
  require_positive(r, "gradient_bucket", w.gradient_bucket.value);
  if (!r.describing() && w.model.ffn == 0)
    w.model.ffn = 4 * w.model.hidden;
}

void read_policies(ObjectReader r, PolicyParams& p)
{
  r.field("pipeline", p.pipeline, "pipeline schedule (clustersim list policies)")
      .field("sync", p.sync, "gradient synchronisation")
      .field("moe", p.moe, "MoE expert/sample placement")
      .field("mapreduce", p.mapreduce, "MapReduce task scheduler")
      .field("spark_cache", p.spark_cache, "Spark cache eviction")
      .field("spark_provisioning", p.spark_provisioning, "Spark executor provisioning")
      .field("cluster", p.cluster, "cluster job scheduler");
  r.finish();
}

void read_scenario(ObjectReader& r, Scenario& s)
{
  r.required("name", s.name, "scenario name; also the default output folder out/<name>/")
      .field("description", s.description, "free text shown in the summary")
      .field("seed", s.seed, "seed of every random generator")
      .choice("backend", s.backend, {"simgrid", "analytical"},
              "simgrid = full flow-level contention; analytical = serialised list scheduling, much faster");
  require_non_negative(r, "seed", static_cast<double>(s.seed));
  read_cluster(r.child("cluster", "the machines and their network"), s.cluster);
  read_workload(r.child("workload", "what runs on the cluster"), s.workload);
  read_policies(r.child("policies", "policy names per domain"), s.policies);
  r.finish();
  if (!r.describing() && s.name.empty())
    r.fail_at("name", "name must not be empty");
  if (!r.describing() && s.name.find_first_of("/\\") != std::string::npos)
    r.fail_at("name", "name must not contain path separators");
}

// Splits "a.b.c=value" and writes value (parsed as YAML) at a.b.c, creating maps on the way.
void apply_override(YAML::Node root, const std::string& text, std::size_t index)
{
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", 1, static_cast<int>(index) + 1, "'" + text + "': expected key.path=value");
  std::string path = text.substr(0, eq);
  std::string value_text = text.substr(eq + 1);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    if (k.empty())
      throw InputError("--set", 1, static_cast<int>(index) + 1, "'" + text + "': empty key in path");
    keys.push_back(k);
  }
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::Exception& e) {
    throw InputError("--set", 1, static_cast<int>(index) + 1, "'" + text + "': " + e.msg);
  }
  if (value.IsNull())
    value = YAML::Node(value_text);
  value.SetTag("!cs-set-" + std::to_string(index)); // errors about this value point at its --set
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (next.IsDefined() && !next.IsMap())
      throw InputError("--set", 1, static_cast<int>(index) + 1,
                       "'" + text + "': '" + keys[i] + "' is not a map, cannot set a key inside it");
    if (!next.IsDefined()) {
      chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[keys[i]];
    }
    chain.push_back(next);
  }
  chain.back()[keys.back()] = value;
}

} // namespace

Scenario parse_scenario(YAML::Node root, std::shared_ptr<const SourceInfo> source)
{
  Scenario s;
  s.file = source->file;
  s.overrides = source->overrides;
  if (!root.IsMap())
    throw InputError(source->file, 1, 1, "a scenario must be a YAML map with at least 'name:'");
  ObjectReader r(root, source, "");
  read_scenario(r, s);
  s.resolved = root;
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides)
{
  std::ifstream in(path);
  if (!in)
    throw InputError(path, 0, 0, "cannot open scenario file");
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, "YAML syntax error: " + e.msg);
  }
  auto source = std::make_shared<SourceInfo>();
  source->file = path;
  source->overrides = overrides;
  if (!root.IsMap() && !overrides.empty())
    throw InputError(path, 1, 1, "a scenario must be a YAML map with at least 'name:'");
  for (std::size_t i = 0; i < overrides.size(); ++i)
    apply_override(root, overrides[i], i);
  return parse_scenario(root, source);
}

std::vector<FieldDoc> describe_scenario_keys()
{
  std::vector<FieldDoc> docs;
  Scenario s;
  ObjectReader r(&docs, "");
  read_scenario(r, s);
  return docs;
}

} // namespace cs
