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

}  // namespace vkc::io
