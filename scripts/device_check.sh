#!/usr/bin/env bash
# The real-GPU check, in one command on the GPU machine, from the checkout's root, with the pack made by
# scripts/device_pack.sh beside it (.devpack/vkcollide-devpack.tar.xz). Runs, each under its own time limit:
#   1. `vkcollide devices`;
#   2. the open GPU targets' benchmarks: BVH build of 1M triangles (< 2 ms), 1M particles against a
#      1M-triangle mesh with continuous collision (< 1 ms), 1M and 10M sphere-sphere pairs per batch
#      (10M per ms); and what a saved pipeline cache saves at load time (bench_pipeline_cache);
#   3. the Vulkan conformance suite (every test whose name has "Vulkan") under the validation layer, in
#      12 parallel shards, with exact arithmetic (and the rounding check once without it);
#   4. with --full, every pair type's geometry queries at 10k and 1M and every other benchmark at its
#      default sizes (minutes: only with time to spare).
# Writes to OUTDIR (default $OUT, else device-out): check.log (everything printed), results.tar.gz (each
# step's output, the benchmarks' JSON, the suite's JUnit XML, BUILD-INFO), summary.txt (each step's exit
# status and time, the suite's count, the benchmarks' Vulkan rows). Every step runs even when one before
# it failed; the exit status says whether all passed.
#   scripts/device_check.sh [--quick|--bench|--conformance|--full] [--budget SECONDS] [--filter F]
#                          [--only STEPS] [OUTDIR]
#     (default)      steps 1-3
#     --bench        steps 1-2; --conformance: steps 1 and 3 (a lease's device time may fit only one)
#     --quick        each benchmark's smoke size and 2 of 18 shards of the suite: proves the pack works
#                    (on lavapipe too)
#     --budget       wall-clock seconds for all steps together (default 540); later steps get what is left
#     --filter       the suite's tests: a gtest filter (default '*Vulkan*'; e.g. the tests a run before failed)
#     --only         the steps to run, comma-separated (e.g. conformance,bvh: a short rerun); devices always
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
mode=targets bench=1 conformance=1 budget=540 filter='*Vulkan*' only='' out="${OUT:-device-out}"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick ;;
    --full) mode=full ;;
    --bench) conformance=0 ;;
    --conformance) bench=0 ;;
    --budget) budget="$2"; shift ;;
    --filter) filter="$2"; shift ;;
    --only) only="$2"; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "device_check: unknown option $1" >&2; exit 2 ;;
    *) out="$1" ;;
  esac
  shift
done
start=$(date +%s)
mkdir -p "$out"
out="$(cd "$out" && pwd)"
log="$out/check.log"
summary="$out/summary.txt"
: > "$log"
: > "$summary"
say() { echo "$*" | tee -a "$log"; }

pack=/tmp/vkcollide-devpack
# Unpacked afresh each time: a machine still warm from a call before may hold an older pack.
[ -f .devpack/vkcollide-devpack.tar.xz ] ||
  { say "device_check: no .devpack/vkcollide-devpack.tar.xz (run scripts/device_pack.sh, carry .devpack)"; exit 2; }
rm -rf "$pack" && tar -C /tmp -xJf .devpack/vkcollide-devpack.tar.xz
if ! ldconfig -p | grep -q libGLdispatch.so.0; then
  for deb in "$pack"/gl/*.deb; do dpkg -x "$deb" /; done
  ldconfig
fi
export __EGL_VENDOR_LIBRARY_FILENAMES="${__EGL_VENDOR_LIBRARY_FILENAMES:-/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json}"
export LD_LIBRARY_PATH="$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VK_LAYER_PATH="$pack/layer"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
# The NVIDIA driver's manifest where the GPU machines keep it (the loader's default paths otherwise).
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -z "${VK_ICD_FILENAMES:-}" ]; then
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
             /etc/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
  done
  if [ -z "${VK_DRIVER_FILES:-}" ]; then
    icd="$(find /usr /etc /opt -name 'nvidia_icd*.json' 2>/dev/null | head -1)"
    if [ -n "$icd" ]; then export VK_DRIVER_FILES="$icd"; fi
  fi
fi
# The tests read tests/data and the shaders from the source directory they were built in.
source_dir="$(sed -n 's/^source_dir=//p' "$pack/BUILD-INFO")"
if [ -n "$source_dir" ] && [ ! -e "$source_dir" ]; then
  mkdir -p "$(dirname "$source_dir")" && ln -s "$PWD" "$source_dir"
fi
cat "$pack/BUILD-INFO" >> "$log"
say "== device_check ($mode, budget ${budget} s) at $(date -u +%FT%TZ), checkout $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
results="$out/results"
mkdir -p "$results"
cp "$pack/BUILD-INFO" "$results/"
bin="$pack/bin"
mesh=()
if [ -f "$pack/data/spot.obj" ]; then mesh=(--obj "$pack/data/spot.obj"); fi
status=0

# step NAME SECONDS COMMAND...: runs COMMAND under a limit of SECONDS, or of what is left of the budget.
step() {
  local name="$1" limit="$2"
  shift 2
  if [ -n "$only" ] && [ "$name" != devices ] && [[ ",$only," != *",$name,"* ]]; then return; fi
  local left=$((budget - ($(date +%s) - start)))
  if [ "$left" -lt 20 ]; then say "== $name: skipped (budget spent)"; status=1; return; fi
  if [ "$limit" -gt "$left" ]; then limit=$left; fi
  say "== $name (limit ${limit} s): $*"
  local t0 rc=0
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$results/$name.txt" 2>&1 || rc=$?
  cat "$results/$name.txt" >> "$log"
  say "== $name: rc $rc, $(($(date +%s) - t0)) s"
  echo "$name: rc $rc, $(($(date +%s) - t0)) s" >> "$summary"
  if [ "$rc" -ne 0 ]; then status=1; fi
}

# shards P TOTAL: the Vulkan tests split in TOTAL shards (gtest's own sharding), the first P of them run
# at once, one process each (the tests' CPU references are single-threaded; the GPU machine has 16 cores).
shards() {
  local p="$1" total="$2" i rc=0
  for ((i = 0; i < p; ++i)); do
    GTEST_TOTAL_SHARDS="$total" GTEST_SHARD_INDEX="$i" "$bin/vkc_tests" --gtest_filter="$filter" --gtest_brief=1 \
      --gtest_output="xml:$results/conformance-$i.xml" > "$results/conformance-$i.log" 2>&1 &
  done
  for ((i = 0; i < p; ++i)); do wait -n || rc=1; done
  cat "$results"/conformance-*.log
  return "$rc"
}
export -f shards
export bin results filter
# The command-line tests run the packed tool, not the path the suite was built with.
export VKC_TOOL="$bin/vkcollide"

step devices 30 "$bin/vkcollide" devices
if ! grep -q "^devices: rc 0" "$summary"; then
  # Why the loader found no driver: the manifests it read and the libraries it could not load.
  say "== no device: VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}; nvidia libraries: $(ldconfig -p | grep -c nvidia)"
  VK_LOADER_DEBUG=error,warn,driver "$bin/vkcollide" devices 2>&1 | head -40 | tee -a "$log"
  say "== device_check: no Vulkan device, nothing else run"
  exit 3
fi
if [ "$mode" = quick ]; then
  if [ "$bench" = 1 ]; then
    step bvh 120 "$bin/bench_bvh" --quick "${mesh[@]}" --json "$results/bvh.json"
    step collide_meshes 120 "$bin/bench_collide_meshes" --quick "${mesh[@]}" --json "$results/collide_meshes.json"
    step pipeline_cache 60 "$bin/bench_pipeline_cache" --quick --json "$results/pipeline_cache.json"
    step geometry_queries 120 "$bin/bench_geometry_queries" --quick --pairs sphere-sphere,box-box,cylinder-cylinder \
      --json "$results/geometry_queries.json"
  fi
  if [ "$conformance" = 1 ]; then step conformance 300 bash -c 'shards 2 18'; fi
else
  if [ "$bench" = 1 ]; then
    # What the driver compiled for the kernels of the open targets (registers, local memory), with and
    # without exact arithmetic, and any SPIR-V variants carried in .devpack/variants/ (a driver
    # compiler's failure narrowed down; scripts/device_variants.sh writes them).
    targets=(--shader geometry_queries_basic:2,3 --shader geometry_queries_convex:0,2,3
             --shader geometry_queries_manifold:2,3 --shader collide_meshes:1 --shader bvh:0,1,2,3,4,5)
    variants=()
    for v in .devpack/variants/*.spv; do [ -f "$v" ] && variants+=(--shader "$v:2"); done
    step pipeline_stats 180 "$bin/bench_pipeline_stats" "${targets[@]}" "${variants[@]}" \
      --json "$results/pipeline_stats.json"
    step pipeline_stats_exact 90 "$bin/bench_pipeline_stats" "${targets[@]}" --exact-arithmetic \
      --json "$results/pipeline_stats_exact.json"
    # What a saved pipeline cache saves at load time: the geometry query stage and all its pipelines
    # with an empty cache, then seeded with the first context's cache data.
    step pipeline_cache 90 "$bin/bench_pipeline_cache" --reps 3 --json "$results/pipeline_cache.json"
    step bvh 90 "$bin/bench_bvh" --sizes 1000000 --sah-max 0 --reps 7 "${mesh[@]}" --json "$results/bvh.json"
    # Vulkan rows only (the CPU rows of 1M particles take minutes: measured on CPU machines).
    step collide_meshes 150 "$bin/bench_collide_meshes" --triangles 1000000 --particles 1048576 --reps 5 \
      --vulkan-only "${mesh[@]}" --json "$results/collide_meshes.json"
    # Issue 16's figure itself: 10M sphere-sphere pairs in one batch (the vulkan-resident and
    # vulkan-primitive rows' pairs per GPU ms; the slow CPU rows skip themselves by the row budget).
    step geometry_queries_10m 90 "$bin/bench_geometry_queries" --pairs sphere-sphere --batches 1000000,10000000 \
      --no-fcl --reps 5 --row-budget 8 --json "$results/geometry_queries_10m.json"
    # The same with exact arithmetic (ContextCreateInfo::exactArithmetic): its cost.
    step geometry_queries_10m_exact 90 "$bin/bench_geometry_queries" --pairs sphere-sphere \
      --batches 1000000,10000000 --no-fcl --reps 5 --row-budget 8 --exact-arithmetic \
      --json "$results/geometry_queries_10m_exact.json"
  fi
  if [ "$conformance" = 1 ]; then
    # The suite runs with exact arithmetic on a GPU (tests/support/vulkan_fixture.h); the device's own
    # division and square root measured without it.
    step rounding_device 60 env VKC_TEST_EXACT_ARITHMETIC=0 "$bin/vkc_tests" --gtest_filter='RoundingVulkan.*'
    step conformance 400 bash -c 'shards 12 12'
  fi
  if [ "$mode" = full ]; then
    # Every pair type at 10k and 1M queries (minutes: the CPU rows of 16 pair types).
    step geometry_queries 150 "$bin/bench_geometry_queries" --batches 10000,1000000 --no-fcl --reps 5 \
      --row-budget 4 --json "$results/geometry_queries.json"
    for b in bounds radix_sort self_collision inter_collision collide_shapes mesh_queries; do
      step "$b" 300 "$bin/bench_$b" --json "$results/$b.json"
    done
  fi
fi

# The suite's count and the target rows, for the reply's tail.
if ls "$results"/conformance-*.xml > /dev/null 2>&1; then
  cat "$results"/conformance-*.xml | grep -o '<testsuites tests="[0-9]*" failures="[0-9]*"' |
    awk -F'"' '{ t += $2; f += $4 } END { print "conformance: " t " Vulkan tests ran, " f " failed" }' >> "$summary"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$results/conformance.txt" | sort -u | sed 's/^/  /' >> "$summary" || true
fi
for f in bvh collide_meshes geometry_queries geometry_queries_10m; do
  [ -f "$results/$f.txt" ] && grep -iE 'vulkan' "$results/$f.txt" | head -40 | sed "s/^/$f | /" >> "$summary"
done
tar -C "$out" -czf "$out/results.tar.gz" results && rm -rf "$results"
say "== device_check: status $status, $(($(date +%s) - start)) s"
cat "$summary"
exit $status
