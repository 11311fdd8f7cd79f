// iMlayer-style shared cache [recon]: the storage regions of all executors on a host form one pool holding one copy
// of each block; a task reads its own executor's blocks as objects, co-hosted executors' blocks by a memory copy and
// deserialisation, other hosts' pools over the network, and recomputes only when no pool (or disk) has the block.
// Reconstructed from the abstract and policies.md §2: the pool's capacity is the sum of its executors' storage
// memory; when an executor leaves, its blocks stay in the pool as far as the remaining capacity allows.
#include "policies/spark_cache/cache_layout.hpp"

#include <algorithm>

namespace cs {

class ImlayerCache : public CacheLayoutBase {
public:
  ImlayerCache() : CacheLayoutBase("mrd") {}

  void add_executor(const CacheExecutor& e) override
  {
    executors_[e.id] = e;
    auto& pool = pools_[e.host];
    pool.set_capacity(pool.capacity() + e.storage_bytes);
  }

  std::vector<CachedBlock> remove_executor(int executor) override
  {
    const CacheExecutor e = executors_.at(executor);
    executors_.erase(executor);
    disk_.remove_owner(executor);
    auto& pool = pools_.at(e.host);
    pool.set_capacity(std::max(0.0, pool.capacity() - e.storage_bytes));
    int heir = -1; // a co-hosted executor of the same application adopts the leaver's blocks
    for (const auto& [id, other] : executors_)
      if (other.host == e.host && other.app == e.app) {
        heir = id;
        break;
      }
    std::vector<CachedBlock> lost;
    if (heir >= 0) {
      pool.reassign(executor, heir);
    } else {
      std::vector<BlockId> orphans;
      for (const auto& [id, b] : pool.blocks())
        if (b.owner == executor)
          orphans.push_back(id);
      for (const auto& id : orphans) {
        lost.push_back(pool.blocks().at(id));
        pool.erase(id);
      }
    }
    pool.shrink_to_fit(*eviction_, *future_, lost);
    return lost;
  }

  void resize_executor(int executor, double storage_bytes, std::vector<CachedBlock>& evicted) override
  {
    auto& e = executors_.at(executor);
    auto& pool = pools_.at(e.host);
    pool.set_capacity(std::max(0.0, pool.capacity() + storage_bytes - e.storage_bytes));
    e.storage_bytes = storage_bytes;
    const std::size_t before = evicted.size();
    pool.shrink_to_fit(*eviction_, *future_, evicted);
    spill(evicted, before, e.host);
  }

  BlockLookup lookup(const BlockId& block, int executor, double now) override
  {
    const CacheExecutor& e = executors_.at(executor);
    auto& pool = pools_.at(e.host);
    if (pool.contains(block)) {
      pool.touch(block, now);
      const bool own = pool.blocks().at(block).owner == executor;
      return {own ? BlockSource::LOCAL : BlockSource::HOST, e.host};
    }
    const int disk_host = disk_.host_of(block);
    if (disk_host == e.host)
      return {BlockSource::DISK, disk_host};
    for (auto& [host, other] : pools_)
      if (other.contains(block)) {
        other.touch(block, now);
        return {BlockSource::REMOTE, host};
      }
    if (disk_host >= 0)
      return {BlockSource::DISK, disk_host};
    return {BlockSource::MISS, -1};
  }

  bool insert(const CachedBlock& block, StorageLevel level, int executor, std::vector<CachedBlock>& evicted) override
  {
    const int host = executors_.at(executor).host;
    return store_block(pools_.at(host), block, level, host, executor, evicted);
  }

  std::vector<int> holders(const BlockId& block) const override
  {
    std::vector<int> out;
    for (const auto& [host, pool] : pools_) {
      auto it = pool.blocks().find(block);
      if (it != pool.blocks().end())
        out.push_back(it->second.owner);
    }
    return out;
  }

  double cached_bytes(int executor) const override
  {
    return pools_.at(executors_.at(executor).host).owned_bytes(executor);
  }

  std::vector<CachedBlock> blocks_of(int executor) const override
  {
    std::vector<CachedBlock> out;
    for (const auto& [id, b] : pools_.at(executors_.at(executor).host).blocks())
      if (b.owner == executor)
        out.push_back(b);
    return out;
  }

  void drop_application(int app) override
  {
    for (auto& [key, store] : pools_)
      store.erase_application(app);
    disk_.drop_application(app);
  }

private:
  std::map<int, CacheExecutor> executors_;
  std::map<int, BlockStore> pools_; // by host
};

CS_REGISTER_POLICY(SparkCache, ImlayerCache, "spark_cache", "imlayer",
                   "iMlayer-style pool per host shared by co-hosted executors, one copy per block; MRD by default "
                   "[recon]");

} // namespace cs
