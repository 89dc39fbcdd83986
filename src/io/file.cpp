#include "io/file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace vkc::io {

namespace {

Error ioError(const std::string& path, const std::string& what) {
  return Error{ErrorCode::kIo, "'" + path + "': " + what};
}

std::string errnoText() { return std::strerror(errno); }

Result<std::string> readGzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return ioError(path, "cannot open: " + errnoText());
  gzbuffer(f, 1 << 18);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      std::string message = gzerror(f, &code);
      gzclose_r(f);
      return ioError(path, "cannot read gzip data: " + message);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  // A truncated stream ends without a read error; gzclose_r reports it.
  const int closed = gzclose_r(f);
  if (closed != Z_OK) return ioError(path, closed == Z_BUF_ERROR ? "truncated gzip data" : "cannot read gzip data");
  return out;
}

Status writeAll(const std::string& path, std::string_view bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb6");
    if (!f) return ioError(path, "cannot create: " + errnoText());
    gzbuffer(f, 1 << 18);
    size_t done = 0;
    while (done < bytes.size()) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 24));
      if (gzwrite(f, bytes.data() + done, chunk) != static_cast<int>(chunk)) {
        int code = 0;
        std::string message = gzerror(f, &code);
        gzclose_w(f);
        return ioError(path, "cannot write: " + message);
      }
      done += chunk;
    }
    if (gzclose_w(f) != Z_OK) return ioError(path, "cannot write (close failed)");
    return {};
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return ioError(path, "cannot create: " + errnoText());
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) return ioError(path, "cannot write: " + errnoText());
  return {};
}

}  // namespace

bool isGzipPath(std::string_view path) { return path.size() >= 3 && path.substr(path.size() - 3) == ".gz"; }

Result<std::string> readFile(const std::string& path) {
  if (isGzipPath(path)) return readGzip(path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return ioError(path, "cannot open: " + errnoText());
  std::string out;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) return ioError(path, "cannot read: " + errnoText());
  return out;
}

Status writeFile(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp";
  const Status st = writeAll(tmp, bytes, isGzipPath(path));
  if (!st) {
    std::remove(tmp.c_str());
    return st;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errnoText();
    std::remove(tmp.c_str());
    return ioError(path, "cannot rename the temporary file: " + why);
  }
  return {};
}

}  // namespace vkc::io
