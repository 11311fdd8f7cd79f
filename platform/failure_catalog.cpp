#include "platform/failure_catalog.hpp"

#include <algorithm>

namespace cs {
namespace {

// Llama 3 405B pre-training (Grattafiori et al., 2024, section 3.3.4 and Table 5): a 54-day snapshot of one job on
// 16,384 H100 in 2,048 hosts of 8 GPUs and 8 NICs: 466 interruptions, 47 planned, 419 unexpected. A count over the
// snapshot becomes a rate per unit-hour: count / (units x 54 x 24 h). The unit is the one the cause lives in: GPU
// faults per GPU (16,384), host faults per host (2,048), NIC faults per NIC (16,384), switch and cable faults per GPU
// the fabric serves (16,384, since the fabric grows with the GPUs), software, NCCL-watchdog and dependency faults
// and planned maintenance per job (one), so that they do not grow with the cluster. Reconstructed: the table gives
// counts, not units; the choice of unit per cause is ours.
FailureCatalog llama3_2024()
{
  constexpr double hours = 54 * 24.0, gpus = 16384, hosts = 2048, nics = 16384;
  auto cause = [&](const char* name, FailureUnit unit, double count, bool hardware, const char* note) {
    const double units = unit == FailureUnit::HOST  ? hosts
                         : unit == FailureUnit::NIC ? nics
                         : unit == FailureUnit::JOB ? 1.0
                                                    : gpus;
    return FailureCause{name, unit, count / (units * hours), hardware, false, note};
  };
  FailureCatalog c;
  c.name = "llama3-2024";
  c.source = "The Llama 3 Herd of Models (2024), Table 5: 54 days, 16,384 H100, 419 unexpected and 47 planned";
  c.causes = {
      cause("gpu", FailureUnit::GPU, 148, true, "faulty GPU: 148"),
      cause("hbm", FailureUnit::GPU, 72, true, "GPU HBM3 memory: 72"),
      cause("gpu_sram", FailureUnit::GPU, 19, true, "GPU SRAM memory: 19"),
      cause("gpu_system_processor", FailureUnit::GPU, 17, true, "GPU system processor: 17"),
      cause("silent_data_corruption", FailureUnit::GPU, 6, true, "silent data corruption: 6"),
      cause("thermal", FailureUnit::GPU, 6, true, "GPU thermal interface and sensor: 6"),
      cause("switch_cable", FailureUnit::FABRIC, 35, true, "network switch and cable: 35"),
      cause("nic", FailureUnit::NIC, 7, true, "network interface card: 7"),
      cause("host", FailureUnit::HOST, 32, true, "host maintenance: 32"),
      cause("ssd", FailureUnit::HOST, 3, true, "SSD: 3"),
      cause("psu", FailureUnit::HOST, 3, true, "power supply: 3"),
      cause("host_other", FailureUnit::HOST, 8, true, "server chassis, IO expansion board, CPU, system memory: 2 each"),
      cause("software", FailureUnit::JOB, 54, false, "software bug: 54"),
      cause("nccl_watchdog", FailureUnit::JOB, 7, false, "NCCL watchdog timeouts: 7"),
      cause("dependency", FailureUnit::JOB, 2, false, "dependency: 2"),
  };
  FailureCause planned = cause("planned", FailureUnit::JOB, 47, false, "planned interruptions (maintenance): 47");
  planned.planned = true;
  c.causes.push_back(planned);
  return c;
}

} // namespace

const std::vector<FailureCatalog>& failure_catalogs()
{
  static const std::vector<FailureCatalog> catalogs{llama3_2024()};
  return catalogs;
}

const FailureCatalog* find_failure_catalog(const std::string& name)
{
  for (const auto& c : failure_catalogs())
    if (c.name == name)
      return &c;
  return nullptr;
}

const std::vector<FailureCause>& known_failure_causes()
{
  static const std::vector<FailureCause> causes = [] {
    std::vector<FailureCause> out;
    for (const auto& catalog : failure_catalogs())
      for (const auto& cause : catalog.causes)
        if (std::none_of(out.begin(), out.end(), [&](const FailureCause& c) { return c.name == cause.name; }))
          out.push_back(cause);
    return out;
  }();
  return causes;
}

const char* failure_unit_name(FailureUnit unit)
{
  switch (unit) {
  case FailureUnit::GPU:
    return "gpu";
  case FailureUnit::HOST:
    return "host";
  case FailureUnit::NIC:
    return "nic";
  case FailureUnit::FABRIC:
    return "fabric";
  case FailureUnit::JOB:
    return "job";
  }
  return "gpu";
}

} // namespace cs
