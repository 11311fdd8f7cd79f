#include "base/utf8.hpp"

namespace cs {

std::size_t invalid_utf8_at(const std::string& text)
{
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The sequence's length and the least code point it may encode (shorter forms are overlong).
    int length = 0;
    unsigned long code = 0, least = 0;
    if ((c & 0xE0) == 0xC0) {
      length = 2, code = c & 0x1F, least = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3, code = c & 0x0F, least = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4, code = c & 0x07, least = 0x10000;
    } else {
      return i; // a continuation byte without a lead, or 0xF8..0xFF
    }
    if (i + length > n)
      return i;
    for (int k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80)
        return i;
      code = (code << 6) | (s[i + k] & 0x3F);
    }
    if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
      return i;
    i += length;
  }
  return std::string::npos;
}

} // namespace cs
