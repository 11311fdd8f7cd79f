#include "traces/compressed_input.hpp"

#include "base/input_error.hpp"
#include "base/input_file.hpp"

#include <zlib.h>

namespace cs {

std::string read_maybe_gzip(const std::string& path, const std::string& what, std::size_t max_bytes)
{
  check_input_file(path, what);
  gzFile f = gzopen(path.c_str(), "rb"); // zlib reads plain files through the same calls
  if (!f)
    throw InputError(path, 0, 0, "cannot open the " + what);
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(f, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      gzclose(f);
      throw InputError(path, 0, 0,
                       "the " + what + " is larger than " + std::to_string(max_bytes >> 20) + " MiB uncompressed");
    }
  }
  const bool broken = n < 0;
  gzclose(f);
  if (broken)
    throw InputError(path, 0, 0, "the gzip stream is corrupt or truncated");
  return text;
}

std::string first_line_maybe_gzip(const std::string& path, const std::string& what)
{
  check_input_file(path, what);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw InputError(path, 0, 0, "cannot open the " + what);
  std::string line(64 * 1024, '\0');
  const char* got = gzgets(f, line.data(), static_cast<int>(line.size()));
  gzclose(f);
  line.resize(got ? std::char_traits<char>::length(line.data()) : 0);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  return line;
}

std::string head_maybe_gzip(const std::string& path, const std::string& what, std::size_t bytes)
{
  check_input_file(path, what);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw InputError(path, 0, 0, "cannot open the " + what);
  std::string head(std::min<std::size_t>(bytes, 1u << 20), '\0');
  const int got = gzread(f, head.data(), static_cast<unsigned>(head.size()));
  gzclose(f);
  head.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return head;
}

} // namespace cs
