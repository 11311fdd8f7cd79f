#include "platform/stragglers.hpp"
#include "base/splitmix.hpp"

#include "base/input_error.hpp"
#include "base/input_file.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>

namespace cs {

namespace {

void read_slow(ObjectReader& r, SlowDevices& s)
{
  r.field("devices", s.devices, "device indices (GPU ranks, or CPU hosts) that run at `factor`")
      .field("nodes", s.nodes, "or every device of these nodes (GPU clusters) or these hosts (CPU clusters)")
      .field("factor", s.factor, "relative speed: 0.6 for an older GPU generation, 0.25 for a fail-slow GPU");
  if (r.describing())
    return;
  if (s.devices.empty() && s.nodes.empty())
    r.fail(r.node(), "a slow entry needs 'devices' or 'nodes'");
  if (!(s.factor > 0) || !std::isfinite(s.factor))
    r.fail_at("factor", "factor (relative speed) must be greater than 0");
  r.require_at_most("factor", s.factor, 1000);
  for (int d : s.devices)
    r.require(d >= 0, "devices", "device indices start at 0");
  for (int n : s.nodes)
    r.require(n >= 0, "nodes", "node indices start at 0");
}

double parse_number(const std::string& path, int row, int column, const std::string& text, const char* what)
{
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (text.find_first_not_of(" \t\r", used) != std::string::npos || !std::isfinite(v))
      throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw InputError(path, row, column, std::string("expected a number for ") + what + ", got '" + text + "'");
  }
}

// Each device's speed under a relative spread: the n devices take the n expected order statistics of a normal of
// mean 1 and standard deviation `spread` (Blom's approximation), placed by a seeded permutation. The slowest device of
// n is then as slow as the expected slowest of n draws whatever the seed; only where it sits changes.
std::vector<double> spread_speeds(int n, double spread, std::uint64_t seed)
{
  std::vector<double> out(static_cast<std::size_t>(n), 1.0);
  if (spread <= 0 || n <= 1)
    return out;
  std::vector<std::pair<std::uint64_t, int>> keys;
  for (int d = 0; d < n; ++d)
    keys.emplace_back(splitmix64(seed ^ splitmix64(0x5eedull + static_cast<std::uint64_t>(d))), d);
  std::sort(keys.begin(), keys.end());
  const boost::math::normal_distribution<double> unit;
  for (int rank = 0; rank < n; ++rank) {
    const double z = boost::math::quantile(unit, (rank + 1 - 0.375) / (n + 0.25));
    out[static_cast<std::size_t>(keys[static_cast<std::size_t>(rank)].second)] = 1 + spread * z;
  }
  return out;
}

} // namespace

void read_stragglers(ObjectReader& r, StragglerParams& s)
{
  r.list<SlowDevices>("slow", s.slow, "devices slower (or faster) than the catalog's: mixed generations, fail-slow",
                      read_slow);
  ObjectReader random = r.child("random", "random slowdowns: before each step a device sleeps with a probability");
  random.field("probability", s.random.probability, "chance of a slowdown before each step, in [0, 1]")
      .field("duration", s.random.duration, "its length (fixed), mean (exponential) or half-range (uniform)")
      .choice("distribution", s.random.distribution,
              {{"fixed", SlowdownDistribution::FIXED},
               {"exponential", SlowdownDistribution::EXPONENTIAL},
               {"uniform", SlowdownDistribution::UNIFORM}},
              "how slowdown lengths are drawn");
  random.finish();
  r.field("spread", s.spread,
          "relative standard deviation of each device's sustained speed (0.015: identical GPUs, Sinha et al. SC'22)");
  r.field("step_times", s.step_times,
          "CSV of recorded step times 'worker,step,seconds' (relative to the scenario) replayed per worker");
  if (r.describing())
    return;
  if (!(s.random.probability >= 0 && s.random.probability <= 1))
    random.fail_at("probability", "probability must be in [0, 1]");
  random.require_non_negative("duration", s.random.duration.value);
  r.require_non_negative("spread", s.spread);
  // At 0.1 the slowest of a million devices (4.9 standard deviations) still runs at half speed.
  r.require_at_most("spread", s.spread, 0.1);
}

StepTimeTrace read_step_time_trace(const std::string& path)
{
  std::ifstream in = open_input_file(path, "step-time trace");
  StepTimeTrace trace;
  std::string line;
  int row = 0;
  constexpr long long kMaxRows = 50'000'000;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (row == 1 && line.find_first_of("0123456789") == std::string::npos)
      continue; // header
    const auto c1 = line.find(',');
    const auto c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
    if (c2 == std::string::npos)
      throw InputError(path, row, 1, "expected 'worker,step,seconds'");
    const double worker = parse_number(path, row, 1, line.substr(0, c1), "worker");
    const double step = parse_number(path, row, static_cast<int>(c1) + 2, line.substr(c1 + 1, c2 - c1 - 1), "step");
    const double seconds = parse_number(path, row, static_cast<int>(c2) + 2, line.substr(c2 + 1), "seconds");
    if (worker < 0 || worker > (1 << 20) || worker != std::floor(worker))
      throw InputError(path, row, 1, "worker must be a whole number from 0 to 1048576");
    if (seconds < 0 || seconds > 1e9)
      throw InputError(path, row, static_cast<int>(c2) + 2, "seconds must be in [0, 1e9]");
    auto& steps = trace.steps[static_cast<int>(worker)];
    if (step != static_cast<double>(steps.size()))
      throw InputError(path, row, static_cast<int>(c1) + 2,
                       "worker " + std::to_string(static_cast<int>(worker)) +
                           "'s steps must run 0, 1, 2, ... in order "
                           "(expected step " +
                           std::to_string(steps.size()) + ")");
    if (row > kMaxRows)
      throw InputError(path, row, 1, "more than 50,000,000 rows");
    steps.push_back(seconds);
  }
  if (trace.steps.empty())
    throw InputError(path, std::max(row, 1), 1, "no rows");
  return trace;
}

StragglerModel::StragglerModel(const StragglerParams& params, int devices, int devices_per_node, std::uint64_t seed,
                               StepTimeTrace trace)
    : speed_(static_cast<std::size_t>(std::max(devices, 0)), 1.0), random_(params.random), seed_(seed),
      trace_(std::move(trace))
{
  for (const auto& s : params.slow) { // a later entry overrides an earlier one
    for (int d : s.devices)
      if (d < devices)
        speed_[d] = s.factor;
    for (int n : s.nodes)
      for (int d = n * devices_per_node; d < (n + 1) * devices_per_node && d < devices; ++d)
        speed_[d] = s.factor;
  }
  slow_devices_ = static_cast<int>(std::count_if(speed_.begin(), speed_.end(), [](double v) { return v < 1.0; }));
  const std::vector<double> spread = spread_speeds(std::max(devices, 0), params.spread, seed);
  for (std::size_t d = 0; d < speed_.size(); ++d)
    speed_[d] *= spread[d];
}

double StragglerModel::speed(int device) const
{
  return device >= 0 && device < static_cast<int>(speed_.size()) ? speed_[device] : 1.0;
}

double StragglerModel::delay(int device, long long step) const
{
  if (device < 0 || device >= static_cast<int>(delay_group_.size()) || delay_group_[device] < 0)
    return own_delay(device, step);
  double longest = 0;
  for (int member : delay_groups_[static_cast<std::size_t>(delay_group_[device])])
    longest = std::max(longest, own_delay(member, step));
  return longest;
}

double StragglerModel::own_delay(int device, long long step) const
{
  if (random_.probability <= 0 || random_.duration.value <= 0)
    return 0;
  // Counter-based draws (two mixes of seed, device and step): cheap, and independent of the order actors ask in.
  const std::uint64_t key = splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(device) * 0x100000001b3ull ^
                                                          splitmix64(static_cast<std::uint64_t>(step))));
  auto unit = [](std::uint64_t x) { return double(x >> 11) * 0x1.0p-53; }; // in [0, 1)
  if (unit(key) >= random_.probability)
    return 0;
  const double d = random_.duration.value, u = unit(splitmix64(key));
  if (random_.distribution == SlowdownDistribution::EXPONENTIAL)
    return -d * std::log1p(-u);
  if (random_.distribution == SlowdownDistribution::UNIFORM)
    return 2 * d * u;
  return d;
}

double StragglerModel::step_seconds(int device, long long step, double base) const
{
  if (auto it = trace_.steps.find(device); it != trace_.steps.end())
    return it->second[static_cast<std::size_t>(step % static_cast<long long>(it->second.size()))];
  return base / speed(device) + delay(device, step);
}

bool StragglerModel::any() const
{
  return (random_.probability > 0 && random_.duration.value > 0) || !trace_.steps.empty() ||
         std::any_of(speed_.begin(), speed_.end(), [](double s) { return s != 1.0; });
}

StragglerModel StragglerModel::slowest_in_groups(int size) const
{
  std::vector<std::vector<int>> groups;
  for (int d = 0; size > 1 && d < static_cast<int>(speed_.size()); ++d) {
    if (d % size == 0)
      groups.emplace_back();
    groups.back().push_back(d);
  }
  return slowest_of(groups);
}

StragglerModel StragglerModel::slowest_of(const std::vector<std::vector<int>>& groups) const
{
  StragglerModel out = *this;
  const int n = static_cast<int>(speed_.size());
  for (const auto& group : groups) {
    double slowest = INFINITY;
    for (int d : group)
      if (d >= 0 && d < n)
        slowest = std::min(slowest, speed_[static_cast<std::size_t>(d)]);
    for (int d : group)
      if (d >= 0 && d < n)
        out.speed_[static_cast<std::size_t>(d)] = slowest;
  }
  return out;
}

double StragglerModel::slowest() const
{
  return speed_.empty() ? 1.0 : *std::min_element(speed_.begin(), speed_.end());
}

int StragglerModel::slow_devices() const { return slow_devices_; }

StragglerModel StragglerModel::slowest_and_latest_of(const std::vector<std::vector<int>>& groups) const
{
  StragglerModel out = slowest_of(groups);
  if (random_.probability <= 0 || random_.duration.value <= 0)
    return out; // no slowdowns to fold: keep the model small on 100,000-GPU runs
  const int n = static_cast<int>(speed_.size());
  out.delay_group_.assign(static_cast<std::size_t>(n), -1);
  out.delay_groups_.clear();
  for (const auto& group : groups) {
    std::vector<int> members;
    for (int d : group)
      if (d >= 0 && d < n)
        members.push_back(d);
    if (members.size() < 2)
      continue;
    for (int d : members)
      out.delay_group_[static_cast<std::size_t>(d)] = static_cast<int>(out.delay_groups_.size());
    out.delay_groups_.push_back(std::move(members));
  }
  return out;
}

} // namespace cs
