// Spark's block caching as policies see it: cached blocks, the stores that hold them, the eviction and cache-layout
// interfaces (policies/spark_cache, policies/spark_eviction), and what the DAG says about a block's future.
#pragma once

#include "base/registry.hpp"
#include "models/spark/spark_app.hpp"

#include <compare>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cs {

/** A cached partition: application, RDD and partition index. */
struct BlockId {
  int app = 0;
  int rdd = 0;
  int partition = 0;
  auto operator<=>(const BlockId&) const = default;
};

struct CachedBlock {
  BlockId id;
  double bytes = 0;
  double last_used = 0;
  int owner = 0; // executor that computed it
};

/** What the application DAGs say about each block's future (maintained by the simulation as stages finish). */
class BlockFuture {
public:
  static constexpr int kNever = std::numeric_limits<int>::max();
  virtual ~BlockFuture() = default;
  /** Stages of the block's application that will still read it (LRC's reference count). */
  virtual int references(const BlockId& block) const = 0;
  /** Stages from the application's current stage to the next one that reads the block; kNever when none will
   *  (MRD's reference distance). */
  virtual int distance(const BlockId& block) const = 0;
};

/** Chooses which block a full store gives up. */
class CacheEviction : public Configurable {
public:
  /** Index into `blocks` (never empty) of the block to evict. */
  virtual std::size_t victim(const std::vector<const CachedBlock*>& blocks, const BlockFuture& future) const = 0;
};

/** A memory store of fixed capacity that evicts through a CacheEviction, never a block of the RDD being inserted
 *  (Spark's MemoryStore rule: caching a partition must not push out its siblings). */
class BlockStore {
public:
  explicit BlockStore(double capacity = 0) : capacity_(capacity) {}
  double capacity() const { return capacity_; }
  void set_capacity(double capacity) { capacity_ = capacity; }
  double used() const { return used_; }
  bool contains(const BlockId& id) const { return blocks_.count(id) > 0; }
  /** Marks a read (LRU order). */
  void touch(const BlockId& id, double now);
  /** Stores `block` if room can be made; `evicted` receives what was pushed out. False when it does not fit. */
  bool insert(const CachedBlock& block, const CacheEviction& eviction, const BlockFuture& future,
              std::vector<CachedBlock>& evicted);
  void erase(const BlockId& id);
  /** Evicts, through `eviction`, until the blocks fit the capacity again. */
  void shrink_to_fit(const CacheEviction& eviction, const BlockFuture& future, std::vector<CachedBlock>& evicted);
  /** Drops every block of application `app`. */
  void erase_application(int app);
  /** Hands every block `from` computed to `to` (a shared pool whose executor left). */
  void reassign(int from, int to);
  const std::map<BlockId, CachedBlock>& blocks() const { return blocks_; }
  /** Bytes of the blocks `owner` computed (kept as blocks come and go: allocation managers ask often). */
  double owned_bytes(int owner) const
  {
    auto it = owned_.find(owner);
    return it == owned_.end() ? 0 : it->second;
  }

private:
  void add(const CachedBlock& block);

  double capacity_ = 0;
  double used_ = 0;
  std::map<BlockId, CachedBlock> blocks_;
  std::map<int, double> owned_; // by owner
};

/** Blocks kept on executors' local disks (DISK_ONLY, or MEMORY_AND_DISK dropped from memory). They live as long as
 *  the executor that wrote them: the external shuffle service does not serve cached RDD blocks by default. */
class DiskBlocks {
public:
  void add(const BlockId& id, int host, int owner) { blocks_[id] = {host, owner}; }
  /** The host whose disk holds `id`, or -1. */
  int host_of(const BlockId& id) const;
  void remove_owner(int owner);
  void drop_application(int app);

private:
  struct Where {
    int host = 0, owner = 0;
  };
  std::map<BlockId, Where> blocks_;
};

/** Whether `level` keeps a block on disk when memory cannot hold it. */
inline bool uses_disk(StorageLevel level)
{
  return level == StorageLevel::MEMORY_AND_DISK || level == StorageLevel::DISK_ONLY;
}

/** Where a lookup found a block. */
enum class BlockSource {
  LOCAL,  // in the reading executor's own memory: deserialized objects, no cost
  HOST,   // in memory on the reader's host but not its own (a shared pool): a memory copy and deserialization
  REMOTE, // in another host's memory: a network fetch and deserialization
  DISK,   // on a disk (`host`'s): a disk read and deserialization
  MISS,   // nowhere: recompute from lineage
};

struct BlockLookup {
  BlockSource source = BlockSource::MISS;
  int host = -1;
};

/** An executor as the cache layout sees it. */
struct CacheExecutor {
  int id = 0;
  int app = 0;
  int host = 0;
  double storage_bytes = 0; // its unified memory region available to storage
};

/** How executors' storage memory is organised (policies.spark_cache): per executor, or pooled per host. */
class SparkCache : public Configurable {
public:
  /** `future` outlives the cache; called once before any other call. */
  virtual void bind(const BlockFuture& future) = 0;
  /** The eviction policy's registered name (lru, lrc, mrd). */
  virtual std::string eviction_name() const = 0;
  virtual void add_executor(const CacheExecutor& executor) = 0;
  /** Drops the executor; returns the in-memory blocks that existed only there (lost, or to migrate). */
  virtual std::vector<CachedBlock> remove_executor(int executor) = 0;
  /** The executor's storage memory becomes `storage_bytes` (execution took or gave back part of its unified
   *  region); blocks that no longer fit are evicted into `evicted`. */
  virtual void resize_executor(int executor, double storage_bytes, std::vector<CachedBlock>& evicted) = 0;
  /** Finds `block` for a task on `executor`, nearest copy first, and marks it used. */
  virtual BlockLookup lookup(const BlockId& block, int executor, double now) = 0;
  /** A task on `executor` computed `block`: cache it at `level`. Returns false when it was not kept in memory (then
   *  a level with disk keeps it on the executor's disk). `evicted` receives what memory gave up. */
  virtual bool insert(const CachedBlock& block, StorageLevel level, int executor,
                      std::vector<CachedBlock>& evicted) = 0;
  /** Executors whose memory holds `block` (a pool's copy counts for the executor that cached it): where the block is
   *  PROCESS_LOCAL for delay scheduling. */
  virtual std::vector<int> holders(const BlockId& block) const = 0;
  /** Bytes of memory-cached blocks the executor holds (its share of a host pool). */
  virtual double cached_bytes(int executor) const = 0;
  /** In-memory blocks owned by the executor (what iSpark migrates). */
  virtual std::vector<CachedBlock> blocks_of(int executor) const = 0;
  /** Every memory-cached copy of `block` is dropped (an application ended). */
  virtual void drop_application(int app) = 0;
};

} // namespace cs
