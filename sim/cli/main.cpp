// clustersim's command line. Exit 0 ok, 1 a run that failed, 2 bad input (one line file:line:col: message).
#include "base/heap_policy.hpp"
#include "sim/cli/cli.hpp"

int main(int argc, char** argv)
{
  cs::keep_freed_memory();
  return cs::run_cli(argc, argv);
}
