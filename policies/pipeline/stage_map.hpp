// Where a pipeline's virtual stages run: which model chunk of which device holds each slice of the model.
#pragma once

#include <vector>

namespace cs {

/** The placement of virtual stages on pipeline devices. Virtual stages are numbered in model order (stage 0 holds the
 *  first layers and the embedding, the last one the output layer); device d's model chunk c is stage(d, c). Megatron's
 *  interleaved placement puts stage c x devices + d there; a V-shaped placement (DualPipeV, ZB-V) sends the second
 *  chunk back down the devices. A schedule owns its map (PipelineSchedule::stage_map); nothing else writes one out.
 *
 *  A map can hold more than one copy of the model (DualPipe's two, fed from opposite ends): the stages then form
 *  `chains()` chains of chain_length() stages each, numbered chain after chain, each a whole model from embedding to
 *  loss with its own microbatches. Stages at the same position of different chains hold the same layers and the same
 *  parameters, whose gradients are reduced together. */
class StageMap {
public:
  /** One device holding one chunk. */
  StageMap() = default;
  /** Megatron's interleaved placement: stage = chunk x devices + device (chunks = 1: stage = device). */
  static StageMap interleaved(int devices, int chunks);
  /** From a table: stage_of[device][chunk]. Throws std::invalid_argument unless every device has the same number of
   *  chunks and the table numbers the stages 0 .. devices x chunks - 1 once each. */
  static StageMap from_table(const std::vector<std::vector<int>>& stage_of);
  /** The same, for `chains` copies of the model: stages c x chain_length() .. (c + 1) x chain_length() - 1 are copy
   *  c's. Throws std::invalid_argument unless chains divides the stages. */
  static StageMap from_table(const std::vector<std::vector<int>>& stage_of, int chains);

  int devices() const { return devices_; }
  int chunks() const { return chunks_; }
  int stages() const { return devices_ * chunks_; }
  /** The virtual stage device `device`'s chunk `chunk` holds. */
  int stage(int device, int chunk) const { return stage_[static_cast<std::size_t>(device) * chunks_ + chunk]; }
  /** The device and chunk that hold virtual stage `stage`. */
  int device_of(int stage) const { return device_[static_cast<std::size_t>(stage)]; }
  int chunk_of(int stage) const { return chunk_[static_cast<std::size_t>(stage)]; }
  /** Whether this is the interleaved placement. */
  bool is_interleaved() const;

  /** Copies of the model the stages hold (1 but for DualPipe), and the stages of each. */
  int chains() const { return chains_; }
  int chain_length() const { return stages() / chains_; }
  /** A stage's place in its chain: 0 holds the embedding, chain_length() - 1 the output layer and the loss. */
  int position(int stage) const { return stage % chain_length(); }
  bool chain_first(int stage) const { return position(stage) == 0; }
  bool chain_last(int stage) const { return position(stage) == chain_length() - 1; }
  /** Whether `device` holds the last stage of a chain (an output layer and its loss). */
  bool holds_chain_last(int device) const
  {
    for (int c = 0; c < chunks_; ++c)
      if (chain_last(stage(device, c)))
        return true;
    return false;
  }
  /** The stage at the same position of the next chain (wrapping): the one whose parameters this stage's copy shares;
   *  itself when there is one chain. */
  int twin(int stage) const { return (stage + chain_length()) % stages(); }

private:
  int devices_ = 1, chunks_ = 1, chains_ = 1;
  std::vector<int> stage_{0};             // [device x chunks + chunk]
  std::vector<int> device_{0}, chunk_{0}; // per stage
};

} // namespace cs
