// Checking that text read from a user's file is valid UTF-8 before it travels into outputs (JSON requires it).
#pragma once

#include <string>

namespace cs {

/** The byte offset of the first invalid UTF-8 sequence in `text` (a stray continuation byte, a truncated sequence,
 *  an overlong encoding, a surrogate, a code point past U+10FFFF), or std::string::npos when it is all valid. */
std::size_t invalid_utf8_at(const std::string& text);

} // namespace cs
