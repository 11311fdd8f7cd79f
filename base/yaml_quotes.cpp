#include "base/yaml_quotes.hpp"

#include "base/input_error.hpp"

#include <cstddef>

namespace cs {

namespace {

// Where the scan is: an index into the text with its line and column (1-based).
struct Cursor {
  const std::string& text;
  std::size_t i = 0;
  int line = 1, column = 1;
  bool done() const { return i >= text.size(); }
  char at() const { return text[i]; }
  void step()
  {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    ++i;
  }
};

// Past the quoted scalar that opens at the cursor; false when the text ends first.
bool skip_quoted(Cursor& c)
{
  const char quote = c.at();
  c.step();
  while (!c.done()) {
    const char ch = c.at();
    if (quote == '"' && ch == '\\') { // an escape: the next character is text
      c.step();
      if (!c.done())
        c.step();
      continue;
    }
    c.step();
    if (ch == quote) {
      if (quote == '\'' && !c.done() && c.at() == '\'') { // '' is a quote inside single quotes
        c.step();
        continue;
      }
      return true;
    }
  }
  return false;
}

// Indentation of the line starting at `i`.
int indent_at(const std::string& text, std::size_t i)
{
  int n = 0;
  while (i + n < text.size() && text[i + n] == ' ')
    ++n;
  return n;
}

// Whether the line, comments aside, ends with a block scalar indicator (| or >, with optional chomping and
// indentation digits) after ':' or '-'.
bool opens_block(const std::string& line)
{
  std::size_t end = line.find(" #");
  std::string s = line.substr(0, end);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.pop_back();
  std::size_t k = s.size();
  while (k > 0 && (s[k - 1] == '-' || s[k - 1] == '+' || (s[k - 1] >= '1' && s[k - 1] <= '9')))
    --k;
  if (k == 0 || (s[k - 1] != '|' && s[k - 1] != '>'))
    return false;
  std::size_t j = k - 1; // the indicator; what precedes it, spaces aside, must end a key or start an item
  while (j > 0 && s[j - 1] == ' ')
    --j;
  return j == 0 || s[j - 1] == ':' || s[j - 1] == '-';
}

} // namespace

void check_quotes_closed(const std::string& text, const std::string& file)
{
  Cursor c{text};
  int block_indent = -1; // inside a block scalar: the indentation of the line that opened it
  while (!c.done()) {
    const std::size_t line_start = c.i;
    const std::size_t line_end = text.find('\n', line_start);
    const std::string line =
        text.substr(line_start, line_end == std::string::npos ? std::string::npos : line_end - line_start);
    const int indent = indent_at(text, line_start);
    const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (block_indent >= 0 && (blank || indent > block_indent)) { // block scalar text
      while (!c.done() && c.at() != '\n')
        c.step();
      if (!c.done())
        c.step();
      continue;
    }
    block_indent = opens_block(line) ? indent : -1;
    char previous = ' '; // the last character before the cursor on this line that is not a space
    bool line_start_seen = false;
    while (!c.done() && c.at() != '\n') {
      const char ch = c.at();
      if (ch == '#' && (c.i == line_start || text[c.i - 1] == ' ' || text[c.i - 1] == '\t'))
        break; // a comment: the rest of the line is not YAML
      const bool opens =
          (ch == '"' || ch == '\'') && (!line_start_seen || previous == ':' || previous == '-' || previous == '[' ||
                                        previous == '{' || previous == ',' || previous == '?');
      if (opens) {
        const int line_no = c.line, column = c.column;
        if (!skip_quoted(c))
          throw InputError(file, line_no, column,
                           "a quoted string opened here is never closed (the rest of the file would become its "
                           "text)");
        previous = ch;
        line_start_seen = true;
        continue;
      }
      if (ch != ' ' && ch != '\t') {
        previous = ch;
        line_start_seen = true;
      }
      c.step();
    }
    while (!c.done() && c.at() != '\n')
      c.step();
    if (!c.done())
      c.step();
  }
}

} // namespace cs
