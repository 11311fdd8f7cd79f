// Spark's model pieces without the engine: the application DAG, block stores and eviction, the two cache layouts,
// the HiBench-like generators and the provisioning policies.
#include "models/spark/spark_cache.hpp"
#include "models/spark/spark_provisioning.hpp"
#include "workloads/spark/spark_apps.hpp"
#include "workloads/spark/spark_sim.hpp"

#include <gtest/gtest.h>
#include <map>

namespace {

using cs::BlockId;
using cs::BlockSource;
using cs::CachedBlock;

/** A future given per RDD: references and distances. */
class FixedFuture : public cs::BlockFuture {
public:
  std::map<int, int> refs, dist;
  int references(const BlockId& b) const override { return refs.count(b.rdd) ? refs.at(b.rdd) : 0; }
  int distance(const BlockId& b) const override { return dist.count(b.rdd) ? dist.at(b.rdd) : kNever; }
};

std::unique_ptr<cs::CacheEviction> eviction(const std::string& name)
{
  return cs::Registry<cs::CacheEviction>::instance().create(name);
}

CachedBlock block(int rdd, int p, double bytes, double used, int owner = 0)
{
  return {{0, rdd, p}, bytes, used, owner};
}

TEST(SparkBlockStore, LruEvictsTheLeastRecentlyReadAndNeverASibling)
{
  FixedFuture future;
  auto lru = eviction("lru");
  cs::BlockStore store(300);
  std::vector<CachedBlock> evicted;
  ASSERT_TRUE(store.insert(block(1, 0, 100, 1), *lru, future, evicted));
  ASSERT_TRUE(store.insert(block(2, 0, 100, 2), *lru, future, evicted));
  ASSERT_TRUE(store.insert(block(2, 1, 100, 3), *lru, future, evicted));
  store.touch({0, 1, 0}, 10); // RDD 1 read last: RDD 2's partition 0 is now the oldest
  ASSERT_TRUE(store.insert(block(3, 0, 100, 11), *lru, future, evicted));
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].id.rdd, 2);
  EXPECT_EQ(evicted[0].id.partition, 0);
  EXPECT_DOUBLE_EQ(store.used(), 300);
  // Only siblings of the inserted RDD left to evict: the new block is dropped, nothing is evicted.
  cs::BlockStore full(200);
  evicted.clear();
  ASSERT_TRUE(full.insert(block(5, 0, 100, 1), *lru, future, evicted));
  ASSERT_TRUE(full.insert(block(5, 1, 100, 2), *lru, future, evicted));
  EXPECT_FALSE(full.insert(block(5, 2, 100, 3), *lru, future, evicted));
  EXPECT_TRUE(evicted.empty());
  EXPECT_FALSE(full.insert(block(6, 0, 300, 3), *lru, future, evicted)); // larger than the store
}

TEST(SparkBlockStore, LrcAndMrdReadTheDagsFuture)
{
  FixedFuture future;
  future.refs = {{1, 5}, {2, 0}, {3, 2}};
  future.dist = {{1, 1}, {3, 4}}; // RDD 2 is never read again
  std::vector<CachedBlock> blocks{block(1, 0, 1, 1), block(2, 0, 1, 2), block(3, 0, 1, 3)};
  std::vector<const CachedBlock*> candidates{&blocks[0], &blocks[1], &blocks[2]};
  EXPECT_EQ(eviction("lru")->victim(candidates, future), 0u);
  EXPECT_EQ(eviction("lrc")->victim(candidates, future), 1u); // fewest references
  EXPECT_EQ(eviction("mrd")->victim(candidates, future), 1u); // never read again
  future.dist[2] = 2;
  EXPECT_EQ(eviction("mrd")->victim(candidates, future), 2u); // furthest next use
  future.refs[2] = 9;
  EXPECT_EQ(eviction("lrc")->victim(candidates, future), 2u);
}

std::unique_ptr<cs::SparkCache> layout(const std::string& name, const cs::BlockFuture& future)
{
  auto cache = cs::Registry<cs::SparkCache>::instance().create(name);
  cache->bind(future);
  cache->add_executor({0, 0, 0, 200}); // executors 0 and 1 share host 0; executor 2 is on host 1
  cache->add_executor({1, 0, 0, 200});
  cache->add_executor({2, 0, 1, 200});
  return cache;
}

TEST(SparkCacheLayout, VanillaKeepsBlocksPerExecutorAndFetchesOthersRemotely)
{
  FixedFuture future;
  auto cache = layout("vanilla", future);
  std::vector<CachedBlock> evicted;
  EXPECT_TRUE(cache->insert(block(1, 0, 150, 0, 0), cs::StorageLevel::MEMORY_ONLY, 0, evicted));
  // The co-hosted executor has room, but executor 0's store is full of the RDD's own blocks: the sibling is dropped
  // (stranded memory).
  EXPECT_FALSE(cache->insert(block(1, 1, 150, 1, 0), cs::StorageLevel::MEMORY_ONLY, 0, evicted));
  EXPECT_EQ(cache->lookup({0, 1, 0}, 0, 2).source, BlockSource::LOCAL);
  const auto fetched = cache->lookup({0, 1, 0}, 1, 3);
  EXPECT_EQ(fetched.source, BlockSource::REMOTE); // BlockManager fetch, even on the same host
  EXPECT_EQ(fetched.host, 0);
  EXPECT_EQ(cache->lookup({0, 1, 1}, 0, 4).source, BlockSource::MISS);
  EXPECT_EQ(cache->holders({0, 1, 0}), std::vector<int>{0});
  // Another RDD's block evicts the LRU one.
  EXPECT_TRUE(cache->insert(block(2, 0, 150, 5, 0), cs::StorageLevel::MEMORY_ONLY, 0, evicted));
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].id.rdd, 1);
  // MEMORY_AND_DISK that does not fit goes to the executor's disk; it is lost with the executor.
  EXPECT_TRUE(cache->insert(block(3, 0, 150, 6, 2), cs::StorageLevel::MEMORY_AND_DISK, 2, evicted));
  EXPECT_FALSE(cache->insert(block(3, 1, 150, 6, 2), cs::StorageLevel::MEMORY_AND_DISK, 2, evicted));
  const auto disk = cache->lookup({0, 3, 1}, 0, 7);
  EXPECT_EQ(disk.source, BlockSource::DISK);
  EXPECT_EQ(disk.host, 1);
  const auto lost = cache->remove_executor(2);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(cache->lookup({0, 3, 1}, 0, 8).source, BlockSource::MISS);
  EXPECT_EQ(cache->lookup({0, 3, 0}, 0, 8).source, BlockSource::MISS);
}

TEST(SparkCacheLayout, ImlayerPoolsTheHostsStorageWithOneCopy)
{
  FixedFuture future;
  auto cache = layout("imlayer", future);
  EXPECT_EQ(cache->eviction_name(), "mrd");
  std::vector<CachedBlock> evicted;
  EXPECT_TRUE(cache->insert(block(1, 0, 150, 0, 0), cs::StorageLevel::MEMORY_ONLY, 0, evicted));
  EXPECT_TRUE(cache->insert(block(2, 0, 150, 1, 0), cs::StorageLevel::MEMORY_ONLY, 0, evicted)); // 400 on host 0
  EXPECT_TRUE(evicted.empty());
  EXPECT_EQ(cache->lookup({0, 1, 0}, 0, 2).source, BlockSource::LOCAL);
  EXPECT_EQ(cache->lookup({0, 1, 0}, 1, 2).source, BlockSource::HOST);
  EXPECT_EQ(cache->lookup({0, 1, 0}, 2, 2).source, BlockSource::REMOTE);
  EXPECT_DOUBLE_EQ(cache->cached_bytes(0), 300);
  EXPECT_DOUBLE_EQ(cache->cached_bytes(1), 0);
  // Executor 0 leaves: executor 1 adopts its blocks, and the pool (now 200) keeps what fits.
  const auto lost = cache->remove_executor(0);
  EXPECT_EQ(lost.size(), 1u);
  EXPECT_DOUBLE_EQ(cache->cached_bytes(1), 150);
  cache->drop_application(0);
  EXPECT_DOUBLE_EQ(cache->cached_bytes(1), 0);
}

TEST(SparkApplicationModel, ValidationRefusesBrokenDags)
{
  cs::SparkApplication app;
  app.rdds.push_back({"a", 4, 1, 1, 0, {}, {}, cs::StorageLevel::NONE});
  app.rdds.push_back({"b", 3, 1, 1, 0, {0}, {}, cs::StorageLevel::NONE}); // partitions differ from its parent
  app.stages.push_back({1, 0, 0, {}, 0, {}, {}});
  app.jobs.push_back({{0}, 0});
  EXPECT_THROW(app.validate(), std::invalid_argument);
  app.rdds[1].partitions = 4;
  EXPECT_NO_THROW(app.validate());
  app.rdds[0].narrow_parents = {1}; // a cycle through a later RDD
  EXPECT_THROW(app.validate(), std::invalid_argument);
  app.rdds[0].narrow_parents.clear();
  app.rdds[1].shuffle_stages = {0}; // not a shuffle map stage
  EXPECT_THROW(app.validate(), std::invalid_argument);
  EXPECT_THROW(cs::storage_level_of("MEMORY_ONLY_SER"), std::invalid_argument);
}

TEST(SparkGenerators, KmeansHugeIsSizedByHibenchsProfile)
{
  cs::SparkParams p;
  cs::SparkAppParams a;
  a.workload = "kmeans";
  a.profile = "huge";
  const auto app = cs::hibench_application(a, p);
  // 1e8 samples x 20 dimensions: 17.6 GB of input in 128 MiB partitions, cached as 22.4 GB of objects.
  const auto& points = app.rdds[1];
  EXPECT_EQ(points.name, "points");
  EXPECT_EQ(points.storage, cs::StorageLevel::MEMORY_ONLY);
  EXPECT_EQ(points.partitions, 132);
  EXPECT_NEAR(points.partitions * points.partition_bytes, 1e8 * (8 * 20 + 64), 1);
  EXPECT_EQ(app.jobs.size(), 6u); // a load job and HiBench's 5 iterations
  a.converge = 0.5;
  a.iterations = 3;
  const auto converging = cs::hibench_application(a, p);
  EXPECT_EQ(converging.stages[converging.jobs[3].stages[0]].task_count(converging.rdds), 33); // 132 x 0.5^2
  EXPECT_EQ(converging.stages[converging.jobs[3].stages[0]].partition_of(1, converging.rdds), 4);
  for (const char* w : {"pagerank", "lr", "wordcount", "terasort"}) {
    a.workload = w;
    EXPECT_NO_THROW(cs::hibench_application(a, p)) << w;
  }
  EXPECT_NEAR(cs::executor_storage_bytes(p), (4.0 * 1024 - 300) * 1048576 * 0.6, 1);
}

cs::AppView view(int executors, int pending, double now, double backlog_since)
{
  cs::AppView v;
  v.now = now;
  v.max_executors = 8;
  v.slots_per_executor = 4;
  v.pending_tasks = pending;
  v.backlog_since = backlog_since;
  for (int e = 0; e < executors; ++e)
    v.executors.push_back({e, 4, 0, 0, 0, 0, 100});
  return v;
}

TEST(SparkProvisioning, DynamicAllocationRampsUpExponentiallyAndReleasesIdleExecutors)
{
  auto dyn = cs::Registry<cs::SparkProvisioning>::instance().create("dynamic");
  EXPECT_EQ(dyn->initial_executors(view(0, 0, 0, -1)), 0);
  EXPECT_EQ(dyn->decide(view(0, 100, 0.5, 0)).add, 0); // backlog younger than schedulerBacklogTimeout
  EXPECT_EQ(dyn->decide(view(0, 100, 1.0, 0)).add, 1);
  EXPECT_EQ(dyn->decide(view(1, 100, 2.0, 0)).add, 2);
  EXPECT_EQ(dyn->decide(view(3, 100, 3.0, 0)).add, 4);
  EXPECT_EQ(dyn->decide(view(7, 30, 4.0, 0)).add, 1); // capped by what the backlog needs: ceil(30 / 4) = 8
  auto idle = view(3, 0, 100, -1);
  idle.executors[1].cached_bytes = 10; // holds cache: kept (cachedExecutorIdleTimeout is infinite)
  idle.executors[2].idle_since = 50;   // idle for 50 s only
  EXPECT_EQ(dyn->decide(idle).remove, std::vector<int>{0});
  auto stat = cs::Registry<cs::SparkProvisioning>::instance().create("static");
  EXPECT_EQ(stat->initial_executors(view(0, 0, 0, -1)), 8);
  EXPECT_TRUE(stat->decide(idle).remove.empty());
}

TEST(SparkProvisioning, IsparkShrinksToTheTargetShareAtIterationBoundaries)
{
  auto isp = cs::Registry<cs::SparkProvisioning>::instance().create("ispark");
  auto v = view(8, 0, 10, -1);
  for (int e = 0; e < 8; ++e) {
    v.executors[e].cpu_share = e < 4 ? 0.5 : 0.1;
    v.executors[e].cached_bytes = 20; // memory share 0.2
  }
  EXPECT_TRUE(isp->decide(v).remove.empty()); // no boundary yet
  v.iteration_ended = true;
  const auto act = isp->decide(v); // mean share 0.35 < 0.5: keep ceil(8 x 0.35 / 0.7) = 4
  EXPECT_TRUE(act.migrate_cache);
  EXPECT_EQ(act.remove, (std::vector<int>{4, 5, 6, 7})); // the least used go
  for (auto& e : v.executors)
    e.cpu_share = 0.9;
  EXPECT_TRUE(isp->decide(v).remove.empty());
}

} // namespace

namespace {

TEST(SparkCacheLayout, ExecutionMemoryShrinksStorageAndEvicts)
{
  FixedFuture future;
  std::vector<CachedBlock> evicted;
  auto vanilla = layout("vanilla", future);
  ASSERT_TRUE(vanilla->insert(block(1, 0, 100, 1, 0), cs::StorageLevel::MEMORY_ONLY, 0, evicted));
  ASSERT_TRUE(vanilla->insert(block(2, 0, 80, 2, 0), cs::StorageLevel::MEMORY_AND_DISK, 0, evicted));
  vanilla->resize_executor(0, 120, evicted); // execution took 80 of executor 0's 200
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].id.rdd, 1); // least recently used
  EXPECT_EQ(vanilla->lookup({0, 1, 0}, 0, 3).source, BlockSource::MISS);
  vanilla->resize_executor(0, 50, evicted); // the MEMORY_AND_DISK block goes to the host's disk
  EXPECT_EQ(vanilla->lookup({0, 2, 0}, 0, 4).source, BlockSource::DISK);
  evicted.clear();
  auto pool = layout("imlayer", future); // host 0's pool: 400 from executors 0 and 1
  ASSERT_TRUE(pool->insert(block(1, 0, 150, 1, 0), cs::StorageLevel::MEMORY_ONLY, 0, evicted));
  ASSERT_TRUE(pool->insert(block(2, 0, 150, 2, 1), cs::StorageLevel::MEMORY_ONLY, 1, evicted));
  pool->resize_executor(1, 150, evicted); // pool 350: still fits
  EXPECT_TRUE(evicted.empty());
  pool->resize_executor(0, 100, evicted); // pool 250: one block goes
  EXPECT_EQ(evicted.size(), 1u);
  pool->resize_executor(0, 200, evicted); // given back: nothing returns, nothing more goes
  EXPECT_EQ(evicted.size(), 1u);
}

} // namespace
