#include "traces/compressed_input.hpp"

#include "base/input_error.hpp"
#include "base/input_file.hpp"

#include <fstream>
#include <memory>
#include <vector>
#include <zlib.h>
#include <zstd.h>

namespace cs {

namespace {

// Zstandard frames start with these four bytes (RFC 8878); Spark 3 writes its event logs with zstd by default.
bool is_zstd(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && static_cast<unsigned char>(magic[0]) == 0x28 &&
         static_cast<unsigned char>(magic[1]) == 0xB5 && static_cast<unsigned char>(magic[2]) == 0x2F &&
         static_cast<unsigned char>(magic[3]) == 0xFD;
}

// Up to `limit` bytes of the zstd-compressed `path`, decompressed by libzstd's streaming API. `whole`: the stream must
// end inside the file (a truncated or corrupt one is an InputError) and must not inflate past `limit`.
std::string read_zstd(const std::string& path, const std::string& what, std::size_t limit, bool whole)
{
  std::ifstream in(path, std::ios::binary);
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!stream || ZSTD_isError(ZSTD_initDStream(stream.get())))
    throw InputError(path, 0, 0, "cannot start zstd decompression of the " + what);
  std::vector<char> input(ZSTD_DStreamInSize()), output(ZSTD_DStreamOutSize());
  std::string text;
  std::size_t pending = 0; // what the last call said it still expects (0: a frame just ended)
  while (in) {
    in.read(input.data(), static_cast<std::streamsize>(input.size()));
    ZSTD_inBuffer chunk{input.data(), static_cast<std::size_t>(in.gcount()), 0};
    while (chunk.pos < chunk.size) {
      ZSTD_outBuffer out{output.data(), output.size(), 0};
      pending = ZSTD_decompressStream(stream.get(), &out, &chunk);
      if (ZSTD_isError(pending))
        throw InputError(path, 0, 0, "the zstd stream is corrupt: " + std::string(ZSTD_getErrorName(pending)));
      text.append(output.data(), out.pos);
      if (text.size() > limit) {
        if (!whole)
          return text.substr(0, limit);
        throw InputError(path, 0, 0,
                         "the " + what + " is larger than " + std::to_string(limit >> 20) + " MiB uncompressed");
      }
    }
  }
  if (whole && pending != 0)
    throw InputError(path, 0, 0, "the zstd stream is truncated");
  return text;
}

} // namespace

std::string read_maybe_gzip(const std::string& path, const std::string& what, std::size_t max_bytes)
{
  check_input_file(path, what);
  if (is_zstd(path))
    return read_zstd(path, what, max_bytes, true);
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
  // A stream cut short ends in EOF, not an error: gzerror says Z_BUF_ERROR then (a gzip file missing its last 30
  // bytes once read 39 of its 40 rows and reported the cut row as a bad row).
  int status = Z_OK;
  gzerror(f, &status);
  const bool broken = n < 0 || (status != Z_OK && status != Z_STREAM_END);
  gzclose(f);
  if (broken)
    throw InputError(path, 0, 0, "the gzip stream is corrupt or truncated");
  return text;
}

std::string first_line_maybe_gzip(const std::string& path, const std::string& what)
{
  check_input_file(path, what);
  if (is_zstd(path)) {
    std::string head = read_zstd(path, what, 64 * 1024, false);
    head = head.substr(0, head.find('\n'));
    while (!head.empty() && head.back() == '\r')
      head.pop_back();
    return head;
  }
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
  if (is_zstd(path))
    return read_zstd(path, what, std::min<std::size_t>(bytes, 1u << 20), false);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw InputError(path, 0, 0, "cannot open the " + what);
  // Read in pieces, so that what precedes a corrupt tail still tells the format (the full read then says it is
  // corrupt).
  const std::size_t want = std::min<std::size_t>(bytes, 1u << 20);
  std::string head;
  char buffer[1 << 10];
  int got = 0;
  while (head.size() < want &&
         (got = gzread(f, buffer, static_cast<unsigned>(std::min(sizeof buffer, want - head.size())))) > 0)
    head.append(buffer, static_cast<std::size_t>(got));
  gzclose(f);
  return head;
}

} // namespace cs
