#include "policies/pipeline/stage_map.hpp"

#include <stdexcept>

namespace cs {

StageMap StageMap::interleaved(int devices, int chunks)
{
  if (devices < 1 || chunks < 1)
    throw std::invalid_argument("a stage map needs at least one device and one chunk");
  std::vector<std::vector<int>> table(static_cast<std::size_t>(devices), std::vector<int>(chunks));
  for (int d = 0; d < devices; ++d)
    for (int c = 0; c < chunks; ++c)
      table[d][c] = c * devices + d;
  return from_table(table);
}

StageMap StageMap::from_table(const std::vector<std::vector<int>>& stage_of)
{
  if (stage_of.empty() || stage_of.front().empty())
    throw std::invalid_argument("a stage map needs at least one device and one chunk");
  StageMap map;
  map.devices_ = static_cast<int>(stage_of.size());
  map.chunks_ = static_cast<int>(stage_of.front().size());
  const int stages = map.devices_ * map.chunks_;
  map.stage_.clear();
  map.device_.assign(stages, -1);
  map.chunk_.assign(stages, -1);
  for (int d = 0; d < map.devices_; ++d) {
    if (static_cast<int>(stage_of[d].size()) != map.chunks_)
      throw std::invalid_argument("every device of a stage map holds the same number of chunks");
    for (int c = 0; c < map.chunks_; ++c) {
      const int s = stage_of[d][c];
      if (s < 0 || s >= stages || map.device_[s] >= 0)
        throw std::invalid_argument("a stage map numbers the virtual stages 0 .. devices x chunks - 1 once each");
      map.stage_.push_back(s);
      map.device_[s] = d;
      map.chunk_[s] = c;
    }
  }
  return map;
}

StageMap StageMap::from_table(const std::vector<std::vector<int>>& stage_of, int chains)
{
  StageMap map = from_table(stage_of);
  if (chains < 1 || map.stages() % chains != 0)
    throw std::invalid_argument("a stage map's chains divide its stages");
  map.chains_ = chains;
  return map;
}

bool StageMap::is_interleaved() const
{
  if (chains_ != 1)
    return false;
  for (int s = 0; s < stages(); ++s)
    if (device_of(s) != s % devices_ || chunk_of(s) != s / devices_)
      return false;
  return true;
}

} // namespace cs
