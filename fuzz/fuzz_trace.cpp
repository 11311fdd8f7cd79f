// libFuzzer target: a MapReduce trace (the format is the first byte: s = SWIM, r = rumen, j = jhist; the rest is the
// file). Readers stream from a path, so the input goes through a file in /dev/shm. Every job read is within bounds.
#include "base/input_error.hpp"
#include "traces/trace_job.hpp"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0)
    return 0;
  const char* format = data[0] == 'r' ? "rumen" : data[0] == 'j' ? "jhist" : "swim";
  static const std::string path = "/dev/shm/cs_fuzz_trace_" + std::to_string(::getpid());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    cs::read_trace(format, path, [](cs::TraceJob&& job) {
      if (!cs::trace_job_out_of_bounds(job).empty())
        std::abort(); // a reader let through a job the bounds refuse
    });
  } catch (const cs::InputError&) {
  }
  return 0;
}
