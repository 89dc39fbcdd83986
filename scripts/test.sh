#!/usr/bin/env bash
# The test suite: installs what is missing, builds and runs ctest. Vulkan tests run on the default
# device (lavapipe where there is no GPU) under the validation layer; the count that ran is printed.
#   scripts/test.sh             warnings as errors, all tests (what CI runs first)
#   scripts/test.sh --sanitize  AddressSanitizer + UBSan build, CPU tests (names without "Vulkan")
#   scripts/test.sh --scalar    scalar-only CPU build (VKC_SIMD=OFF), CPU tests (names without "Vulkan":
#                               the Vulkan path does not depend on VKC_SIMD, and the default run already
#                               checks it against the scalar twin)
#                               Both also leave out PassDeclTable.* and SpirvValid.*: their time is
#                               spirv-opt's and spirv-val's (separate programs) on the same embedded SPIR-V
#                               the default run checks (PassDeclTable: 71 s of each run's test time, 2026-11-28)
#   scripts/test.sh --lp128     the default build's Vulkan tests (drape sample included) on lavapipe
#                               with 128-bit vectors: subgroup size 4 (README, "The two commands"),
#                               less those whose result cannot depend on the subgroup size: the
#                               geometry-query tests (tests/spirv/subgroup_test.cpp proves their shaders
#                               use no subgroup operation) and the host's allocation-failure tests
set -euo pipefail
cd "$(dirname "$0")/.."
variant="${1:-default}"
scripts/setup.sh
# Mesa's WSI code complains on every device enumeration when this is unset.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"

jobs="$(nproc)"
# Test builds keep line tables only (-g1: enough for backtraces and sanitizer reports; the code is the
# same as RelWithDebInfo's -O2 -g, and the build is ~35% faster). The sanitizer build uses -O1, as
# AddressSanitizer's documentation advises (about half the compile time of -O2 -g).
optimized=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
sanitized=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")
case "$variant" in
  default)    dir=build-test;   flags=(-DVKC_WERROR=ON "${optimized[@]}");                  select=() ;;
  --sanitize) dir=build-asan;   flags=(-DVKC_WERROR=ON -DVKC_SANITIZE=ON "${sanitized[@]}" -DVKC_BUILD_BENCH=OFF -DVKC_BUILD_TOOLS=OFF -DVKC_BUILD_SAMPLES=OFF); select=(-E "Vulkan|PassDeclTable\\.|SpirvValid\\.") ;;
  --scalar)   dir=build-scalar; flags=(-DVKC_WERROR=ON "${optimized[@]}" -DVKC_SIMD=OFF -DVKC_BUILD_BENCH=OFF);     select=(-E "Vulkan|PassDeclTable\\.|SpirvValid\\.") ;;
  --lp128)    dir=build-test;   flags=(-DVKC_WERROR=ON "${optimized[@]}");                  select=(-R Vulkan -E "GeometryQuer|QueryCli|geometry_queries|mesh_queries|EveryFailingAllocation") ;;
  *) echo "usage: scripts/test.sh [--sanitize|--scalar|--lp128]" >&2; exit 2 ;;
esac
if [ "$variant" = "--lp128" ]; then
  # lavapipe with 128-bit vectors runs compute shaders with subgroup size 4 (as on some mobile and
  # Intel GPUs). DRAW_USE_LLVM=0: Mesa 22.3's llvmpipe draw module, with 128-bit vectors, JIT-compiles
  # vertex shaders that store 8 vertices per step into an output buffer sized for multiples of 4
  # (a heap overflow of up to 4 vertices: the drape sample's render crashed in about 1 run of 4, and
  # every run under Electric Fence); the interpreter path for vertex shaders has no such overrun.
  # Compute shaders (vkcollide's and the sample's solver) are still JIT-compiled at subgroup size 4.
  export LP_NATIVE_VECTOR_WIDTH=128 DRAW_USE_LLVM=0
fi

# A compile cache (ccache, installed by setup.sh) shared by the variants: the scalar build recompiles
# only the few files that see VKC_HAVE_SIMD, and scripts/package_test.sh's add_subdirectory and shared
# builds reuse its static build. Paths are hashed relative to the source tree, so that build
# directories of the same depth share entries.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

echo "== build ($variant) in $dir"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${flags[@]}" "${launcher[@]}" >/dev/null
cmake --build "$dir" -j"$jobs"

echo "== ctest ($variant)"
junit="$PWD/$dir/ctest-junit.xml"
if [ "$variant" = "--lp128" ]; then junit="$PWD/$dir/ctest-junit-lp128.xml"; fi
status=0
(cd "$dir" && ctest -j"$jobs" --output-on-failure --timeout 900 --output-junit "$junit" "${select[@]}") || status=$?

# Vulkan tests never skip (a missing layer or device fails them); count the ones that ran. The test
# binary's Vulkan tests run a suite per process (cmake/vulkan_suites.cmake), under entries named
# "<suite> [<n> Vulkan tests]": such an entry counts n.
read -r vulkan_run vulkan_all < <(grep -o '<testcase name="[^"]*Vulkan[^"]*"[^>]*status="[a-z]*"' "$junit" | awk '
  { n = 1; if (match($0, /\[[0-9]+ Vulkan tests?\]/)) n = substr($0, RSTART + 1) + 0
    all += n; if ($0 ~ /status="run"/) run += n }
  END { print run + 0, all + 0 }' || true)
if [ "$variant" = "--sanitize" ] || [ "$variant" = "--scalar" ]; then
  echo "== Vulkan tests excluded in this variant (CPU tests only)"
else
  echo "== Vulkan tests executed: $vulkan_run of $vulkan_all (${VKC_DEVICE:-default device}, validation layer on)"
fi
if [ "$variant" = "--lp128" ]; then
  # The run really had subgroup size 4: the drape soak smoke's results file says so.
  grep -q '"subgroup_size": 4,' "$dir/samples/drape/drape_soak_smoke.json" ||
    { echo "== --lp128: the device did not report subgroup size 4" >&2; status=1; }
fi
exit $status
