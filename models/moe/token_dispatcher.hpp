// Token dispatchers: how an MoE layer's routed tokens reach their experts' ranks and come back (Megatron-Core's
// moe_token_dispatcher_type, and the flex dispatcher's backends), one registered file each: alltoall, allgather,
// deepep, hybridep.
#pragma once

#include "base/registry.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace cs {

/** The expert-parallel group a dispatcher moves tokens over. */
struct DispatchGroup {
  int ranks = 1;
  std::vector<int> machine; // per EP rank, the machine (node) it is on
  int experts = 1;          // routed experts, spread evenly over the ranks
  int top_k = 1;
  int max_nodes_per_token = 0; // node-limited routing (DeepSeek-V3: 4); 0 = unlimited
};

/** What a dispatcher's communication buffers are sized by, on one GPU of an EP group. */
struct DispatchBufferShape {
  int ranks = 1;            // the EP group
  int gpus_per_node = 8;    // of them on a node at most
  double hidden = 0;        // a token's values
  double hidden_bytes = 0;  // a token's bytes as the dispatch sends it (Megatron-Core: at 16 bits or more a value)
  double tokens = 0;        // tokens a rank dispatches per microbatch
  int experts_per_rank = 1; // routed experts each rank holds
  int sms = 0;              // SMs its kernels run on
};

class TokenDispatcher {
public:
  virtual ~TokenDispatcher() = default;
  /** The bytes EP rank i sends rank j to dispatch one microbatch (row-major, ranks x ranks), from `routed`: one copy
   *  per routed (token, expert) pair, what the all-to-all of Megatron's default dispatcher moves. The combine moves
   *  the transpose. */
  virtual std::vector<double> traffic(const std::vector<double>& routed, const DispatchGroup& group) const = 0;
  /** Whether the permutation into expert order and its inverse are fused into the dispatch and combine kernels (no
   *  kernels of their own). */
  virtual bool fuses_permutation() const { return false; }
  /** The share of a GPU's compute its kernels take while they run beside compute (only an overlapped schedule puts
   *  them there): NCCL's all-to-all takes the framework's `comm_sm_fraction` unless the dispatcher reserves SMs of
   *  its own (`sms` of the device's `device_sms`). */
  virtual double sm_share(double comm_sm_fraction, int sms, int device_sms) const
  {
    (void)sms;
    (void)device_sms;
    return comm_sm_fraction;
  }
  /** Bytes of communication buffers it keeps allocated on each GPU: none for NCCL's collectives, whose buffers the
   *  memory reserve covers. */
  virtual double buffer_bytes(const DispatchBufferShape& shape) const
  {
    (void)shape;
    return 0;
  }
};

/** The bytes of a dispatch that goes to another node once per token, over RDMA to the GPU of its sender's rail there,
 *  which forwards it over NVLink to each GPU holding one of its experts; within a node once per GPU however many of
 *  that GPU's experts it chose (DeepEP's normal kernels, HybridEP). [recon] The routing gives bytes per (sender,
 *  receiver) pair, not per token, so the deduplication is the expected one under uniform choice of top_k of `experts`
 *  experts spread evenly: a GPU or node holding e of them gets a token with probability 1 - C(E-e, k)/C(E, k) against
 *  k e / E copies, and with node-limited routing at most max_nodes_per_token of the group's nodes. */
std::vector<double> node_forwarded_traffic(const std::vector<double>& routed, const DispatchGroup& group);

/** A dispatcher that moves node_forwarded_traffic with the permutation fused and its kernels on SMs of their own (the
 *  flex dispatcher's backends: DeepEP's normal kernels, HybridEP). */
class NodeForwardingDispatcher : public TokenDispatcher {
public:
  bool fuses_permutation() const override { return true; }
  std::vector<double> traffic(const std::vector<double>& routed, const DispatchGroup& group) const override
  {
    return node_forwarded_traffic(routed, group);
  }
  double sm_share(double comm_sm_fraction, int sms, int device_sms) const override
  {
    return device_sms > 0 ? std::min(0.9, double(sms) / device_sms) : comm_sm_fraction;
  }
};

/** The dispatcher registered as `name`; throws std::out_of_range listing the names. */
const TokenDispatcher& token_dispatcher(const std::string& name);

/** Registers `Type` as token dispatcher `name` at static-initialisation time. */
#define CS_REGISTER_TOKEN_DISPATCHER(Type, name, description)                                                          \
  static const bool cs_registered_dispatcher_##Type = ::cs::Registry<::cs::TokenDispatcher>::instance().add(           \
      name, description, [] { return std::unique_ptr<::cs::TokenDispatcher>(new Type()); })

} // namespace cs
