// Private: pieces of JSON text for the file writers.
#include "io/json_writer.h"

#include <charconv>

namespace vkc::io {

void appendFloat(std::string& out, float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void appendString(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      static const char* hex = "0123456789abcdef";
      buf[0] = '\\', buf[1] = 'u', buf[2] = '0', buf[3] = '0', buf[4] = hex[c >> 4], buf[5] = hex[c & 15];
      out.append(buf, 6);
    } else {
      out += ch;
    }
  }
  out += '"';
}

void appendFloats(std::string& out, const float* v, size_t n) {
  out += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    appendFloat(out, v[i]);
  }
  out += ']';
}

}  // namespace vkc::io
