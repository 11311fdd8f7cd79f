#include "sim/exec/isolated_run.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace cs {

pid_t fork_with(int fds[2])
{
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error("fork() failed");
  }
  return pid;
}

namespace {

// A child running one function, its result on the read end of a pipe.
struct Child {
  pid_t pid = -1;
  int fd = -1;
};

Child start_child(const std::function<std::string()>& work)
{
  int fds[2];
  if (pipe(fds) != 0)
    throw std::runtime_error("pipe() failed");
  const pid_t pid = fork_with(fds);
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
  return {pid, fds[0]};
}

// Reads the child's result to its end and reaps it: "ok:..." or an error message (`failed` set).
std::string finish_child(const Child& c, bool* failed)
{
  std::string data;
  char buffer[65536];
  for (ssize_t r; (r = read(c.fd, buffer, sizeof buffer)) > 0;)
    data.append(buffer, static_cast<std::size_t>(r));
  close(c.fd);
  int status = 0;
  waitpid(c.pid, &status, 0);
  *failed = true;
  if (data.rfind("ok:", 0) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    *failed = false;
    return data.substr(3);
  }
  if (data.rfind("error:", 0) == 0)
    return data.substr(6);
  return "isolated run died (status " + std::to_string(status) + ")";
}

} // namespace

std::string run_isolated(const std::function<std::string()>& work) { return run_isolated_all({work}, 1).front(); }

std::vector<std::string> run_isolated_all(const std::vector<std::function<std::string()>>& works, int jobs)
{
  std::vector<std::string> out(works.size());
  std::string error;
  // Children run in waves of `jobs`; each wave's results are read in order (a child whose result outgrows its pipe
  // waits for its turn to be read, and no child waits on another).
  for (std::size_t first = 0; first < works.size(); first += static_cast<std::size_t>(std::max(1, jobs))) {
    const std::size_t last = std::min(works.size(), first + static_cast<std::size_t>(std::max(1, jobs)));
    std::vector<Child> wave;
    try {
      for (std::size_t i = first; i < last; ++i)
        wave.push_back(start_child(works[i]));
    } catch (const std::exception& e) {
      error = e.what();
    }
    for (std::size_t k = 0; k < wave.size(); ++k) {
      bool failed = false;
      out[first + k] = finish_child(wave[k], &failed);
      if (failed && error.empty())
        error = out[first + k];
    }
    if (!error.empty())
      throw std::runtime_error(error);
  }
  return out;
}

} // namespace cs
