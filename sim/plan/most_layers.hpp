// The most layers a pipeline stage can hold within a memory budget, in few evaluations of its memory.
#pragma once

#include <functional>

namespace cs {

/** The largest l in [0, hi] with memory(l) <= budget, for a memory that grows with l (0 when even one layer is over;
 *  memory(0) is not asked). A stage's memory grows nearly in proportion to its layers, so it asks the ends first,
 *  then the count their line crosses the budget at and the one after, and bisects what is left: four evaluations
 *  where a bisection takes six or seven. */
int most_layers_within(int hi, double budget, const std::function<double(int)>& memory);

} // namespace cs
