// Time-varying background load on a link: the share of its bandwidth left to the simulated traffic over time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cs {

/** Piecewise-constant availability in (0, 1]: `points` are (time s, fraction available) from time 0, sorted; with
 *  period > 0 the schedule repeats every `period` seconds (the last point holds until then). */
struct LinkAvailability {
  std::vector<std::pair<double, double>> points{{0.0, 1.0}};
  double period = 0;

  double at(double t) const;
  /** The first time after `t` at which availability changes (infinity when it never does). */
  double next_change(double t) const;
};

/** Both loads on one link: availability a.at(t) * b.at(t). Exact when both share a period (or neither has one);
 *  otherwise unrolled over the first 10,000 changes, after which the last value holds (as SimGrid's profiles are). */
LinkAvailability product(const LinkAvailability& a, const LinkAvailability& b);

/** Reads a "time_s,load" CSV (header optional, '#' comments) into an availability of 1 - load. Throws InputError
 *  with the row and column of a malformed value (not a number, time going back, load outside [0, 1)). */
LinkAvailability availability_from_csv(const std::string& path, double period);

} // namespace cs
