// The two ways a scenario runs: SimGrid's flow-level simulation with contention, or analytical list scheduling.
#pragma once

namespace cs {

enum class Backend {
  SIMGRID,    // task graphs on SimGrid, flows sharing links (the default)
  ANALYTICAL, // task graphs list-scheduled; actors over a flow-level network whose cost does not grow with flows
};

/** The scenario spelling: "simgrid" | "analytical". */
inline const char* backend_name(Backend backend) { return backend == Backend::ANALYTICAL ? "analytical" : "simgrid"; }

} // namespace cs
