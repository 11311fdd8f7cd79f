#include "base/json_document.hpp"

#include "base/input_error.hpp"
#include "base/json_input.hpp"
#include "base/read_progress.hpp"

#include <fmt/format.h>
#include <set>
#include <vector>

namespace cs {
namespace {

// Arrays and objects nest at most this deep: far more than any input needs, and little enough that nothing walking
// a document (our readers, nlohmann's dump and comparisons) can exhaust the stack.
constexpr std::size_t kMaxJsonDepth = 200;

// The byte where nesting first goes past kMaxJsonDepth (strings skipped).
std::size_t too_deep_at(const std::string& text)
{
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return 0;
}

/** nlohmann's SAX interface building the document: each finished value moves into its parent, or to the sink when
 *  its parent is the streamed array. Keys are checked for repeats per object as they come. */
class DocumentBuilder {
public:
  using json = nlohmann::json;

  DocumentBuilder(const std::string& streamed_key, const JsonItemSink& sink) : streamed_key_(streamed_key), sink_(sink)
  {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(json(v)); }
  bool string(json::string_t& v) { return add(json(std::move(v))); }
  bool binary(json::binary_t& v) { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k)
  {
    Frame& top = stack_.back();
    if (!top.keys.insert(k).second && duplicate_.empty())
      duplicate_ = k;
    top.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e)
  {
    error_at_ = position;
    error_id_ = e.id;
    error_ = e.what();
    return false;
  }

  json root;
  std::string duplicate_, error_;
  std::size_t error_at_ = 0;
  int error_id_ = 0;
  bool too_deep_ = false;

private:
  struct Frame {
    json value;
    std::string key;            // objects: the key of the value being read
    std::set<std::string> keys; // objects: the keys seen so far
    bool streamed = false;      // the streamed array: items go to the sink
    std::size_t items = 0;
  };

  bool open(json container)
  {
    if (stack_.size() >= kMaxJsonDepth) {
      too_deep_ = true;
      return false;
    }
    const bool streamed = sink_ && stack_.size() == 1 && container.is_array() && stack_.back().value.is_object() &&
                          stack_.back().key == streamed_key_;
    stack_.push_back(Frame{std::move(container), {}, {}, streamed, 0});
    return true;
  }

  bool close()
  {
    json done = std::move(stack_.back().value);
    stack_.pop_back();
    return add(std::move(done));
  }

  bool add(json v)
  {
    if (stack_.empty()) {
      root = std::move(v);
      return true;
    }
    Frame& top = stack_.back();
    if (top.value.is_object())
      top.value[top.key] = std::move(v);
    else if (top.streamed) {
      sink_(std::move(v), top.items++);
      read_progress().items.store(top.items, std::memory_order_relaxed);
    } else
      top.value.push_back(std::move(v));
    return true;
  }

  const std::string& streamed_key_;
  const JsonItemSink& sink_;
  std::vector<Frame> stack_;
};

[[noreturn]] void refuse(const std::string& text, const std::string& file, std::size_t byte, const std::string& what)
{
  const auto [line, column] = line_and_column(text, byte);
  throw InputError(file, line, column, what);
}

} // namespace

nlohmann::json build_json_document(const std::string& text, const std::string& file, const std::string& streamed_key,
                                   const JsonItemSink& sink)
{
  DocumentBuilder b(streamed_key, sink);
  read_progress().items = 0;
  const bool ok = nlohmann::json::sax_parse(text, &b);
  if (b.too_deep_)
    refuse(text, file, too_deep_at(text),
           fmt::format("arrays and objects nest more than {} deep; clustersim refuses it", kMaxJsonDepth));
  if (!ok && b.error_id_ == 406) { // "number overflow parsing '1e400'": point at the number
    const std::size_t q = b.error_.find('\'');
    const std::string number = q == std::string::npos ? "" : b.error_.substr(q + 1, b.error_.rfind('\'') - q - 1);
    const std::size_t at = number.empty() ? 0 : text.find(number);
    refuse(text, file, at == std::string::npos ? 0 : at, "number " + number + " is beyond the range of a double");
  }
  if (!ok) {
    const std::size_t cut = b.error_.find("parse error");
    refuse(text, file, b.error_at_ == 0 ? 0 : b.error_at_ - 1,
           "malformed JSON: " + (cut == std::string::npos ? b.error_ : b.error_.substr(cut)));
  }
  if (!b.duplicate_.empty()) {
    const std::string quoted = "\"" + b.duplicate_ + "\"";
    const std::size_t first = text.find(quoted);
    const std::size_t second = text.find(quoted, first == std::string::npos ? 0 : first + 1);
    refuse(text, file, second == std::string::npos ? 0 : second,
           "key '" + b.duplicate_ + "' appears twice in one object");
  }
  return std::move(b.root);
}

} // namespace cs
