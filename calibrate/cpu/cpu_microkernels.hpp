// CPU microkernels (Eigen GEMM, STREAM copy and triad, memcpy) timed over a shape sweep, for calibrate --device cpu.
#pragma once

#include "calibrate/fit/measurements.hpp"

namespace cs {

struct CpuCalibrationOptions {
  bool quick = false; // fewer shapes and repeats (tests)
  int repeats = 9;    // timed runs per shape after one warm-up; the median is kept
  unsigned seed = 1;  // random inputs
};

/** Runs the sweep on this machine, single-threaded, and returns the timings for device "cpu-node". */
Measurements run_cpu_calibration(const CpuCalibrationOptions& options);

} // namespace cs
