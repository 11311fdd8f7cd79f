// The fuzz smoke of make test: every libFuzzer target of fuzz/ built by the ordinary compiler into one program, each
// run on the kept regressions, its seeds and a fixed number of seeded mutations of each seed (bit flips, interesting
// bytes and tokens, cut, repeated or removed spans). No sanitizer: it catches crashes, aborts (a reader letting
// through what its bounds refuse), uncaught exceptions and hangs (a 10 s alarm an input) in seconds, with no clang
// build; `make fuzz` is the instrumented, coverage-guided run.
// Usage: fuzz_smoke TARGET MUTATIONS_PER_SEED FILE_OR_DIR...
#include "base/splitmix.hpp"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

// Each target's LLVMFuzzerTestOneInput, renamed when compiled for this program (fuzz/CMakeLists.txt).
extern "C" int cs_fuzz_units(const std::uint8_t*, std::size_t);
extern "C" int cs_fuzz_trace(const std::uint8_t*, std::size_t);
extern "C" int cs_fuzz_profile(const std::uint8_t*, std::size_t);
extern "C" int cs_fuzz_measurements(const std::uint8_t*, std::size_t);
extern "C" int cs_fuzz_job_traces(const std::uint8_t*, std::size_t);
extern "C" int cs_fuzz_scenario(const std::uint8_t*, std::size_t);
extern "C" int cs_fuzz_set(const std::uint8_t*, std::size_t);
extern "C" int cs_fuzz_import(const std::uint8_t*, std::size_t);

namespace {

using Target = int (*)(const std::uint8_t*, std::size_t);

const std::map<std::string, Target>& targets()
{
  static const std::map<std::string, Target> t{
      {"units", cs_fuzz_units},       {"trace", cs_fuzz_trace},           {"profile", cs_fuzz_profile},
      {"measurements", cs_fuzz_measurements}, {"job_traces", cs_fuzz_job_traces}, {"scenario", cs_fuzz_scenario},
      {"set", cs_fuzz_set}, {"import", cs_fuzz_import}};
  return t;
}

// One seeded mutation of `in` (one to four edits). The first byte is kept where it selects a reader.
std::string mutate(const std::string& in, std::uint64_t seed)
{
  static const char* tokens[] = {"1e308", "-1", "nan", "inf", "0x10", "null", "[]", "{}", "\"", "''", "&a [*a]",
                                 "99999999999999999999", "-0", "1e-320", "\n", ",", ":", "\t", "{{{{", "]]]]"};
  static const char bytes[] = {'\0', '\xff', '\n', '"', '{', '}', '[', ']', ',', ':', '-', '9', '.', 'e', '\\', '#'};
  std::string s = in;
  std::uint64_t x = seed;
  auto next = [&x] { return x = cs::splitmix64(x); };
  const int edits = 1 + static_cast<int>(next() % 4);
  for (int i = 0; i < edits; ++i) {
    const std::size_t n = s.size();
    const std::size_t at = n > 1 ? 1 + next() % (n - 1) : 0;
    switch (next() % 6) {
    case 0:
      if (n > 1)
        s[at] = static_cast<char>(s[at] ^ (1 << (next() % 8)));
      break;
    case 1:
      if (n > 1)
        s[at] = bytes[next() % sizeof bytes];
      break;
    case 2:
      s.insert(std::min(at, n), tokens[next() % (sizeof tokens / sizeof *tokens)]);
      break;
    case 3: // cut the tail
      s.resize(std::min(n, at));
      break;
    case 4: // remove a span
      if (n > 1)
        s.erase(at, next() % std::min<std::size_t>(n - at, 64) + 1);
      break;
    default: // repeat a span
      if (n > 1)
        s.insert(at, s.substr(at, next() % std::min<std::size_t>(n - at, 256) + 1));
      break;
    }
  }
  return s;
}

std::string read(const std::filesystem::path& p)
{
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What is running, printed only if it crashes or hangs.
char g_current[512];

extern "C" void report_and_die(int sig)
{
  const char* head = "fuzz_smoke: this input fails: ";
  (void)!write(2, head, std::strlen(head));
  (void)!write(2, g_current, std::strlen(g_current));
  (void)!write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void run(Target t, const std::string& input, const std::string& what)
{
  std::snprintf(g_current, sizeof g_current, "%s", what.c_str());
  alarm(10); // a hang becomes a failure
  t(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  alarm(0);
}

} // namespace

int main(int argc, char** argv)
{
  if (argc < 4 || !targets().count(argv[1])) {
    std::fprintf(stderr, "usage: fuzz_smoke TARGET MUTATIONS_PER_SEED FILE_OR_DIR...\n");
    return 2;
  }
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM})
    std::signal(sig, report_and_die);
  const Target t = targets().at(argv[1]);
  const long mutations = std::stol(argv[2]);
  std::vector<std::filesystem::path> files;
  for (int i = 3; i < argc; ++i)
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& e : std::filesystem::directory_iterator(argv[i]))
        files.push_back(e.path());
    } else if (std::filesystem::exists(argv[i])) {
      files.push_back(argv[i]);
    }
  std::sort(files.begin(), files.end()); // the same order, so the same mutations, on every machine
  long runs = 0;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::string seed = read(files[f]);
    run(t, seed, files[f].string());
    ++runs;
    for (long m = 0; m < mutations; ++m, ++runs)
      run(t, mutate(seed, cs::splitmix64(f * 1000003 + static_cast<std::uint64_t>(m))),
          files[f].string() + " mutation " + std::to_string(m));
  }
  std::printf("fuzz_smoke %s: %ld inputs from %zu files\n", argv[1], runs, files.size());
  return 0;
}
