// Test helper: runs the clustersim binary with arguments and captures exit code, stdout and stderr.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace cs::testing {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline CliResult run_clustersim(const std::string& args)
{
  static int counter = 0;
  auto err = std::filesystem::temp_directory_path() /
             ("cs_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  FILE* pipe = popen((std::string(CS_BINARY) + " " + args + " 2>" + err.string()).c_str(), "r");
  CliResult r;
  std::array<char, 4096> buf{};
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove(err);
  return r;
}

} // namespace cs::testing
