#!/usr/bin/env bash
# Packs the Vulkan conformance suite, the `vkcollide` tool and the benchmarks, built on this Debian 12
# machine, for a machine with a real GPU that has no compiler and none of this project's dependencies
# (README, "On a real GPU"): the stripped binaries, the shared libraries they load beyond the C and
# C++ runtimes, the Vulkan loader, the validation layer with its manifest pointing beside it, and the
# test mesh the benchmarks subdivide. One file: .devpack/vkcollide-devpack.tar.xz (ignored by git; about
# 25 MB), which scripts/device_check.sh unpacks and runs on the GPU machine.
#   scripts/device_pack.sh [BUILD_DIR]   (default build-test: scripts/test.sh's build and flags)
set -euo pipefail
# A failing command stops the script (set -e); say which, since some (ldd in a pipeline) print nothing.
trap 'echo "device_pack.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
build="${1:-build-test}"
scripts/setup.sh

launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKC_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    "${launcher[@]}" >/dev/null
fi
benches=(bench_bounds bench_bvh bench_collide_meshes bench_collide_shapes bench_geometry_queries
         bench_inter_collision bench_mesh_queries bench_pipeline_cache bench_pipeline_stats bench_radix_sort
         bench_self_collision)
cmake --build "$build" -j"$(nproc)" --target vkc_tests vkcollide_tool "${benches[@]}"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
pack="$stage/vkcollide-devpack"
mkdir -p "$pack/bin" "$pack/lib" "$pack/layer" "$pack/data"
binaries=("$build/tests/vkc_tests" "$build/tools/vkcollide")
for b in "${benches[@]}"; do binaries+=("$build/bench/$b"); done
for b in "${binaries[@]}"; do strip -o "$pack/bin/$(basename "$b")" "$b"; done

# The shared libraries the binaries load (Highway, FCL, Embree, ...), less the C and C++ runtimes,
# which the GPU machine has in newer versions. The Vulkan loader is packed too: that machine may lack it.
runtime='^(linux-vdso|ld-linux|libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt)\.'
for b in "${binaries[@]}"; do
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
  if [[ ! "$name" =~ $runtime ]]; then cp -L "$path" "$pack/lib/$name"; fi
done
# (awk reads to the end: exiting at the first match made ldconfig die of SIGPIPE when it had more to
# write, and pipefail then stopped the script, now and then: exit 141.)
# The NVIDIA Vulkan driver (libGLX_nvidia.so.0 on the GPU machine) needs GLVND (libGLdispatch, libGLX,
# libEGL) installed system-wide, which a bare GPU machine lacks: the loader then finds the manifest but
# "could not get vkCreateInstance" (VK_ERROR_INCOMPATIBLE_DRIVER). Their Debian packages travel in gl/;
# device_check.sh unpacks them into / where the machine has no libGLdispatch.
mkdir -p "$pack/gl"
(cd "$pack/gl" && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 2>/dev/null)
loader="$(ldconfig -p | awk '/libvulkan\.so\.1 / && !found { print $NF; found = 1 }')"
cp -L "$loader" "$pack/lib/libvulkan.so.1"

# The validation layer (the tests fail without it) with a manifest whose library path is relative to it.
manifest=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
cp -L "$(ldconfig -p | awk '/libVkLayer_khronos_validation\.so / && !found { print $NF; found = 1 }')" "$pack/layer/"
sed -E 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' "$manifest" \
  > "$pack/layer/VkLayer_khronos_validation.json"
grep -q '"library_path": "./libVkLayer_khronos_validation.so"' "$pack/layer/VkLayer_khronos_validation.json" ||
  { echo "device_pack: could not point the layer manifest at the packed layer" >&2; exit 1; }

# The benchmarks' mesh (beside the repository, not in it) and the source directory the tests were
# built against (they read tests/data and shaders from it: device_check.sh links it to the checkout).
for mesh in ../shared/meshes/spot.obj ../../shared/meshes/spot.obj; do
  if [ -f "$mesh" ]; then cp "$mesh" "$pack/data/spot.obj"; break; fi
done
{
  source_dir="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
  echo "source_dir=$source_dir"
  echo "commit=$(git -C "$source_dir" rev-parse HEAD)$(git -C "$source_dir" diff --quiet HEAD || echo '-dirty')"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(c++ --version | head -1)"
} > "$pack/BUILD-INFO"

mkdir -p .devpack
tar -C "$stage" -cJf .devpack/vkcollide-devpack.tar.xz vkcollide-devpack
echo "== .devpack/vkcollide-devpack.tar.xz: $(du -h .devpack/vkcollide-devpack.tar.xz | cut -f1)," \
     "$(ls "$pack/bin" | wc -l) binaries, $(ls "$pack/lib" | wc -l) libraries; $(cat "$pack/BUILD-INFO" | tr '\n' ' ')"
