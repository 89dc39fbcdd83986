#!/usr/bin/env bash
# Fuzzes the file readers with libFuzzer, AddressSanitizer and UBSan: the scene-file parser
# (fuzz/scene_fuzz.cpp) and the query-file, contacts-file and curves-file readers (fuzz/query_fuzz.cpp). Builds
# both with clang into build-fuzz/ (outside the CMake build) and runs each for its share of a bounded
# time, scene_fuzz first (the odd second), then query_fuzz; a crash leaves its input in build-fuzz/
# (named scene_fuzz-crash-... or query_fuzz-crash-...) and fails the script, after both have run.
#   scripts/fuzz.sh [SECONDS]      default 60: 30 s each
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
dir=build-fuzz
mkdir -p "$dir/corpus" "$dir/query-corpus"
clangxx="${CLANGXX:-clang++}"
if ! command -v "$clangxx" >/dev/null; then
  for v in 19 18 17 16 15 14; do
    if command -v "clang++-$v" >/dev/null; then clangxx="clang++-$v"; break; fi
  done
fi
flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Iinclude -Isrc)

echo "== build $dir/scene_fuzz with $clangxx"
"$clangxx" "${flags[@]}" \
  fuzz/scene_fuzz.cpp src/io/scene.cpp src/io/json_reader.cpp src/io/json_writer.cpp src/io/file.cpp src/io/obj.cpp \
  -ltinyobjloader -lz -o "$dir/scene_fuzz"
# query_fuzz also runs small accepted query files on the CPU reference (validate, queryGeometriesCpu
# with kCpuScalar): these sources, listed by hand (a file the path comes to need fails the link,
# naming its symbol). They are built at -O0, which halves their build time (about 30 s instead of 80 s
# on a 2-core machine) at little cost in executions: runOnCpu only takes small files. executor.cpp
# reaches the Vulkan headers (vulkan/context_impl.h); the fuzz build links no Vulkan code, so the
# symbol names that CMake generates for volk (src/CMakeLists.txt) can stay empty here.
cpu_sources=(src/cpu/geometry_queries.cpp src/cpu/geometry_queries_mesh.cpp src/cpu/geometry_queries_mesh_ccd.cpp
  src/cpu/geometry_queries_mesh_mesh.cpp src/cpu/geometry_queries_mesh_prims.cpp src/cpu/geometry_query_trees.cpp
  src/cpu/geometry_queries_simd.cpp src/cpu/geometry_queries_mesh_mesh_simd.cpp
  src/cpu/geometry_queries_cylinder_box_simd.cpp src/cpu/geometry_queries_cylinder_cylinder_simd.cpp
  src/cpu/bvh.cpp src/cpu/mesh_pair_walk.cpp src/cpu/mesh_pair_walk_simd.cpp src/cpu/mesh_intersection.cpp
  src/cpu/radix_sort.cpp src/cpu/radix_sort_simd.cpp src/cpu/executor.cpp
  src/scene/geometry_queries_validate.cpp src/scene/bvh_validate.cpp src/scene/validate.cpp)
echo "== build $dir/query_fuzz with $clangxx (the CPU query path: ${#cpu_sources[@]} files at -O0)"
mkdir -p "$dir/cpu" "$dir/generated"
: > "$dir/generated/vkc_volk_names.h"
cpu_objects=()
for src in "${cpu_sources[@]}"; do
  obj="$dir/cpu/$(basename "$src" .cpp).o"
  "$clangxx" -std=c++20 -O0 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
    -fno-sanitize-recover=undefined -Iinclude -Isrc -Ishaders -I"$dir/generated" -DVK_NO_PROTOTYPES -c "$src" -o "$obj"
  cpu_objects+=("$obj")
done
"$clangxx" "${flags[@]}" \
  fuzz/query_fuzz.cpp src/io/query_file.cpp src/io/curves_file.cpp src/io/json_reader.cpp src/io/json_writer.cpp src/io/file.cpp \
  "${cpu_objects[@]}" -lz -lpthread -o "$dir/query_fuzz"

# Seeds: the sample scenes and fuzz/seeds/ (planes and convexes, good and bad) for scene_fuzz; the
# sample query files and fuzz/query-seeds/ (every geometry type, both methods, and contacts files
# written by `vkcollide query`) for query_fuzz. The working corpora grow in $dir between runs.
cp samples/scenes/*.json fuzz/seeds/*.json "$dir/corpus/"
cp samples/queries/*.json fuzz/query-seeds/*.json "$dir/query-corpus/"

# The time split between the two targets (each at least 1 s: 0 would mean no limit).
query_seconds=$((seconds / 2 > 0 ? seconds / 2 : 1))
scene_seconds=$((seconds - seconds / 2))
cd "$dir"
status=0
run() {  # NAME SECONDS DICT CORPUS
  echo "== run $1 for ${2}s"
  "./$1" -max_total_time="$2" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$1-" \
    -dict="$3" -print_final_stats=1 "$4" || { echo "== $1 failed (exit $?)"; status=1; }
}
run scene_fuzz "$scene_seconds" ../fuzz/scene.dict corpus
run query_fuzz "$query_seconds" ../fuzz/query.dict query-corpus
exit "$status"
