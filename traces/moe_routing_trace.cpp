#include "traces/moe_routing_trace.hpp"

#include "base/input_error.hpp"
#include "base/input_file.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace cs {

namespace {

double field_number(const std::string& path, int row, int column, const std::string& text, const char* what, bool whole)
{
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const bool trailing = text.find_first_not_of(" \t\r", used) != std::string::npos;
  if (used == 0 || trailing || !std::isfinite(v))
    throw InputError(path, row, column, std::string("expected a number for ") + what + ", got '" + text + "'");
  if (v < 0 || v > 1e12 || (whole && v != std::floor(v)))
    throw InputError(path, row, column,
                     std::string(what) + " must be a " + (whole ? "whole number" : "number") + " from 0 to 1e12");
  if (whole && v > (1 << 24))
    throw InputError(path, row, column, std::string(what) + " must be at most 16777216");
  return v;
}

} // namespace

RoutingTrace read_routing_trace(const std::string& path)
{
  std::ifstream in = open_input_file(path, "routing trace");
  RoutingTrace t;
  t.path = path;
  std::set<int> iterations, layers;
  std::string line;
  int row = 0;
  bool seen_row = false;
  static const char* names[] = {"iteration", "layer", "source_rank", "expert", "tokens"};
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (!seen_row && line.find_first_of("0123456789") == std::string::npos) {
      seen_row = true;
      continue; // header: the first line that is not a comment
    }
    seen_row = true;
    if (row > 50'000'000)
      throw InputError(path, row, 1, "more than 50,000,000 rows");
    double v[5];
    std::size_t start = 0;
    for (int f = 0; f < 5; ++f) {
      const std::size_t comma = line.find(',', start);
      if ((comma == std::string::npos) != (f == 4))
        throw InputError(path, row, static_cast<int>(std::min(start, line.size())) + 1,
                         f < 4 ? "expected 'iteration,layer,source_rank,expert,tokens' (too few fields)"
                               : "expected 'iteration,layer,source_rank,expert,tokens' (too many fields)");
      v[f] = field_number(path, row, static_cast<int>(start) + 1,
                          line.substr(start, comma == std::string::npos ? std::string::npos : comma - start), names[f],
                          f < 4);
      if (f == 3 && v[3] > t.max_expert) {
        t.max_expert = static_cast<int>(v[3]);
        t.max_expert_line = row;
        t.max_expert_column = static_cast<int>(start) + 1;
      }
      start = comma + 1;
    }
    const int it = static_cast<int>(v[0]), layer = static_cast<int>(v[1]), rank = static_cast<int>(v[2]);
    t.tokens[{it, layer, rank}][static_cast<int>(v[3])] += v[4];
    iterations.insert(it);
    layers.insert(layer);
    t.ranks = std::max(t.ranks, rank + 1);
  }
  if (t.tokens.empty())
    throw InputError(path, std::max(row, 1), 1, "no rows");
  t.iterations.assign(iterations.begin(), iterations.end());
  t.layers.assign(layers.begin(), layers.end());
  return t;
}

} // namespace cs
