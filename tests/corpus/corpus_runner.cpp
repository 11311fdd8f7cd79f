// Runs the malformed-input corpus (tests/corpus/cases.tsv) and checks clustersim refuses every case cleanly: exit 2,
// exactly one line on stderr of the form file:line:col: message, nothing written to the case's output folder. Each
// case runs in a child forked from this process (the command line in-process, so no program start per case: what a
// slow CI machine pays most for), with stderr to a file and a 60 s alarm. Prints a tally by outcome and every case
// that was not clean; exits 1 if any.
// Usage: corpus_runner SOURCE_DIR [SHARD K/N] [NAME_FILTER]   (every N-th case from the K-th)
#include "sim/cli/cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

// A case's arguments: words split at blanks, a '...' quoted span kept whole (the only quoting cases.tsv uses).
std::vector<std::string> shell_words(const std::string& text)
{
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false;
  for (char c : text) {
    if (quoted) {
      if (c == '\'')
        quoted = false;
      else
        word += c;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word)
        words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word)
    words.push_back(word);
  return words;
}

// Runs one command line in a forked child; returns the wait status, its stderr in `err`.
int run_case(std::vector<std::string> args, const fs::path& err_file, std::vector<std::string>& err)
{
  args.insert(args.begin(), "clustersim");
  std::cout.flush();
  const pid_t pid = fork();
  if (pid == 0) {
    const int e = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int null = open("/dev/null", O_WRONLY);
    if (e < 0 || null < 0)
      _exit(99);
    dup2(e, 2);
    dup2(null, 1);
    alarm(60);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = cs::run_cli(static_cast<int>(args.size()), argv.data());
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  err.clear();
  std::ifstream in(err_file);
  for (std::string line; std::getline(in, line);)
    err.push_back(line);
  return status;
}

} // namespace

int main(int argc, char** argv)
{
  if (argc < 2) {
    std::cerr << "usage: corpus_runner SOURCE_DIR [K/N] [NAME_FILTER]\n";
    return 2;
  }
  const fs::path root = argv[1];
  const std::string shard = argc > 2 ? argv[2] : "0/1", filter = argc > 3 ? argv[3] : "";
  const int shard_index = std::stoi(shard.substr(0, shard.find('/')));
  const int shard_count = std::stoi(shard.substr(shard.find('/') + 1));
  fs::current_path(root); // case paths are relative to the source tree
  const fs::path work = fs::temp_directory_path() / ("cs_corpus_" + std::to_string(getpid()));
  fs::create_directories(work);
  std::ifstream cases(root / "tests/corpus/cases.tsv");
  const std::regex positioned("^[^:]+:[0-9]+:[0-9]+: .*");
  std::map<std::string, int> tally;
  std::vector<std::string> bad;
  int seen = 0, total = 0;
  for (std::string line; std::getline(cases, line);) {
    const auto tab = line.find('\t');
    if (line.empty() || line[0] == '#' || tab == std::string::npos)
      continue;
    const std::string name = line.substr(0, tab);
    if (!filter.empty() && name.find(filter) == std::string::npos)
      continue;
    if (seen++ % shard_count != shard_index)
      continue;
    const fs::path out = work / ("out-" + std::to_string(++total));
    std::string command = line.substr(tab + 1);
    for (auto at = command.find("{OUT}"); at != std::string::npos; at = command.find("{OUT}"))
      command.replace(at, 5, out.string());
    std::vector<std::string> err;
    const int status = run_case(shell_words(command), work / "stderr", err);
    std::string outcome;
    if (WIFSIGNALED(status))
      outcome = WTERMSIG(status) == SIGALRM ? "hang (stopped after 60 s)"
                                            : "crash (signal " + std::to_string(WTERMSIG(status)) + ")";
    else if (WEXITSTATUS(status) == 2)
      outcome = err.size() == 1 && std::regex_match(err[0], positioned) && !fs::exists(out)
                    ? "clean"
                    : "exit 2 without one positioned line, or with output written";
    else if (WEXITSTATUS(status) == 0)
      outcome = "accepted (exit 0)";
    else if (WEXITSTATUS(status) == 1)
      outcome = "failed run (exit 1)";
    else
      outcome = "crash (exit " + std::to_string(WEXITSTATUS(status)) + ")";
    ++tally[outcome];
    if (outcome != "clean") {
      std::string joined;
      for (const auto& e : err)
        joined += e + " ";
      bad.push_back(name + ": " + outcome + ": " + joined.substr(0, 300));
    }
  }
  fs::remove_all(work);
  std::cout << "malformed-input corpus: " << total << " cases (shard " << shard << ")\n";
  for (const auto& [outcome, count] : tally)
    std::printf("  %-60s %d\n", outcome.c_str(), count);
  for (const auto& b : bad)
    std::cout << "  NOT CLEAN " << b << "\n";
  return bad.empty() ? 0 : 1;
}
