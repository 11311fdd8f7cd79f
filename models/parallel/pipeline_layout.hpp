// Megatron-Core's pipeline layout string (--pipeline-model-parallel-layout): which layers each virtual stage holds.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cs {

/** A layout read from Megatron-Core's string, e.g. "Et*3|(tt|)*29,m|L" (DeepSeek-V3 on PP 16 x VPP 2). Stages are
 *  virtual stages in model order, separated by `|`; `E` is the embedding, `t` a decoder layer, `m` a multi-token
 *  prediction layer, `L` the output layer and loss; `X*N` repeats a symbol or a parenthesised group N times; commas
 *  and spaces are for reading only. */
struct PipelineLayout {
  std::vector<int> layers;  // decoder layers per virtual stage
  std::vector<int> mtp;     // MTP layers per virtual stage
  int embedding_stage = -1; // the stage holding E
  int loss_stage = -1;      // the stage holding L
  int stages() const { return static_cast<int>(layers.size()); }
};

/** Thrown for a string that is not a layout: `offset` is the 0-based character it stops at. */
class LayoutError : public std::invalid_argument {
public:
  LayoutError(std::size_t offset, const std::string& message) : std::invalid_argument(message), offset_(offset) {}
  std::size_t offset() const { return offset_; }

private:
  std::size_t offset_;
};

/** Parses a layout; throws LayoutError for an unknown symbol, an unbalanced parenthesis, a repeat without a count
 *  or above 100,000 stages' worth, or E or L given other than once. */
PipelineLayout parse_pipeline_layout(const std::string& text);

} // namespace cs
