// A plan that fits, with what the search's bounds need, and its text form for the forked half of the bounding.
#pragma once

#include "models/transformer/pass_cost.hpp"
#include "sim/plan/planner.hpp"

#include <string>

namespace cs {

/** A plan that fits, with what its timeline bound needs; plan.bound_s holds its work bound until has_timeline. */
struct Candidate {
  Plan plan;
  PieceTimes experts;
  int microbatches = 0;
  bool has_timeline = false;       // bound_s is the timeline bound
  bool recomputes_nothing = false; // its selective recomputation reruns no kernel (recomputes_nothing)
};

/** One line of JSON, every number exact (hexadecimal floats): what a forked process sends back. */
std::string candidate_line(const Candidate& c);
/** The candidate a line holds. Throws nlohmann::json's errors on a malformed line. */
Candidate candidate_from_line(const std::string& line);

} // namespace cs
