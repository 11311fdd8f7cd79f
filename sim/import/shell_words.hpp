// Splits a launch command or an argument file into words as a shell would, each with where it starts (for
// file:line:col messages): the Megatron and torchtitan importers read their inputs so.
#pragma once

#include <string>
#include <vector>

namespace cs {

struct ShellWord {
  std::string text;
  int line = 1, column = 1;
};

/** The words of `text` (file `source`): whitespace separates, a backslash before a newline joins lines, # starts a
 *  comment outside a word, quotes group and are dropped. An unterminated quote throws InputError at its word. */
std::vector<ShellWord> shell_words(const std::string& text, const std::string& source);

} // namespace cs
