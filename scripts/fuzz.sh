#!/usr/bin/env bash
# Fuzzes the scene-file parser (fuzz/scene_fuzz.cpp) with libFuzzer, AddressSanitizer and UBSan.
# Builds with clang into build-fuzz/ (outside the CMake build) and runs for a bounded time, starting
# from the sample scenes; a crash leaves its input in build-fuzz/ and fails the script.
#   scripts/fuzz.sh [SECONDS]      default 60
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
dir=build-fuzz
mkdir -p "$dir/corpus"
clangxx="${CLANGXX:-clang++}"
if ! command -v "$clangxx" >/dev/null; then
  for v in 19 18 17 16 15 14; do
    if command -v "clang++-$v" >/dev/null; then clangxx="clang++-$v"; break; fi
  done
fi

echo "== build $dir/scene_fuzz with $clangxx"
"$clangxx" -std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iinclude -Isrc \
  fuzz/scene_fuzz.cpp src/io/scene.cpp src/io/json_reader.cpp src/io/json_writer.cpp src/io/file.cpp src/io/obj.cpp \
  -ltinyobjloader -lz -o "$dir/scene_fuzz"

# Seeds: the sample scenes and fuzz/seeds/ (planes and convexes, good and bad; the working corpus
# grows in $dir/corpus between runs).
cp samples/scenes/*.json fuzz/seeds/*.json "$dir/corpus/"

echo "== run for ${seconds}s"
cd "$dir"
./scene_fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -dict=../fuzz/scene.dict -print_final_stats=1 corpus
