// Private: a pull reader for JSON text, driven by the caller's schema. It never builds a document:
// the caller asks for an object (with a callback per key), an array (a callback per element) or a
// scalar of the type it expects, so there is no generic recursion on input (nesting depth is the
// schema's) and every error names the JSON path of the value being read, e.g.
// "cloths[1].spheres[3][2]: expected a finite number, found null".
//
// Numbers are converted from their text directly to float (std::from_chars), so the shortest
// round-trip text of a float reads back as the same float.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vkcollide/types.h"

namespace vkc::io {

class JsonReader {
 public:
  explicit JsonReader(std::string_view text);

  // The first error, "" if none. Every read returns false once an error is set.
  const std::string& error() const { return error_; }
  bool failed() const { return !error_.empty(); }

  // Sets the error at the current path: "<path>: <message>" (top level: "<message>").
  bool fail(const std::string& message);
  // Sets the error naming a key of the object being read: "<path>.<key>: <message>".
  bool failAtKey(std::string_view key, const std::string& message);
  // The current JSON path as text ("cloths[1].spheres[3]"); "" at the top level.
  std::string path() const;

  // Scalars. Each skips leading white space and reports a type mismatch with what it found.
  bool readFloat(float& out);     // a finite JSON number, rounded to the nearest float
  bool readUint32(uint32_t& out);  // a JSON integer 0 .. 2^32-1 (no fraction or exponent)
  bool readBool(bool& out);
  bool readString(std::string& out);

  // An object: calls onKey(key) with the reader positioned on the key's value, which onKey must
  // read (or fail). Duplicate keys are an error.
  template <class F>
  bool readObject(F&& onKey) {
    if (!beginContainer('{', "an object")) return false;
    std::vector<std::string> seen;
    if (consume('}')) return true;
    for (;;) {
      std::string key;
      skipSpace();
      if (peekChar() != '"') return syntax("expected a key string");
      if (!readString(key)) return false;
      for (const std::string& k : seen) {
        if (k == key) return failAtKey(key, "duplicate key");
      }
      seen.push_back(key);
      skipSpace();
      if (!consume(':')) return syntax("expected ':' after a key");
      path_.push_back({key, 0, true});
      const bool ok = onKey(std::string_view(path_.back().key));
      if (!ok || failed()) return false;
      path_.pop_back();
      skipSpace();
      if (consume('}')) return true;
      if (!consume(',')) return syntax("expected ',' or '}' in an object");
    }
  }

  // An array: calls onElement(index) with the reader positioned on each element.
  template <class F>
  bool readArray(F&& onElement) {
    if (!beginContainer('[', "an array")) return false;
    if (consume(']')) return true;
    for (size_t i = 0;; ++i) {
      path_.push_back({{}, i, false});
      const bool ok = onElement(i);
      if (!ok || failed()) return false;
      path_.pop_back();
      skipSpace();
      if (consume(']')) return true;
      if (!consume(',')) return syntax("expected ',' or ']' in an array");
    }
  }

  // An array of exactly n floats (what = how the error describes it, e.g. "[x, y, z, invMass]").
  bool readFloats(float* out, size_t n, const char* what);

  // Skips one value of any kind, checking its syntax (nested containers are walked with an explicit
  // stack, not recursion, so deep nesting costs memory, not the call stack).
  bool skipValue();

  // The first character of the next value (after white space), '\0' at the end: lets a schema accept
  // a value of more than one type (e.g. '"' for a string, else a number).
  char peekValue() {
    skipSpace();
    return peekChar();
  }

  // After the top-level value: only white space may follow (`what` names the value in the error).
  bool expectEnd(const char* what = "the scene");

 private:
  struct PathElement {
    std::string key;
    size_t index = 0;
    bool isKey = false;
  };

  void skipSpace();
  char peekChar() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c);
  bool syntax(const std::string& message);
  bool beginContainer(char open, const char* what);
  bool mismatch(const char* expected);
  std::string describeToken() const;
  // The extent of a JSON number at pos_ (0 if none), and whether it is an integer.
  size_t numberLength(bool& integer) const;

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
  std::vector<PathElement> path_;
};

// The "format" and "version" keys of vkcollide's query, contacts and curves files. readFormat reads
// the value of "format" and checks it is `expected`; readVersion that "version" is 1 to `newest`;
// each sets `seen`. checkHeader, after the top-level object, fails naming the first of them that was
// missing.
bool readFormat(JsonReader& r, std::string_view expected, bool& seen);
bool readVersion(JsonReader& r, uint32_t newest, bool& seen);
void checkHeader(JsonReader& r, std::string_view format, bool hasFormat, bool hasVersion);

// A point [x, y, z] (w = 0), and an array of them (replacing `out`'s contents).
bool readPoint(JsonReader& r, Float4& out);
bool readPoints(JsonReader& r, std::vector<Float4>& out);

}  // namespace vkc::io
