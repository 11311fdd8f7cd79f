// clustersim's command line as a function, so that a program other than clustersim (the malformed-input corpus
// runner) can run a command line without starting the binary again.
#pragma once

namespace cs {

/** Parses and runs one clustersim command line. Returns the exit code: 0 ok, 1 a run that failed, 2 bad input (one
 *  line file:line:col: message on stderr). */
int run_cli(int argc, char** argv);

} // namespace cs
