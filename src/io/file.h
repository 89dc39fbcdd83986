// Private: whole-file reads and writes, through zlib for names ending in ".gz".
#pragma once

#include <string>
#include <string_view>

#include "vkcollide/result.h"

namespace vkc::io {

// True if the path names a gzip file (ends in ".gz").
bool isGzipPath(std::string_view path);

// The file's bytes (gunzipped for ".gz"). kIo naming the path on any failure, including a truncated
// or corrupt gzip stream.
Result<std::string> readFile(const std::string& path);

// Writes `bytes` (gzipped for ".gz") to "<path>.tmp", then renames it to `path`: on error the file at
// `path` is neither created nor changed, and the temporary file is removed.
Status writeFile(const std::string& path, std::string_view bytes);

// readFile(path) parsed by `parse`; a parse error (kInvalidArgument) is prefixed with the path.
template <class T>
Result<T> loadFile(const std::string& path, Result<T> (*parse)(std::string_view)) {
  Result<std::string> text = readFile(path);
  if (!text) return text.error();
  Result<T> value = parse(*text);
  if (!value) return Error{ErrorCode::kInvalidArgument, path + ": " + value.message()};
  return value;
}

}  // namespace vkc::io
