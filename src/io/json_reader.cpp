#include "io/json_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace vkc::io {

JsonReader::JsonReader(std::string_view text) : text_(text) {
  // A UTF-8 byte order mark is allowed before the value.
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

std::string JsonReader::path() const {
  std::string p;
  for (const PathElement& e : path_) {
    if (e.isKey) {
      if (!p.empty()) p += '.';
      p += e.key;
    } else {
      p += '[' + std::to_string(e.index) + ']';
    }
  }
  return p;
}

bool JsonReader::fail(const std::string& message) {
  if (error_.empty()) {
    const std::string p = path();
    error_ = p.empty() ? message : p + ": " + message;
  }
  return false;
}

bool JsonReader::failAtKey(std::string_view key, const std::string& message) {
  if (error_.empty()) {
    std::string p = path();
    if (!p.empty()) p += '.';
    p += key;
    error_ = p + ": " + message;
  }
  return false;
}

bool JsonReader::syntax(const std::string& message) {
  if (!error_.empty()) return false;
  size_t line = 1, column = 1;
  for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  std::string where = "line " + std::to_string(line) + ", column " + std::to_string(column);
  const std::string p = path();
  if (!p.empty()) where += " (" + p + ")";
  error_ = where + ": " + message + (pos_ >= text_.size() ? " (end of input)" : "");
  return false;
}

void JsonReader::skipSpace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++pos_;
  }
}

bool JsonReader::consume(char c) {
  skipSpace();
  if (peekChar() == c && pos_ < text_.size()) {
    ++pos_;
    return true;
  }
  return false;
}

size_t JsonReader::numberLength(bool& integer) const {
  size_t i = pos_;
  const size_t n = text_.size();
  auto digit = [&](size_t k) { return k < n && text_[k] >= '0' && text_[k] <= '9'; };
  integer = true;
  if (i < n && text_[i] == '-') ++i;
  if (!digit(i)) return 0;
  if (text_[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < n && text_[i] == '.') {
    integer = false;
    ++i;
    if (!digit(i)) return 0;
    while (digit(i)) ++i;
  }
  if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
    integer = false;
    ++i;
    if (i < n && (text_[i] == '+' || text_[i] == '-')) ++i;
    if (!digit(i)) return 0;
    while (digit(i)) ++i;
  }
  return i - pos_;
}

std::string JsonReader::describeToken() const {
  if (pos_ >= text_.size()) return "the end of input";
  const std::string_view rest = text_.substr(pos_);
  switch (rest[0]) {
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    default: break;
  }
  for (std::string_view word : {"true", "false", "null", "NaN", "Infinity", "-Infinity"}) {
    if (rest.substr(0, word.size()) == word) return std::string(word);
  }
  bool integer = false;
  if (const size_t len = numberLength(integer); len > 0) return "the number " + std::string(rest.substr(0, len));
  const unsigned char c = static_cast<unsigned char>(rest[0]);
  if (c >= 0x21 && c < 0x7F) return std::string("'") + rest[0] + "'";
  return "byte 0x" + std::string(1, "0123456789ABCDEF"[c >> 4]) + "0123456789ABCDEF"[c & 15];
}

bool JsonReader::mismatch(const char* expected) {
  skipSpace();
  return fail(std::string("expected ") + expected + ", found " + describeToken());
}

bool JsonReader::beginContainer(char open, const char* what) {
  if (failed()) return false;
  skipSpace();
  if (peekChar() != open || pos_ >= text_.size()) return mismatch(what);
  ++pos_;
  return true;
}

namespace {

// For a JSON number (valid syntax) with a nonzero digit: whether its magnitude is below 1, i.e. the
// decimal exponent of its first nonzero digit is negative. Exact for any length of digits and
// exponent (the exponent saturates far beyond any float).
bool decimalMagnitudeNegative(std::string_view t) {
  size_t i = (t[0] == '-') ? 1 : 0;
  int64_t magnitude = 0;
  bool found = false;
  int64_t intDigits = 0;
  const size_t intStart = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  intDigits = static_cast<int64_t>(i - intStart);
  for (size_t k = intStart; k < i && !found; ++k) {
    if (t[k] != '0') {
      found = true;
      magnitude = intDigits - 1 - static_cast<int64_t>(k - intStart);
    }
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    const size_t fracStart = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (!found && t[i] != '0') {
        found = true;
        magnitude = -1 - static_cast<int64_t>(i - fracStart);
      }
      ++i;
    }
  }
  int64_t exponent = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      exponent = std::min<int64_t>(exponent * 10 + (t[i] - '0'), int64_t{1} << 40);
      ++i;
    }
    if (negative) exponent = -exponent;
  }
  return found && magnitude + exponent < 0;
}

}  // namespace

bool JsonReader::readFloat(float& out) {
  if (failed()) return false;
  skipSpace();
  bool integer = false;
  const size_t len = numberLength(integer);
  if (len == 0) return mismatch("a finite number");
  const char* first = text_.data() + pos_;
  const char* last = first + len;
  float value = 0;
  const auto r = std::from_chars(first, last, value);
  if (r.ec == std::errc::result_out_of_range) {
    // Too large (an error) or too small (rounds to zero, keeping the sign).
    if (!decimalMagnitudeNegative(std::string_view(first, len))) {
      return fail("expected a finite number, found " + std::string(first, len) + " (beyond the float range)");
    }
    value = (first[0] == '-') ? -0.0f : 0.0f;
  } else if (r.ec != std::errc() || r.ptr != last) {
    return fail("expected a finite number, found " + std::string(first, len));
  }
  if (!std::isfinite(value)) return fail("expected a finite number, found " + std::string(first, len));
  pos_ += len;
  out = value;
  return true;
}

bool JsonReader::readUint32(uint32_t& out) {
  if (failed()) return false;
  skipSpace();
  bool integer = false;
  const size_t len = numberLength(integer);
  if (len == 0) return mismatch("an unsigned integer");
  const std::string_view t = text_.substr(pos_, len);
  if (!integer || t[0] == '-') return fail("expected an unsigned integer, found " + std::string(t));
  uint32_t value = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), value);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) {
    return fail("expected an unsigned integer below 2^32, found " + std::string(t));
  }
  pos_ += len;
  out = value;
  return true;
}

bool JsonReader::readBool(bool& out) {
  if (failed()) return false;
  skipSpace();
  const std::string_view rest = text_.substr(pos_);
  if (rest.substr(0, 4) == "true") {
    pos_ += 4;
    out = true;
    return true;
  }
  if (rest.substr(0, 5) == "false") {
    pos_ += 5;
    out = false;
    return true;
  }
  return mismatch("true or false");
}

namespace {

void appendUtf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool JsonReader::readString(std::string& out) {
  if (failed()) return false;
  skipSpace();
  if (peekChar() != '"' || pos_ >= text_.size()) return mismatch("a string");
  ++pos_;
  std::string s;
  auto hex4 = [&](uint32_t& cp) {
    if (pos_ + 4 > text_.size()) return false;
    cp = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = hexValue(text_[pos_ + static_cast<size_t>(k)]);
      if (h < 0) return false;
      cp = cp * 16 + static_cast<uint32_t>(h);
    }
    pos_ += 4;
    return true;
  };
  for (;;) {
    if (pos_ >= text_.size()) return syntax("unterminated string");
    const char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      break;
    }
    if (static_cast<unsigned char>(c) < 0x20) return syntax("control character in a string");
    if (c != '\\') {
      s += c;
      ++pos_;
      continue;
    }
    ++pos_;
    if (pos_ >= text_.size()) return syntax("unterminated string");
    const char e = text_[pos_++];
    switch (e) {
      case '"': s += '"'; break;
      case '\\': s += '\\'; break;
      case '/': s += '/'; break;
      case 'b': s += '\b'; break;
      case 'f': s += '\f'; break;
      case 'n': s += '\n'; break;
      case 'r': s += '\r'; break;
      case 't': s += '\t'; break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(cp)) return syntax("bad \\u escape");
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t lo = 0;
          if (text_.substr(pos_, 2) != "\\u") return syntax("unpaired surrogate in \\u escape");
          pos_ += 2;
          if (!hex4(lo) || lo < 0xDC00 || lo >= 0xE000) return syntax("unpaired surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return syntax("unpaired surrogate in \\u escape");
        }
        appendUtf8(s, cp);
        break;
      }
      default: --pos_; return syntax("bad escape in a string");
    }
  }
  out = std::move(s);
  return true;
}

bool JsonReader::readFloats(float* out, size_t n, const char* what) {
  size_t count = 0;
  const bool ok = readArray([&](size_t i) {
    if (i >= n) {
      return fail("one element too many: expected " + std::to_string(n) + " numbers " + what);
    }
    ++count;
    return readFloat(out[i]);
  });
  if (!ok) return false;
  if (count != n) {
    return fail("expected " + std::to_string(n) + " numbers " + what + ", found " + std::to_string(count));
  }
  return true;
}

bool JsonReader::skipValue() {
  if (failed()) return false;
  std::vector<char> open;  // the containers entered, innermost last: '{' or '['
  auto key = [&] {
    skipSpace();
    std::string k;
    if (peekChar() != '"') return syntax("expected a key string");
    if (!readString(k)) return false;
    if (!consume(':')) return syntax("expected ':' after a key");
    return true;
  };
  for (;;) {
    // A value.
    skipSpace();
    const char c = peekChar();
    bool scalar = true;
    if ((c == '{' || c == '[') && pos_ < text_.size()) {
      ++pos_;
      if (consume(c == '{' ? '}' : ']')) {
        scalar = true;  // empty: a complete value
      } else {
        open.push_back(c);
        if (c == '{' && !key()) return false;
        scalar = false;
      }
    } else if (c == '"') {
      std::string s;
      if (!readString(s)) return false;
    } else {
      const std::string_view rest = text_.substr(pos_);
      size_t len = 0;
      for (std::string_view word : {"true", "false", "null"}) {
        if (rest.substr(0, word.size()) == word) len = word.size();
      }
      bool integer = false;
      if (len == 0) len = numberLength(integer);
      if (len == 0) return mismatch("a JSON value");
      pos_ += len;
    }
    if (!scalar) continue;
    // After a complete value: close containers or move to the next element.
    for (;;) {
      if (open.empty()) return true;
      const bool object = open.back() == '{';
      if (consume(',')) {
        if (object && !key()) return false;
        break;
      }
      if (consume(object ? '}' : ']')) {
        open.pop_back();
        continue;
      }
      return syntax(object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
    }
  }
}

bool JsonReader::expectEnd(const char* what) {
  if (failed()) return false;
  skipSpace();
  if (pos_ != text_.size()) return syntax(std::string("unexpected text after ") + what);
  return true;
}

bool readFormat(JsonReader& r, std::string_view expected, bool& seen) {
  std::string f;
  if (!r.readString(f)) return false;
  if (f != expected) return r.fail("expected \"" + std::string(expected) + "\", found \"" + f + "\"");
  return seen = true;
}

bool readVersion(JsonReader& r, uint32_t newest, bool& seen) {
  uint32_t v = 0;
  if (!r.readUint32(v)) return false;
  if (v < 1 || v > newest) {
    return r.fail("unsupported version " + std::to_string(v) + " (this build reads versions 1 to " +
                  std::to_string(newest) + ")");
  }
  return seen = true;
}

void checkHeader(JsonReader& r, std::string_view format, bool hasFormat, bool hasVersion) {
  if (!r.failed() && !hasFormat) r.fail("missing required key \"format\" (\"" + std::string(format) + "\")");
  if (!r.failed() && !hasVersion) r.fail("missing required key \"version\"");
}

bool readPoint(JsonReader& r, Float4& out) {
  float p[3];
  if (!r.readFloats(p, 3, "[x, y, z]")) return false;
  out = {p[0], p[1], p[2], 0.0f};
  return true;
}

bool readPoints(JsonReader& r, std::vector<Float4>& out) {
  out.clear();
  return r.readArray([&](size_t) { return readPoint(r, out.emplace_back()); });
}

}  // namespace vkc::io
