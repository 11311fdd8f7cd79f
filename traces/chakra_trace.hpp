// Chakra execution traces (MLCommons; what ASTRA-sim replays) read into one rank's graph of operations: the
// protobuf `.et` stream and its JSON form, with durations, dependencies, threads and streams, collectives' sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cs {

/** One node of the graph. Times in seconds; `start` < 0 when the trace has no start times. */
struct ChakraNode {
  enum Type { COMPUTE = 4, SEND = 5, RECV = 6, COLLECTIVE = 7 }; // Chakra's NodeType numbers; others kept as read
  std::uint64_t id = 0;
  std::string name;
  int type = COMPUTE;
  bool cpu = false;      // is_cpu_op: a CPU operator rather than a GPU kernel or copy
  long long tid = -1;    // the CPU thread or GPU stream it ran on (-1: not recorded)
  double duration = 0;   // measured; 0 when not recorded (proto3 omits zeros)
  double start = -1;     // start_time_micros, when recorded
  int comm_type = -1;    // CollectiveCommType: 0 all-reduce, 2 all-gather, 5 broadcast, 6 all-to-all, 7 reduce-scatter
  double comm_bytes = 0; // comm_size
  long long comm_src = -1, comm_dst = -1; // a send's or receive's ranks (comm_src, comm_dst), -1 when not recorded
  // Data dependencies on nodes of this trace. Control dependencies are not read: Chakra's PyTorch converter writes
  // the operator hierarchy there (a CPU op and its kernel name each other, forming cycles), and ASTRA-sim's feeder
  // schedules on data dependencies.
  std::vector<std::uint64_t> deps;
};

struct ChakraTrace {
  std::string file;
  std::string form;              // "protobuf" or "json"
  std::string schema;            // the metadata's schema or version, "" when absent
  int world_size = 0;            // the JSON form's ngpus; 0 when the trace does not say
  std::vector<ChakraNode> nodes; // as they appear in the file
  int dropped_deps = 0;          // dependencies on nodes the trace does not hold (Chakra's root node, say), left out
};

/** Reads a Chakra trace: `.et` (varint-length-delimited protobuf: GlobalMetadata, then Node messages) or the JSON
 *  form (`{"workload_graph": [...]}`), either optionally gzip-compressed, at most 1 GiB inflated; a name ending in
 *  `.et` or `.et.gz` is protobuf, otherwise a document starting with `{` is JSON. Truncated or
 *  corrupt messages are InputError naming the node's index and byte offset; JSON errors give the line and column or
 *  the JSON path; a node id given twice, a negative or absurd duration and an empty graph are errors. */
ChakraTrace read_chakra(const std::string& path);

/** Parses an `.et` byte stream already in memory (the fuzz target's entry point). */
ChakraTrace parse_chakra_et(const std::string& bytes, const std::string& file);
/** Parses the JSON form's text already in memory. */
ChakraTrace parse_chakra_json(const std::string& text, const std::string& file);

/** The nodes' indices in an order that respects every dependency, the lowest id first among those ready (the order
 *  the trace recorded them in); InputError naming a node on the cycle when the dependencies form one. */
std::vector<std::size_t> chakra_order(const ChakraTrace& trace);

/** Whether `path` names a Chakra trace by its extension (.et, .et.gz) or holds a JSON `workload_graph`. */
bool looks_like_chakra(const std::string& path);

} // namespace cs
