#include "models/spark/spark_cache.hpp"

namespace cs {

void BlockStore::touch(const BlockId& id, double now)
{
  auto it = blocks_.find(id);
  if (it != blocks_.end())
    it->second.last_used = now;
}

bool BlockStore::insert(const CachedBlock& block, const CacheEviction& eviction, const BlockFuture& future,
                        std::vector<CachedBlock>& evicted)
{
  if (contains(block.id))
    return true;
  if (block.bytes > capacity_)
    return false;
  std::vector<const CachedBlock*> candidates;
  while (used_ + block.bytes > capacity_) {
    candidates.clear();
    for (const auto& [id, b] : blocks_)
      if (id.app != block.id.app || id.rdd != block.id.rdd)
        candidates.push_back(&b);
    if (candidates.empty())
      return false; // only siblings left: Spark drops the new block rather than evict them
    const CachedBlock victim = *candidates.at(eviction.victim(candidates, future));
    erase(victim.id);
    evicted.push_back(victim);
  }
  add(block);
  return true;
}

void BlockStore::add(const CachedBlock& block)
{
  blocks_.emplace(block.id, block);
  used_ += block.bytes;
  owned_[block.owner] += block.bytes;
}

void BlockStore::erase(const BlockId& id)
{
  auto it = blocks_.find(id);
  if (it == blocks_.end())
    return;
  used_ -= it->second.bytes;
  owned_[it->second.owner] -= it->second.bytes;
  blocks_.erase(it);
}

void BlockStore::shrink_to_fit(const CacheEviction& eviction, const BlockFuture& future,
                               std::vector<CachedBlock>& evicted)
{
  std::vector<const CachedBlock*> all;
  while (used_ > capacity_ + 1e-6 && !blocks_.empty()) {
    all.clear();
    for (const auto& [id, b] : blocks_)
      all.push_back(&b);
    const CachedBlock victim = *all.at(eviction.victim(all, future));
    erase(victim.id);
    evicted.push_back(victim);
  }
}

void BlockStore::erase_application(int app)
{
  for (auto it = blocks_.begin(); it != blocks_.end();)
    if (it->first.app == app) {
      used_ -= it->second.bytes;
      owned_[it->second.owner] -= it->second.bytes;
      it = blocks_.erase(it);
    } else {
      ++it;
    }
}

void BlockStore::reassign(int from, int to)
{
  for (auto& [id, b] : blocks_)
    if (b.owner == from)
      b.owner = to;
  owned_[to] += owned_[from];
  owned_.erase(from);
}

int DiskBlocks::host_of(const BlockId& id) const
{
  auto it = blocks_.find(id);
  return it == blocks_.end() ? -1 : it->second.host;
}

void DiskBlocks::remove_owner(int owner)
{
  std::erase_if(blocks_, [&](const auto& kv) { return kv.second.owner == owner; });
}

void DiskBlocks::drop_application(int app)
{
  std::erase_if(blocks_, [&](const auto& kv) { return kv.first.app == app; });
}

} // namespace cs
