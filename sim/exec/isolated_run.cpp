#include "sim/exec/isolated_run.hpp"

#include <cstdio>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace cs {

std::string run_isolated(const std::function<std::string()>& work)
{
  int fds[2];
  if (pipe(fds) != 0)
    throw std::runtime_error("pipe() failed");
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error("fork() failed");
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int status = 0;
    try {
      out = "ok:" + work();
    } catch (const std::exception& e) {
      out = std::string("error:") + e.what();
      status = 1;
    }
    const char* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      ssize_t w = write(fds[1], p, left);
      if (w <= 0)
        _exit(3);
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    close(fds[1]);
    _exit(status);
  }
  close(fds[1]);
  std::string data;
  char buffer[65536];
  for (ssize_t r; (r = read(fds[0], buffer, sizeof buffer)) > 0;)
    data.append(buffer, static_cast<std::size_t>(r));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (data.rfind("ok:", 0) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return data.substr(3);
  if (data.rfind("error:", 0) == 0)
    throw std::runtime_error(data.substr(6));
  throw std::runtime_error("isolated run died (status " + std::to_string(status) + ")");
}

} // namespace cs
