#include "models/parallel/pipeline_layout.hpp"

#include <cctype>

namespace cs {
namespace {

constexpr std::size_t kMaxSymbols = 100000; // a layout past this is a typo in a repeat count, not a model

// Expands the string into symbols (E, t, m, L, |): recursive descent over groups, each followed by an optional *N.
class LayoutReader {
public:
  explicit LayoutReader(const std::string& text) : text_(text) {}

  std::string expand()
  {
    std::string out = sequence(0);
    if (pos_ < text_.size())
      throw LayoutError(pos_, "')' without a '(' before it");
    return out;
  }

private:
  std::string sequence(int depth)
  {
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == ',') {
        ++pos_;
        continue;
      }
      if (c == ')') {
        if (depth == 0)
          throw LayoutError(pos_, "')' without a '(' before it");
        return out;
      }
      std::string item;
      if (c == '(') {
        const std::size_t open = pos_++;
        item = sequence(depth + 1);
        if (pos_ >= text_.size())
          throw LayoutError(open, "'(' is never closed");
        ++pos_; // ')'
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos_;
      } else {
        throw LayoutError(pos_, std::string("unknown symbol '") + c +
                                    "' (E embedding, t decoder layer, m MTP layer, L loss, | next stage)");
      }
      const std::size_t times = repeat();
      if (item.size() * times > kMaxSymbols || out.size() + item.size() * times > kMaxSymbols)
        throw LayoutError(pos_, "the layout repeats past " + std::to_string(kMaxSymbols) + " symbols");
      for (std::size_t k = 0; k < times; ++k)
        out += item;
    }
    return out;
  }

  std::size_t repeat()
  {
    while (pos_ < text_.size() && text_[pos_] == ' ')
      ++pos_;
    if (pos_ >= text_.size() || text_[pos_] != '*')
      return 1;
    const std::size_t star = pos_++;
    std::size_t n = 0, digits = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      n = n * 10 + static_cast<std::size_t>(text_[pos_++] - '0');
      if (n > kMaxSymbols)
        throw LayoutError(star, "a repeat count past " + std::to_string(kMaxSymbols));
      ++digits;
    }
    if (digits == 0)
      throw LayoutError(star, "'*' needs a count after it");
    return n;
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

// Where a symbol given twice is written a second time (its first place when the second comes from a repeat).
std::size_t second_place(const std::string& text, char symbol)
{
  const std::size_t first = text.find(symbol), second = text.find(symbol, first + 1);
  return second == std::string::npos ? first : second;
}

} // namespace

PipelineLayout parse_pipeline_layout(const std::string& text)
{
  if (text.find_first_not_of(" ,") == std::string::npos)
    throw LayoutError(0, "an empty layout");
  const std::string symbols = LayoutReader(text).expand();
  PipelineLayout out;
  out.layers.push_back(0);
  out.mtp.push_back(0);
  for (char c : symbols) {
    const int stage = out.stages() - 1;
    switch (c) {
    case '|':
      out.layers.push_back(0);
      out.mtp.push_back(0);
      break;
    case 't':
      ++out.layers.back();
      break;
    case 'm':
      ++out.mtp.back();
      break;
    case 'E':
      if (out.embedding_stage >= 0)
        throw LayoutError(second_place(text, 'E'), "E (the embedding) given more than once");
      out.embedding_stage = stage;
      break;
    default: // 'L'
      if (out.loss_stage >= 0)
        throw LayoutError(second_place(text, 'L'), "L (the loss) given more than once");
      out.loss_stage = stage;
      break;
    }
  }
  if (out.embedding_stage < 0)
    throw LayoutError(text.size(), "no E: the layout must place the embedding");
  if (out.loss_stage < 0)
    throw LayoutError(text.size(), "no L: the layout must place the output layer and loss");
  return out;
}

} // namespace cs
