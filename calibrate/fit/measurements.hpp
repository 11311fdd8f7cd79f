// Measurement files: what `clustersim calibrate` (CPU) and calibrate_cuda (GPU) write and `fit`/`regress` read.
#pragma once

#include "models/kernels/kernel.hpp"

#include <map>
#include <string>
#include <vector>

namespace cs {

/** One timed kernel: its family and arguments (as make_kernel takes them) and the median of its repeats. */
struct Measurement {
  std::string family;
  std::map<std::string, std::string> args;
  double seconds = 0; // the kernel's time: the median of the repeats (GPU), the fastest (CPU, see calibrate/cpu)
  int repeats = 0;
  double spread = 0; // (max - min) / median over the repeats
  double median = 0; // median of the repeats, when `seconds` is not it (0 = same as seconds)
  Kernel kernel() const { return make_kernel(family, args); }
};

/** A measurement file: the device it ran on (catalog name plus what the machine reported) and the timings. */
struct Measurements {
  static constexpr const char* kSchema = "clustersim-measurements/1";
  std::string device;                      // catalog name the profile will be for
  std::map<std::string, std::string> host; // model, clocks, driver, library versions (free-form)
  std::vector<Measurement> items;
};

/** Reads a measurement file; InputError (file:line:col) on malformed JSON, a wrong schema, a bad kernel or a
 *  non-positive time. */
Measurements load_measurements(const std::string& path);
Measurements parse_measurements(const std::string& text, const std::string& file);
std::string measurements_to_json(const Measurements& m);

} // namespace cs
