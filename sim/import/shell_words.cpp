// Shell-like words (whitespace separates, a backslash before a newline joins lines, # starts a comment, quotes group)
// with the line and column each starts at.
#include "sim/import/shell_words.hpp"

#include "base/input_error.hpp"

#include <cctype>

namespace cs {

std::vector<ShellWord> shell_words(const std::string& text, const std::string& source)
{
  std::vector<ShellWord> out;
  int line = 1, column = 1;
  ShellWord cur;
  bool in_word = false;
  char quote = 0;
  auto flush = [&] {
    if (in_word)
      out.push_back(cur);
    cur = ShellWord{};
    in_word = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (!in_word && !quote && ch == '#') { // a comment to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
      ++column;
      continue;
    }
    if (!quote && ch == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      flush();
      ++i;
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
        ++i;
      ++line;
      column = 1;
      continue;
    }
    if (quote) {
      if (ch == quote)
        quote = 0;
      else
        cur.text += ch;
    } else if (ch == '"' || ch == '\'') {
      if (!in_word) {
        in_word = true;
        cur.line = line;
        cur.column = column;
      }
      quote = ch;
    } else if (std::isspace(static_cast<unsigned char>(ch))) {
      flush();
    } else {
      if (!in_word) {
        in_word = true;
        cur.line = line;
        cur.column = column;
      }
      cur.text += ch;
    }
    if (ch == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  if (quote)
    throw InputError(source, cur.line, cur.column, "unterminated quote");
  flush();
  return out;
}

} // namespace cs
