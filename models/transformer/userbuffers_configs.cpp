#include "models/transformer/userbuffers_configs.hpp"

namespace cs {
namespace {

// The ten layers in one row: the backward's bulk overlaps (their SMs, with no margin in every configuration here),
//, then how the two output projections' forward reduce-scatters run. The all-gather overlaps
// (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad) are ring exchanges on the copy engines in every one of them.
std::map<std::string, UbOverlap> layers(int qkv_dgrad, int qkv_wgrad, int fc1_dgrad, int fc1_wgrad, UbOverlap proj,
                                        UbOverlap fc2)
{
  const UbOverlap ring{"ring_exchange", 1, false};
  return {{"qkv_fprop", ring},
          {"qkv_dgrad", {"bulk", qkv_dgrad, false}},
          {"qkv_wgrad", {"bulk", qkv_wgrad, false}},
          {"proj_fprop", proj},
          {"proj_dgrad", ring},
          {"fc1_fprop", ring},
          {"fc1_dgrad", {"bulk", fc1_dgrad, false}},
          {"fc1_wgrad", {"bulk", fc1_wgrad, false}},
          {"fc2_fprop", fc2},
          {"fc2_dgrad", ring}};
}

UbOverlap pipeline(int sms) { return {"pipeline", sms, true}; }

std::map<std::string, UbOverlap> te2_defaults()
{
  std::map<std::string, UbOverlap> out;
  for (const auto& layer : ub_layer_names())
    out[layer] = te_default_overlap(layer);
  return out;
}
const UbOverlap ring_margin{"ring_exchange", 1, true}; // one SM kept from the GEMM

} // namespace

const std::map<std::string, std::map<std::string, UbOverlap>>& userbuffers_configs()
{
  static const std::map<std::string, std::map<std::string, UbOverlap>> configs{
      // Megatron-Bridge: Llama 3 70B at TP 4 (its performance scripts' H100 choice), Llama 3.1 405B at TP 8 with
      // CP 2, GPT-3 175B at TP 4, GPT-3 20B at TP 2; B200 configurations for the same models.
      {"userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192", layers(4, 24, 2, 4, pipeline(24), pipeline(16))},
      {"userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192", layers(4, 24, 2, 4, ring_margin, ring_margin)},
      {"userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192", layers(2, 24, 2, 2, pipeline(24), pipeline(8))},
      {"userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192", layers(2, 24, 2, 2, ring_margin, ring_margin)},
      {"userbuffers_bf16_h100_h12288_tp4_mbs1_seqlen2048", layers(4, 4, 2, 4, pipeline(24), ring_margin)},
      {"userbuffers_fp8_h100_h12288_tp4_mbs1_seqlen2048", layers(4, 4, 2, 4, ring_margin, ring_margin)},
      {"userbuffers_bf16_h100_h6144_tp2_mbs2_seqlen2048", layers(8, 16, 4, 16, pipeline(16), pipeline(24))},
      {"userbuffers_fp8_h100_h6144_tp2_mbs2_seqlen2048", layers(8, 16, 4, 16, pipeline(16), pipeline(24))},
      {"userbuffers_bf16_b200_h8192_tp2_mbs1_seqlen8192", layers(16, 24, 2, 4, pipeline(32), pipeline(16))},
      {"userbuffers_fp8_b200_h8192_tp2_mbs1_seqlen8192", layers(4, 24, 2, 4, ring_margin, ring_margin)},
      {"userbuffers_bf16_b200_h16384_tp4_cp2_mbs1_seqlen8192", layers(8, 24, 2, 2, pipeline(32), pipeline(8))},
      {"userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192", layers(8, 32, 2, 8, ring_margin, ring_margin)},
      {"userbuffers_bf16_b200_h12288_tp4_mbs1_seqlen2048", layers(4, 16, 2, 8, ring_margin, ring_margin)},
      {"userbuffers_fp8_b200_h12288_tp4_mbs1_seqlen2048", layers(4, 16, 2, 8, ring_margin, ring_margin)},
      // NeMo-Framework-Launcher (NeMo 1.x, Transformer Engine 1.x): Llama 2 70B at TP 4 (its llama2_70b.yaml's),
      // Llama 3 70B in FP8 at 8K tokens, GPT-3 175B at TP 4, GPT-3 20B at TP 2 (its gpt3/20b.yaml's).
      {"ub_cfg_h100_h8192_tp4_mbs1_seqlen4096", layers(8, 16, 2, 4, pipeline(24), pipeline(16))},
      {"ub_cfg_h100_fp8_h8192_tp4_mbs1_seqlen8192", layers(4, 24, 2, 4, pipeline(24), pipeline(16))},
      {"ub_cfg_h100_h12288_tp4_mbs2_seqlen2048", layers(4, 4, 2, 4, pipeline(24), ring_margin)},
      {"ub_cfg_h100_h6144_tp2_mbs2_seqlen2048", layers(8, 16, 4, 16, pipeline(16), pipeline(24))},
      // Transformer Engine's own defaults (initialize_ub) for a run that names no configuration: 16 SMs for every
      // pipeline and bulk overlap, the GEMM launched without them since TE 2.0 (the megatron-core profile's), not in
      // TE 1.x.
      {"transformer_engine_1_defaults",
       layers(16, 16, 16, 16, UbOverlap{"pipeline", 16, false}, UbOverlap{"pipeline", 16, false})},
      {"transformer_engine_2_defaults", te2_defaults()},
  };
  return configs;
}

} // namespace cs
