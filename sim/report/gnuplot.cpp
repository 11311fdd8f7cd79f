#include "sim/report/gnuplot.hpp"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace cs {

std::string gnuplot_quote(const std::string& text)
{
  std::string out = "\"";
  for (char c : text)
    out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::string gnuplot_log_axes(const std::vector<double>& x, const std::vector<double>& y)
{
  auto wide = [](const std::vector<double>& v) { // a value of zero or less cannot sit on a log axis
    if (v.empty() || *std::min_element(v.begin(), v.end()) <= 0)
      return false;
    return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end()) > 10;
  };
  const std::string axes = std::string(wide(x) ? "x" : "") + (wide(y) ? "y" : "");
  return axes.empty() ? "" : "set logscale " + axes + "\n";
}

std::vector<std::pair<std::string, std::string>> render_gnuplot(const std::string& script,
                                                                const std::vector<std::string>& expected)
{
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("clustersim-plot-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string text = script;
  for (std::size_t at; (at = text.find("{DIR}")) != std::string::npos;)
    text.replace(at, 5, dir.string());
  {
    std::ofstream(dir / "plot.gp") << text;
  }
  std::vector<std::string> args{"gnuplot", (dir / "plot.gp").string()};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, (dir / "gnuplot.err").c_str(), O_WRONLY | O_CREAT, 0644);
  pid_t pid = -1;
  int status = 0;
  const bool ran = posix_spawnp(&pid, "gnuplot", &files, nullptr, argv.data(), environ) == 0 &&
                   ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  posix_spawn_file_actions_destroy(&files);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& name : expected) {
    std::ifstream in(dir / name, std::ios::binary);
    if (!ran || !in) {
      std::ifstream err(dir / "gnuplot.err");
      std::string first;
      std::getline(err, first);
      fs::remove_all(dir);
      throw std::runtime_error("gnuplot did not draw " + name +
                               (ran ? "" : " (is gnuplot installed? make deps installs gnuplot-nox)") +
                               (first.empty() ? "" : ": " + first));
    }
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out.emplace_back(name, bytes.str());
  }
  fs::remove_all(dir);
  return out;
}

std::string gnuplot_terminals(const std::string& name, const std::string& body)
{
  return "set terminal pngcairo size 1000,600 noenhanced\nset output \"{DIR}/" + name + ".png\"\n" + body +
         "set terminal svg size 1000,600 noenhanced\nset output \"{DIR}/" + name + ".svg\"\nreplot\nset output\n";
}

} // namespace cs
