// What both Spark cache layouts share: the eviction policy they are configured with and the disk copies.
#pragma once

#include "models/spark/spark_cache.hpp"

#include <string>

namespace cs {

class CacheLayoutBase : public SparkCache {
public:
  void configure(ObjectReader& r) override
  {
    r.choice("eviction", eviction_name_, Registry<CacheEviction>::instance().names(),
             "which cached block a full store gives up: lru (Spark's), lrc or mrd");
    eviction_ = Registry<CacheEviction>::instance().create(eviction_name_);
  }
  void bind(const BlockFuture& future) override { future_ = &future; }
  std::string eviction_name() const override { return eviction_name_; }

protected:
  explicit CacheLayoutBase(std::string eviction) : eviction_name_(std::move(eviction))
  {
    eviction_ = Registry<CacheEviction>::instance().create(eviction_name_);
  }

  std::string eviction_name_;
  std::unique_ptr<CacheEviction> eviction_;
  const BlockFuture* future_ = nullptr;
  DiskBlocks disk_;
};

} // namespace cs
