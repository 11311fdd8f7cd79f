#include "sim/cli/calibration_commands.hpp"
#include "sim/cli/command.hpp"

#include "base/input_error.hpp"
#include "base/json_input.hpp"
#include "base/units.hpp"
#include "calibrate/cpu/cpu_microkernels.hpp"
#include "calibrate/fit/profile_fit.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace cs {
namespace {

void write_file(const std::string& path, const std::string& text)
{
  std::filesystem::path p(path);
  if (p.has_parent_path())
    std::filesystem::create_directories(p.parent_path());
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out)
      throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

const DeviceSpec& catalog_device(const std::string& name, const std::string& file)
{
  const DeviceSpec* d = DeviceCatalog::builtin().find(name);
  if (!d)
    throw InputError(file, 1, 1, "device '" + name + "' is not in the catalog (clustersim list devices)");
  return *d;
}

void print_residuals(const std::vector<Residual>& rs, bool mark_held_out)
{
  std::cout << fmt::format("{:<64} {:>12} {:>12} {:>8}  {}\n", "kernel", "measured", "predicted", "error", "model");
  for (const auto& r : rs)
    std::cout << fmt::format("{:<64} {:>12} {:>12} {:>+7.1f}%  {}{}\n", r.kernel, units::format_time(r.measured),
                             units::format_time(r.predicted), 100 * r.relative_error, r.model,
                             mark_held_out && r.held_out ? "  (held out)" : "");
}

void print_stats(const std::vector<Residual>& rs, const char* title)
{
  std::map<std::string, std::vector<Residual>> by_family;
  for (const auto& r : rs)
    by_family[r.family].push_back(r);
  std::cout << title << "\n";
  for (const auto& [family, list] : by_family) {
    ErrorStats s = error_stats(list);
    std::cout << fmt::format("  {:<12} n={:<4} median |error| {:5.1f}%  p90 {:5.1f}%\n", family, s.count,
                             100 * s.median, 100 * s.p90);
  }
  ErrorStats all = error_stats(rs);
  std::cout << fmt::format("  {:<12} n={:<4} median |error| {:5.1f}%  p90 {:5.1f}%\n", "all", all.count,
                           100 * all.median, 100 * all.p90);
}

} // namespace

int command_calibrate(const std::string& device, const std::string& out, bool quick, const std::string& self_path)
{
  if (device == "cpu") {
    CpuCalibrationOptions o;
    o.quick = quick;
    Measurements m = run_cpu_calibration(o);
    write_file(out, measurements_to_json(m));
    std::cout << fmt::format("calibrate: {} CPU measurements on {} written to {}\n", m.items.size(), m.host["model"],
                             out);
    return 0;
  }
  // CUDA microkernels live in their own binary (built only where CMake found CUDA), next to this one.
  std::filesystem::path tool = std::filesystem::path(self_path).parent_path() / "calibrate_cuda";
  if (!std::filesystem::exists(tool)) {
    std::cerr << "clustersim: calibrate --device cuda needs calibrate_cuda, which this build does not have "
                 "(CMake found no CUDA toolkit)\n";
    return 1;
  }
  std::vector<std::string> args{tool.string(), "--out", out};
  if (quick)
    args.push_back("--quick");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execv(tool.c_str(), argv.data());
  std::cerr << "clustersim: cannot run " << tool << "\n";
  return 1;
}

namespace {

// Measurement files of one device, read as one set (host facts from the first file that gives each).
Measurements load_measurement_set(const std::vector<std::string>& paths)
{
  Measurements all = load_measurements(paths.front());
  for (std::size_t i = 1; i < paths.size(); ++i) {
    Measurements m = load_measurements(paths[i]);
    if (m.device != all.device)
      throw InputError(paths[i], 1, 1,
                       fmt::format("measures {}, but {} measures {}: fit one device at a time", m.device,
                                   paths.front(), all.device));
    all.items.insert(all.items.end(), m.items.begin(), m.items.end());
    for (const auto& [k, v] : m.host)
      all.host.emplace(k, v);
  }
  return all;
}

} // namespace

int command_fit(const std::vector<std::string>& measurement_paths, const std::string& out, int holdout_every,
                bool with_tables, const std::string& base_path)
{
  Measurements m = load_measurement_set(measurement_paths);
  const std::string& measurements_path = measurement_paths.front();
  const DeviceSpec& d = catalog_device(m.device, measurements_path);
  DeviceProfile base;
  FitOptions o;
  o.holdout_every = holdout_every;
  o.with_tables = with_tables;
  if (!base_path.empty()) {
    base = load_profile(base_path);
    if (base.device != m.device)
      throw InputError(base_path, 1, 1,
                       fmt::format("is a profile of {}, but the measurements are of {}", base.device, m.device));
    o.base = &base;
  }
  FitResult r;
  try {
    r = fit_profile(m, d, o);
  } catch (const std::invalid_argument& e) { // the measurements cannot determine a profile: bad input
    throw InputError(measurements_path, 1, 1, std::string("cannot fit a profile to these measurements: ") + e.what());
  }
  std::vector<std::string> names;
  for (const auto& path : measurement_paths)
    names.push_back(std::filesystem::path(path).filename().string());
  r.profile.sources["measurements"] = fmt::format("{}", fmt::join(names, ", "));
  const DeviceProfile& p = r.profile;
  std::cout << fmt::format("fit: {} ({} measurements from {})\n", d.display_name, m.items.size(),
                           fmt::join(measurement_paths, ", "));
  std::cout << fmt::format("  launch overhead   {}\n", units::format_time(p.launch_overhead));
  for (const auto& [dtype, e] : p.compute_efficiency) {
    if (!(d.peak(dtype) > 0)) { // "default": any dtype the measurements do not name
      std::cout << fmt::format("  compute eff {:<6} {:.3f}\n", dtype, e);
      continue;
    }
    const bool tera = d.peak(dtype) >= 1e12; // CPU nodes read better in GFLOP/s
    const double unit = tera ? 1e12 : 1e9;
    std::cout << fmt::format("  compute eff {:<6} {:.3f} ({:.1f} {} of {:.1f})\n", dtype, e, e * d.peak(dtype) / unit,
                             tera ? "TFLOP/s" : "GFLOP/s", d.peak(dtype) / unit);
  }
  std::cout << fmt::format("  memory efficiency {:.3f} ({:.1f} GB/s of {:.1f})\n", p.memory_efficiency,
                           p.memory_efficiency * d.memory_bandwidth / 1e9, d.memory_bandwidth / 1e9);
  for (const auto& [key, e] : p.memory_efficiency_by_kernel)
    std::cout << fmt::format("    {:<15} {:.3f} ({:.1f} GB/s)\n", key, e, e * d.memory_bandwidth / 1e9);
  for (const auto& [dir, bw] : p.copy_bandwidth)
    std::cout << fmt::format("  copy {:<12} {:.1f} GB/s\n", dir, bw / 1e9);
  std::cout << fmt::format("  gemm              {}\n", r.gemm_choice);
  if (!r.attention_choice.empty()) {
    std::cout << fmt::format("  {}\n", r.attention_choice);
    auto curve = [](const char* name, const AttentionEfficiency& a) {
      std::cout << fmt::format("    {:<9} forward {:.3f} (half at seq {:g}), backward {:.3f} (half at seq {:g}), "
                               "causal x{:.2f} (half-way x{:g}), head-size half-point {:g}\n",
                               name, a.forward, a.forward_half_seq, a.backward, a.backward_half_seq, a.causal_scale,
                               a.causal_half_seq_scale, a.head_dim_half);
    };
    curve("flash", p.attention);
    if (p.attention_cudnn.forward > 0)
      curve("cudnn", p.attention_cudnn);
  }
  std::cout << "\n";
  print_residuals(r.residuals, true);
  std::vector<Residual> held, trained;
  for (const auto& x : r.residuals)
    (x.held_out ? held : trained).push_back(x);
  std::cout << "\n";
  print_stats(trained, "training residuals:");
  print_stats(held, "held-out residuals:");
  write_file(out, profile_to_json(p));
  std::cout << "profile written to " << out << "\n";
  return 0;
}

namespace {

// The kernel of `predict FAMILY --name value ...` (or --name=value).
Kernel kernel_of(const std::vector<std::string>& tokens)
{
  if (tokens.empty()) {
    std::string families;
    for (const auto& f : kernel_families())
      families += (families.empty() ? "" : ", ") + f;
    throw InputError("<command line>", 1, 1, "predict needs a kernel: " + families);
  }
  std::map<std::string, std::string> args;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.rfind("--", 0) != 0 || t.size() < 3)
      throw InputError("<command line>", 1, 1, "expected --name value after the kernel, got '" + t + "'");
    std::string key = t.substr(2), value;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < tokens.size()) {
      value = tokens[++i];
    } else {
      throw InputError("<command line>", 1, 1, "--" + key + " needs a value");
    }
    args[key] = value;
  }
  try {
    return make_kernel(tokens[0], args);
  } catch (const std::invalid_argument& e) {
    throw InputError("<command line>", 1, 1, e.what());
  }
}

// The profile a prediction uses: the given file's, or the one shipped for the device.
DeviceProfile profile_for(std::string& device_name, const std::string& profile_path)
{
  if (!profile_path.empty()) {
    DeviceProfile profile = load_profile(profile_path);
    if (!device_name.empty() && device_name != profile.device)
      throw InputError(profile_path, 1, 1, "profile is for '" + profile.device + "', not '" + device_name + "'");
    device_name = profile.device;
    return profile;
  }
  if (device_name.empty())
    throw InputError("<command line>", 1, 1, "predict needs --device NAME or --profile P.json");
  const DeviceProfile* shipped = builtin_profile(device_name);
  if (!shipped)
    throw InputError("<command line>", 1, 1,
                     "no profile is shipped for device '" + device_name +
                         "' (clustersim list devices; or give --profile)");
  return *shipped;
}

void print_prediction(const Kernel& kernel, const DeviceSpec& d, const CostBreakdown& b, bool json)
{
  const double flops = kernel_flops(kernel), bytes = kernel_bytes(kernel);
  if (json) {
    nlohmann::ordered_json j{{"device", d.name},
                             {"kernel", describe_kernel(kernel)},
                             {"seconds", b.total},
                             {"compute_s", b.compute},
                             {"memory_s", b.memory},
                             {"launch_s", b.launch},
                             {"model", b.model},
                             {"detail", b.detail},
                             {"flops", flops},
                             {"bytes", bytes},
                             {"tflops", flops > 0 ? flops / b.total / 1e12 : 0.0},
                             {"gbps", bytes / b.total / 1e9}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("{} on {}\n", describe_kernel(kernel), d.display_name);
  std::cout << fmt::format("  time     {}  ({} model{})\n", units::format_time(b.total), b.model,
                           b.detail.empty() ? "" : ": " + b.detail);
  std::cout << fmt::format("  compute  {}   memory {}   launch {}   ({}-bound)\n", units::format_time(b.compute),
                           units::format_time(b.memory), units::format_time(b.launch),
                           b.compute_bound() ? "compute" : "memory");
  if (flops > 0)
    std::cout << fmt::format("  rate     {:.1f} TFLOP/s\n", flops / b.total / 1e12);
  std::cout << fmt::format("  traffic  {} at {:.1f} GB/s\n", units::format_bytes(bytes), bytes / b.total / 1e9);
}

} // namespace

int command_predict(const std::string& device, const std::string& profile_path, const std::vector<std::string>& tokens,
                    bool json)
{
  const Kernel kernel = kernel_of(tokens);
  std::string device_name = device;
  const DeviceProfile profile = profile_for(device_name, profile_path);
  const DeviceSpec& d = catalog_device(device_name, profile_path.empty() ? "<command line>" : profile_path);
  auto model = make_cost_model(d, profile);
  CostBreakdown b;
  try {
    b = model->predict(kernel);
  } catch (const std::invalid_argument& e) {
    throw InputError("<command line>", 1, 1, e.what());
  }
  print_prediction(kernel, d, b, json);
  return 0;
}

int command_regress(const std::string& profile_path, const std::string& measurements_path, double tolerance,
                    double bias_tolerance)
{
  DeviceProfile p = load_profile(profile_path);
  Measurements m = load_measurements(measurements_path);
  if (p.device != m.device)
    throw InputError(profile_path, 1, 1,
                     "profile is for '" + p.device + "' but the measurements are from '" + m.device + "'");
  const DeviceSpec& d = catalog_device(p.device, profile_path);
  auto model = make_cost_model(d, p);
  auto residuals = evaluate(*model, m);
  print_residuals(residuals, false);
  std::cout << "\n";
  print_stats(residuals, "errors:");
  ErrorStats all = error_stats(residuals);
  // A uniform slowdown keeps every |error| below the tolerance while the signed median moves: check both.
  const double bias_limit = bias_tolerance > 0 ? bias_tolerance : tolerance / 2;
  const bool spread_ok = all.median <= tolerance, bias_ok = std::abs(all.bias) <= bias_limit;
  std::cout << fmt::format("regress: median |error| {:.1f}% {} tolerance {:.1f}%; median signed error {:+.1f}% {} "
                           "bias tolerance {:.1f}%\n",
                           100 * all.median, spread_ok ? "within" : "BEYOND", 100 * tolerance, 100 * all.bias,
                           bias_ok ? "within" : "BEYOND", 100 * bias_limit);
  return spread_ok && bias_ok ? 0 : 1;
}

std::vector<Command> add_calibration_commands(CLI::App& app)
{
  struct Args {
    std::string device, out, measurements, profile, predict_device, base;
    std::vector<std::string> fit_measurements;
    bool quick = false, with_tables = false, json = false;
    int holdout = 4;
    double tolerance = 0.10;
    double bias_tolerance = 0;
  };
  auto a = std::make_shared<Args>();
  auto* calibrate = app.add_subcommand("calibrate", "run the microkernels on this machine and write measurements");
  calibrate->add_option("--device", a->device, "cpu | cuda")->required()->check(CLI::IsMember({"cpu", "cuda"}));
  calibrate->add_option("--out", a->out, "measurement file to write")->required();
  calibrate->add_flag("--quick", a->quick, "fewer shapes and repeats");
  auto* fit = app.add_subcommand("fit", "fit a device profile to measurement files of one device");
  fit->add_option("measurements", a->fit_measurements, "measurement JSON files (from calibrate), one device")
      ->required();
  fit->add_option("--base", a->base, "profile whose parameters the measurements do not determine are kept");
  fit->add_option("--out", a->out, "profile file to write")->required();
  fit->add_option("--holdout", a->holdout, "hold out every N-th measurement (default 4)")->check(CLI::Range(2, 1000));
  fit->add_flag("--with-tables", a->with_tables, "also store the training measurements as profiled tables");
  auto* predict = app.add_subcommand("predict", "predict one kernel: predict --device h200-sxm gemm --m 8192 ...");
  predict->add_option("--device", a->predict_device, "catalog device (uses its shipped profile)");
  predict->add_option("--profile", a->profile, "a profile JSON (from fit)");
  predict->add_flag("--json", a->json, "print JSON");
  predict->allow_extras();
  predict->positionals_at_end(false);
  auto* regress = app.add_subcommand("regress", "compare a profile's predictions with measurements");
  regress->add_option("--profile", a->profile, "profile JSON")->required();
  regress->add_option("--measurements", a->measurements, "measurement JSON")->required();
  regress->add_option("--tolerance", a->tolerance, "largest acceptable median |relative error| (default 0.10)")
      ->check(CLI::PositiveNumber);
  regress
      ->add_option("--bias-tolerance", a->bias_tolerance,
                   "largest acceptable |median signed relative error| (default: half the tolerance)")
      ->check(CLI::PositiveNumber);
  return {
      {calibrate,
       [a] {
         return command_calibrate(a->device, a->out, a->quick,
                                  std::filesystem::read_symlink("/proc/self/exe").string());
       }},
      {fit, [a] { return command_fit(a->fit_measurements, a->out, a->holdout, a->with_tables, a->base); }},
      {predict, [a, predict] { return command_predict(a->predict_device, a->profile, predict->remaining(), a->json); }},
      {regress, [a] { return command_regress(a->profile, a->measurements, a->tolerance, a->bias_tolerance); }}};
}

} // namespace cs
