// Finds a quoted YAML scalar that is never closed: yaml-cpp reads it to the end of the file and the rest of the
// document silently becomes its text.
#pragma once

#include <string>

namespace cs {

/** Throws InputError at the opening quote of the first quoted scalar in `text` that no quote closes before the end.
 *  Quotes inside comments, plain scalars (it's) and block scalars (| and >) are text, not openings. */
void check_quotes_closed(const std::string& text, const std::string& file);

} // namespace cs
