#!/bin/sh
# Symbol checks on the built libraries (ctest, tests/CMakeLists.txt).
#   check_symbols.sh NM core-io LIB            the core library references no zlib and no file API
#   check_symbols.sh NM shared-api LIB...      each shared library exports vkc:: API symbols and none
#                                              of the internals (vkc::detail, vkc::cpu, vkc::gpu,
#                                              vkc::io, vkcollide's volk)
set -eu
nm="$1"; mode="$2"; shift 2
status=0
case "$mode" in
  core-io)
    undefined=$("$nm" -u -C "$1")
    # Something is referenced (libc, libstdc++): an empty list would mean nm read nothing.
    [ -n "$undefined" ] || { echo "$1: nm -u listed nothing"; exit 1; }
    bad=$(echo "$undefined" | grep -E ' U (gz[a-z]|inflate|deflate|crc32|zlibVersion|fopen|freopen|open(64)?$|std::basic_[io]?fstream|std::basic_filebuf)' || true)
    if [ -n "$bad" ]; then
      echo "$1 references zlib or file I/O (belongs in vkcollide_scene):"; echo "$bad"; status=1
    fi ;;
  shared-api)
    for lib in "$@"; do
      exported=$("$nm" -D -C --defined-only "$lib")
      if ! echo "$exported" | grep -q ' vkc::'; then
        echo "$lib exports no vkc:: symbol"; status=1
      fi
      # A symbol of an internal namespace (its own name, or its type's vtable/typeinfo; an API
      # function may still take an internal type as a parameter), or vkcollide's volk.
      bad=$(echo "$exported" | grep -E '^[0-9a-f]* [A-Za-z] ([a-zA-Z ]+ for )?(vkc::(detail|cpu|gpu|io)::|vkc::\(anonymous namespace\)|vkc_(vk|volk))' || true)
      if [ -n "$bad" ]; then
        echo "$lib exports internal symbols:"; echo "$bad" | head -50; status=1
      else
        echo "$lib: $(echo "$exported" | grep -c ' vkc::') vkc:: symbols exported, no internals"
      fi
    done ;;
  *) echo "usage: check_symbols.sh NM core-io LIB | NM shared-api LIB..." >&2; exit 2 ;;
esac
exit $status
