#include "models/cost/device_profile.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/json_input.hpp"

#include <nlohmann/json.hpp>

namespace cs {

extern const std::vector<std::pair<std::string, std::string>>& builtin_profile_texts();

double DeviceProfile::efficiency(const std::string& dtype) const
{
  auto it = compute_efficiency.find(dtype);
  if (it != compute_efficiency.end())
    return it->second;
  it = compute_efficiency.find("default");
  return it == compute_efficiency.end() ? 1.0 : it->second;
}

double DeviceProfile::scaling_rate(const std::string& scaling) const
{
  if (scaling.empty())
    return 1.0;
  auto it = gemm_scaling_rate.find(scaling);
  return it == gemm_scaling_rate.end() ? 1.0 : it->second;
}

double AttentionEfficiency::share(bool backward_pass, bool causal, double seq_kv, double head_dim, double scale) const
{
  double efficiency = backward_pass ? backward : forward;
  double half = backward_pass ? backward_half_seq : forward_half_seq;
  if (causal) {
    efficiency *= causal_scale;
    half *= causal_half_seq_scale;
  }
  efficiency *= scale * head_dim_factor(head_dim, head_dim_half);
  return std::min(1.0, efficiency * seq_kv / (seq_kv + half));
}

double head_dim_factor(double head_dim, double half)
{
  if (half <= 0 || head_dim <= 0) // normalised so that head size 128, where curves are published, is 1
    return 1.0;
  return std::min(1.0, (head_dim / (head_dim + half)) / (128.0 / (128.0 + half)));
}

double DeviceProfile::memory_efficiency_for(const std::string& key) const
{
  auto it = memory_efficiency_by_kernel.find(key);
  return it == memory_efficiency_by_kernel.end() ? memory_efficiency : it->second;
}

namespace {

// An achieved share of a peak: positive and at most 1 (a profile faster than its device is a wrong profile).
double share(JsonReader& r, const char* key)
{
  const double v = r.positive(key);
  if (v > 1)
    r.item(r.at(key), key).fail(fmt::format("must be at most 1 (a share of the catalog's peak), got {}", v));
  return v;
}

// An attention curve: {forward: {efficiency, half_seq}, backward: {...}, causal: {efficiency_scale, half_seq_scale},
// head_dim_half}.
AttentionEfficiency parse_attention_curve(JsonReader& a)
{
  AttentionEfficiency e;
  auto pair = [&](const char* key, double& efficiency, double& half) {
    JsonReader x = a.child(key);
    efficiency = x.positive("efficiency");
    half = x.number("half_seq");
    if (efficiency > 1 || half < 0)
      x.fail("efficiency must be in (0, 1] and half_seq not negative");
  };
  pair("forward", e.forward, e.forward_half_seq);
  pair("backward", e.backward, e.backward_half_seq);
  if (a.has("causal")) {
    JsonReader c = a.child("causal");
    e.causal_scale = c.positive("efficiency_scale");
    e.causal_half_seq_scale = c.positive("half_seq_scale");
  }
  if (a.has("head_dim_half")) {
    e.head_dim_half = a.number("head_dim_half");
    if (e.head_dim_half < 0)
      a.item(a.at("head_dim_half"), "head_dim_half").fail("must not be negative");
  }
  return e;
}

// The FlashAttention-2 curve, and cuDNN's under attention.cudnn when it was measured.
void parse_attention(JsonReader& r, DeviceProfile& p)
{
  JsonReader a = r.child("attention");
  p.attention = parse_attention_curve(a);
  if (a.has("cudnn")) {
    JsonReader c = a.child("cudnn");
    p.attention_cudnn = parse_attention_curve(c);
  }
  if (a.has("cudnn_head_dim_half")) {
    p.attention_cudnn_head_dim_half = a.number("cudnn_head_dim_half");
    if (p.attention_cudnn_head_dim_half < 0)
      a.item(a.at("cudnn_head_dim_half"), "cudnn_head_dim_half").fail("must not be negative");
  }
}

nlohmann::ordered_json attention_curve_json(const AttentionEfficiency& a)
{
  nlohmann::ordered_json j;
  j["forward"] = {{"efficiency", a.forward}, {"half_seq", a.forward_half_seq}};
  j["backward"] = {{"efficiency", a.backward}, {"half_seq", a.backward_half_seq}};
  j["causal"] = {{"efficiency_scale", a.causal_scale}, {"half_seq_scale", a.causal_half_seq_scale}};
  if (a.head_dim_half > 0)
    j["head_dim_half"] = a.head_dim_half;
  return j;
}

// GEMM tiles and how a tile's main loop is priced.
void parse_gemm(JsonReader& r, DeviceProfile& p)
{
  JsonReader g = r.child("gemm");
  p.ctas_per_sm = g.integer("ctas_per_sm", 1, 64);
  if (g.has("k_overhead")) {
    p.gemm_k_overhead = g.number("k_overhead");
    if (p.gemm_k_overhead < 0 || p.gemm_k_overhead > 1e6)
      g.item(g.at("k_overhead"), "k_overhead").fail("must be in [0, 1e6] (elements of K)");
  }
  if (g.has("overlap")) {
    p.gemm_overlap = g.number("overlap");
    if (p.gemm_overlap < 0 || p.gemm_overlap > 1)
      g.item(g.at("overlap"), "overlap").fail("must be in [0, 1]");
  }
  if (g.has("scaling_rate"))
    for (const auto& [key, v] : g.at("scaling_rate").items()) {
      JsonReader rates = g.child("scaling_rate");
      p.gemm_scaling_rate[key] = share(rates, key.c_str());
    }
  const auto& tiles = g.at("tiles");
  if (!tiles.is_array() || tiles.empty()) // an empty list once left the wave model silently without tiles
    g.item(tiles, "tiles").fail("expected a non-empty list of {m, n, efficiency}");
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    JsonReader t = g.item(tiles[i], "tiles/" + std::to_string(i));
    p.gemm_tiles.push_back(GemmTile{t.integer("m", 1, 1024), t.integer("n", 1, 1024), share(t, "efficiency"),
                                    t.has("dtype") ? t.string("dtype") : ""});
  }
}

// Profiled tables: per kernel family and dtype, measured times over shapes.
void parse_tables(JsonReader& r, DeviceProfile& p)
{
  const auto& tables = r.at("tables");
  if (!tables.is_array())
    r.item(tables, "tables").fail("expected a list");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    JsonReader t = r.item(tables[i], "tables/" + std::to_string(i));
    ProfileTable table{t.string("family"), t.string("dtype"), {}, {}};
    const auto& points = t.at("points");
    if (!points.is_array() || points.empty())
      t.item(points, "points").fail("expected a non-empty list of {shape, seconds}");
    for (std::size_t k = 0; k < points.size(); ++k) {
      JsonReader pt = t.item(points[k], "points/" + std::to_string(k));
      const auto& shape = pt.at("shape");
      if (!shape.is_array() || shape.empty() || shape.size() > 4)
        pt.item(shape, "shape").fail("expected a list of 1 to 4 positive numbers");
      if (!table.shapes.empty() && shape.size() != table.shapes.front().size())
        pt.item(shape, "shape")
            .fail(fmt::format("every point of a table has the same dimensions ({} here, {} in the "
                              "first point)",
                              shape.size(), table.shapes.front().size()));
      std::vector<double> dims;
      for (const auto& d : shape) {
        if (!d.is_number() || !(d.get<double>() > 0) || d.get<double>() > 1e15)
          pt.item(shape, "shape").fail("expected a list of positive numbers");
        dims.push_back(d.get<double>());
      }
      table.shapes.push_back(dims);
      table.seconds.push_back(pt.positive("seconds"));
      if (table.seconds.back() > 86400)
        pt.item(pt.at("seconds"), "seconds").fail("a kernel of more than a day");
    }
    p.tables.push_back(std::move(table));
  }
}

} // namespace

DeviceProfile parse_profile(const std::string& text, const std::string& file)
{
  nlohmann::json j = parse_json_input(text, file);
  JsonReader r(j, file, "", &text);
  DeviceProfile p;
  if (r.string("schema") != DeviceProfile::kSchema)
    r.item(r.at("schema"), "schema").fail(std::string("unsupported schema, expected ") + DeviceProfile::kSchema);
  p.device = r.string("device");
  p.origin = r.string("origin");
  p.launch_overhead = r.number("launch_overhead_s");
  if (p.launch_overhead < 0 || p.launch_overhead > 1)
    r.item(r.at("launch_overhead_s"), "launch_overhead_s").fail("must be in [0, 1] s");
  p.memory_efficiency = share(r, "memory_efficiency");
  JsonReader ce = r.child("compute_efficiency");
  if (!ce.json().is_object() || ce.json().empty())
    ce.fail("expected an object of dtype: efficiency");
  for (const auto& [dtype, v] : ce.json().items())
    p.compute_efficiency[dtype] = share(ce, dtype.c_str());
  if (r.has("memory_efficiency_by_kernel"))
    for (const auto& [key, v] : r.at("memory_efficiency_by_kernel").items()) {
      JsonReader by_kernel = r.child("memory_efficiency_by_kernel");
      p.memory_efficiency_by_kernel[key] = share(by_kernel, key.c_str());
    }
  if (r.has("memory_half_bytes")) {
    p.memory_half_bytes = r.number("memory_half_bytes");
    if (p.memory_half_bytes < 0 || p.memory_half_bytes > 1e12) // past any GPU's memory: a size no kernel reaches
      r.item(r.at("memory_half_bytes"), "memory_half_bytes").fail("must be in [0, 1e12] bytes");
  }
  if (r.has("attention"))
    parse_attention(r, p);
  if (r.has("gemm"))
    parse_gemm(r, p);
  if (r.has("copy_bandwidth"))
    for (const auto& [dir, v] : r.at("copy_bandwidth").items()) {
      JsonReader copies = r.child("copy_bandwidth");
      p.copy_bandwidth[dir] = copies.positive(dir.c_str());
      if (p.copy_bandwidth[dir] > 1e14)
        copies.item(copies.at(dir.c_str()), dir).fail("at most 1e14 B/s");
    }
  if (r.has("tables"))
    parse_tables(r, p);
  if (r.has("sources"))
    for (const auto& [k, v] : r.at("sources").items())
      p.sources[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return p;
}

DeviceProfile load_profile(const std::string& path)
{
  return parse_profile(read_text_file(path, "device profile"), path);
}

std::string profile_to_json(const DeviceProfile& p)
{
  nlohmann::ordered_json j;
  j["schema"] = DeviceProfile::kSchema;
  j["device"] = p.device;
  j["origin"] = p.origin;
  j["launch_overhead_s"] = p.launch_overhead;
  j["memory_efficiency"] = p.memory_efficiency;
  for (const auto& [k, v] : p.memory_efficiency_by_kernel)
    j["memory_efficiency_by_kernel"][k] = v;
  j["compute_efficiency"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : p.compute_efficiency)
    j["compute_efficiency"][k] = v;
  if (p.memory_half_bytes > 0)
    j["memory_half_bytes"] = p.memory_half_bytes;
  if (p.attention.forward > 0) {
    j["attention"] = attention_curve_json(p.attention);
    if (p.attention_cudnn.forward > 0)
      j["attention"]["cudnn"] = attention_curve_json(p.attention_cudnn);
    if (p.attention_cudnn_head_dim_half > 0)
      j["attention"]["cudnn_head_dim_half"] = p.attention_cudnn_head_dim_half;
  }
  if (!p.gemm_tiles.empty()) {
    j["gemm"]["ctas_per_sm"] = p.ctas_per_sm;
    if (p.gemm_k_overhead > 0)
      j["gemm"]["k_overhead"] = p.gemm_k_overhead;
    if (p.gemm_overlap < 1)
      j["gemm"]["overlap"] = p.gemm_overlap;
    for (const auto& [key, v] : p.gemm_scaling_rate)
      j["gemm"]["scaling_rate"][key] = v;
    for (const auto& t : p.gemm_tiles) {
      nlohmann::ordered_json tile{{"m", t.m}, {"n", t.n}, {"efficiency", t.efficiency}};
      if (!t.dtype.empty())
        tile["dtype"] = t.dtype;
      j["gemm"]["tiles"].push_back(tile);
    }
  }
  for (const auto& [k, v] : p.copy_bandwidth)
    j["copy_bandwidth"][k] = v;
  for (const auto& t : p.tables) {
    nlohmann::ordered_json table{{"family", t.family}, {"dtype", t.dtype}, {"points", nlohmann::ordered_json::array()}};
    for (std::size_t i = 0; i < t.shapes.size(); ++i)
      table["points"].push_back({{"shape", t.shapes[i]}, {"seconds", t.seconds[i]}});
    j["tables"].push_back(table);
  }
  for (const auto& [k, v] : p.sources)
    j["sources"][k] = v;
  return j.dump(2) + "\n";
}

const DeviceProfile* builtin_profile(const std::string& device)
{
  static const std::map<std::string, DeviceProfile> profiles = [] {
    std::map<std::string, DeviceProfile> out;
    for (const auto& [file, text] : builtin_profile_texts()) {
      DeviceProfile p = parse_profile(text, "calibrate/profiles/" + file);
      out[p.device] = std::move(p);
    }
    return out;
  }();
  auto it = profiles.find(device);
  return it == profiles.end() ? nullptr : &it->second;
}

} // namespace cs
