// Builds user-supplied JSON in one linear pass, optionally handing a top-level array's items out one by one.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>

namespace cs {

/** Called with each item of the streamed array and its index; the item is not kept in the document. */
using JsonItemSink = std::function<void(nlohmann::json&& item, std::size_t index)>;

/** Parses `text` as parse_json_input does (errors as InputError at their line and column: syntax, truncation, a
 *  number past double's range, a key given twice in one object, nesting past 200 levels). When `streamed_key` is
 *  not empty and the document is an object, the items of its array under that key go to `sink` as each is parsed
 *  and the array is left empty in the result, so memory holds one item at a time. Time is linear in the text
 *  (nlohmann's callback parser rescans a parent array after every object: quadratic on long arrays). */
nlohmann::json build_json_document(const std::string& text, const std::string& file,
                                   const std::string& streamed_key = "", const JsonItemSink& sink = {});

} // namespace cs
