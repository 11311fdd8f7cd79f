// LRC, least reference count (Yu, Wang, Zhang, Letaief, INFOCOM'17): a block's reference count is the number of
// stages still to run that read it, from the application's DAG; the block with the fewest goes first (ties: LRU).
// [recon] The paper counts unfinished child blocks of the submitted jobs' DAG; clustersim counts, per block, the
// stages of the whole application plan still to read its RDD (what a recurring application's profile gives).
#include "models/spark/spark_cache.hpp"

namespace cs {

class LrcEviction : public CacheEviction {
public:
  std::size_t victim(const std::vector<const CachedBlock*>& blocks, const BlockFuture& future) const override
  {
    std::size_t best = 0;
    int best_refs = future.references(blocks[0]->id);
    for (std::size_t i = 1; i < blocks.size(); ++i) {
      const int refs = future.references(blocks[i]->id);
      if (refs < best_refs || (refs == best_refs && blocks[i]->last_used < blocks[best]->last_used)) {
        best = i;
        best_refs = refs;
      }
    }
    return best;
  }
};

static const bool cs_registered_lrc =
    Registry<CacheEviction>::instance().add("lrc", "least reference count from the DAG (Yu et al., INFOCOM'17) [recon]",
                                            [] { return std::unique_ptr<CacheEviction>(new LrcEviction()); });

} // namespace cs
