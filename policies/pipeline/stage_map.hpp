// Where a pipeline's virtual stages run: which model chunk of which device holds each slice of the model.
#pragma once

#include <vector>

namespace cs {

/** The placement of virtual stages on pipeline devices. Virtual stages are numbered in model order (stage 0 holds the
 *  first layers and the embedding, the last one the output layer); device d's model chunk c is stage(d, c). Megatron's
 *  interleaved placement puts stage c x devices + d there; a V-shaped placement (DualPipeV, ZB-V) sends the second
 *  chunk back down the devices. A schedule owns its map (PipelineSchedule::stage_map); nothing else writes one out. */
class StageMap {
public:
  /** One device holding one chunk. */
  StageMap() = default;
  /** Megatron's interleaved placement: stage = chunk x devices + device (chunks = 1: stage = device). */
  static StageMap interleaved(int devices, int chunks);
  /** From a table: stage_of[device][chunk]. Throws std::invalid_argument unless every device has the same number of
   *  chunks and the table numbers the stages 0 .. devices x chunks - 1 once each. */
  static StageMap from_table(const std::vector<std::vector<int>>& stage_of);

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

private:
  int devices_ = 1, chunks_ = 1;
  std::vector<int> stage_{0};             // [device x chunks + chunk]
  std::vector<int> device_{0}, chunk_{0}; // per stage
};

} // namespace cs
