// Private: pieces of JSON text for the file writers (scene.cpp, query_file.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vkc::io {

// The shortest text that reads back (JsonReader::readFloat) as the same float.
void appendFloat(std::string& out, float v);

// A JSON string: quotes and backslashes escaped, control characters as \u00XX.
void appendString(std::string& out, std::string_view s);

// [a, b, c]: n floats as appendFloat writes them.
void appendFloats(std::string& out, const float* v, size_t n);

}  // namespace vkc::io
