// The calibration commands of the CLI: calibrate, fit, predict, regress.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cs {

/** Runs the microkernels (`cpu` in-process, `cuda` through the calibrate_cuda binary) and writes measurements. */
int command_calibrate(const std::string& device, const std::string& out, bool quick, const std::string& self_path);
/** Fits a profile to measurement files of one device (on top of `base`, a profile path, unless empty), prints
 *  parameters and held-out residuals, writes the profile. */
int command_fit(const std::vector<std::string>& measurements, const std::string& out, int holdout_every,
                bool with_tables, const std::string& base);
/** Prints one prediction with its breakdown. `tokens` are the kernel family then --name value pairs. */
int command_predict(const std::string& device, const std::string& profile, const std::vector<std::string>& tokens,
                    bool json);
/** Prints predicted vs measured per kernel, median and p90 |error|; returns 1 when the median exceeds tolerance. */
int command_regress(const std::string& profile, const std::string& measurements, double tolerance);

} // namespace cs
