#include "sim/cli/output_files.hpp"

#include "base/input_error.hpp"
#include "base/interrupt.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h> // access

namespace fs = std::filesystem;

namespace cs {
namespace {

constexpr const char* kManifest = ".clustersim-outputs";

std::set<std::string> previous_outputs(const fs::path& dir)
{
  std::set<std::string> names;
  std::ifstream in(dir / kManifest);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.find('/') == std::string::npos && line != "." && line != "..")
      names.insert(line);
  return names;
}

void write_one(const fs::path& path, const std::string& text)
{
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + path.string());
}

} // namespace

void check_output_dir(const std::string& dir, const std::string& option)
{
  auto refuse = [&](const std::string& why) {
    throw InputError("<command line>", 1, 1, option + " " + dir + ": " + why);
  };
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(dir), ec);
  if (ec)
    refuse("not a usable path");
  if (fs::exists(p, ec) && !fs::is_directory(p, ec))
    refuse("is a file, not a folder");
  // The nearest existing ancestor must be a writable folder (not a file: a path under a file cannot be made).
  fs::path existing = p;
  while (!fs::exists(existing, ec) && existing.has_parent_path() && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    refuse(existing.string() + " is a file, so the folder cannot be made");
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    refuse(existing.string() + " is not writable");
}

void write_output_set(const std::string& dir_text, const std::vector<std::pair<std::string, std::string>>& files)
{
  const fs::path dir(dir_text);
  InterruptsHeld held;
  fs::create_directories(dir);
  std::vector<std::pair<fs::path, fs::path>> staged;
  try {
    for (const auto& [name, text] : files) {
      fs::path tmp = dir / ("." + name + ".tmp");
      staged.emplace_back(tmp, dir / name);
      write_one(tmp, text);
    }
  } catch (...) {
    std::error_code ignored;
    for (const auto& [tmp, final_path] : staged)
      fs::remove(tmp, ignored);
    throw;
  }
  for (const auto& [tmp, final_path] : staged)
    fs::rename(tmp, final_path);
  std::set<std::string> now;
  std::ostringstream manifest;
  for (const auto& [name, text] : files) {
    now.insert(name);
    manifest << name << "\n";
  }
  std::error_code ignored;
  for (const auto& name : previous_outputs(dir))
    if (!now.count(name))
      fs::remove(dir / name, ignored);
  write_one(dir / (std::string(kManifest) + ".tmp"), manifest.str());
  fs::rename(dir / (std::string(kManifest) + ".tmp"), dir / kManifest);
}

} // namespace cs
