#include "sim/plan/split_loop.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sys/wait.h>
#include <unistd.h>

namespace cs {

namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Which side runs index i: blocks of kBlock indices in turn, so that neighbours (which share the planner's caches, as
// plans that differ in ZeRO alone share their stages' prices) mostly fall on one side.
constexpr std::size_t kBlock = 512;
bool in_child(std::size_t i) { return i / kBlock % 2 == 1; }

// The child's life: its indices' lines ("<index> <line>") into the shared file, then exit without running the
// parent's destructors. A file, not a socket: the parent reads once it is done with its own half, and a socket's
// buffer would have held the child back until then.
[[noreturn]] void answer(std::FILE* out, std::size_t n, const std::function<std::string(std::size_t)>& there)
{
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  for (std::size_t i = 0; i < n; ++i) {
    if (!in_child(i))
      continue;
    std::string line;
    try {
      line = there(i);
    } catch (const std::exception&) {
      continue; // the parent runs it again and meets the error itself
    }
    if (std::fprintf(out, "%zu %s\n", i, line.c_str()) < 0)
      _exit(3);
  }
  _exit(std::fflush(out) == 0 ? 0 : 3);
}

} // namespace

std::vector<std::optional<std::string>> split_loop(std::size_t n, bool split,
                                                   const std::function<void(std::size_t)>& here,
                                                   const std::function<std::string(std::size_t)>& there)
{
  std::vector<std::optional<std::string>> lines(n);
  File file(split && n > 1 ? std::tmpfile() : nullptr, &std::fclose);
  pid_t pid = -1;
  if (file) {
    std::fflush(nullptr); // nothing buffered is written twice
    pid = fork();
    if (pid == 0)
      answer(file.get(), n, there);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (pid <= 0 || !in_child(i))
      here(i);
  if (pid <= 0)
    return lines;
  int status = 0;
  waitpid(pid, &status, 0);
  std::rewind(file.get());
  char* buffer = nullptr;
  std::size_t capacity = 0;
  for (ssize_t length; (length = getline(&buffer, &capacity, file.get())) > 0;) {
    if (buffer[length - 1] != '\n') // cut short: the child died writing it
      continue;
    const std::string line(buffer, static_cast<std::size_t>(length - 1));
    const std::size_t space = line.find(' ');
    const std::size_t i = std::strtoull(line.c_str(), nullptr, 10);
    if (space != std::string::npos && i < n && in_child(i))
      lines[i] = line.substr(space + 1);
  }
  std::free(buffer);
  for (std::size_t i = 0; i < n; ++i) // what the child did not answer
    if (in_child(i) && !lines[i])
      here(i);
  return lines;
}

} // namespace cs
