#!/usr/bin/env bash
# The test suite: installs what is missing, builds and runs ctest. Vulkan tests run on the default
# device (lavapipe where there is no GPU) under the validation layer; the count that ran is printed.
#   scripts/test.sh             warnings as errors, all tests (what CI runs first)
#   scripts/test.sh --sanitize  AddressSanitizer + UBSan build, CPU tests (names without "Vulkan")
#   scripts/test.sh --scalar    scalar-only CPU build (VKC_SIMD=OFF), all tests
set -euo pipefail
cd "$(dirname "$0")/.."
variant="${1:-default}"
scripts/setup.sh
# Mesa's WSI code complains on every device enumeration when this is unset.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"

jobs="$(nproc)"
case "$variant" in
  default)    dir=build-test;   flags=(-DVKC_WERROR=ON);                  select=() ;;
  --sanitize) dir=build-asan;   flags=(-DVKC_WERROR=ON -DVKC_SANITIZE=ON -DVKC_BUILD_BENCH=OFF -DVKC_BUILD_TOOLS=OFF -DVKC_BUILD_SAMPLES=OFF); select=(-E Vulkan) ;;
  --scalar)   dir=build-scalar; flags=(-DVKC_WERROR=ON -DVKC_SIMD=OFF -DVKC_BUILD_BENCH=OFF);     select=() ;;
  *) echo "usage: scripts/test.sh [--sanitize|--scalar]" >&2; exit 2 ;;
esac

echo "== build ($variant) in $dir"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$jobs"

echo "== ctest ($variant)"
junit="$PWD/$dir/ctest-junit.xml"
status=0
(cd "$dir" && ctest -j"$jobs" --output-on-failure --timeout 900 --output-junit "$junit" "${select[@]}") || status=$?

# Vulkan tests never skip (a missing layer or device fails them); count the ones that ran.
vulkan_run=$(grep -o '<testcase name="[^"]*Vulkan[^"]*"[^>]*status="run"' "$junit" | wc -l || true)
vulkan_all=$(grep -o '<testcase name="[^"]*Vulkan[^"]*"' "$junit" | wc -l || true)
if [ "$variant" = "--sanitize" ]; then
  echo "== Vulkan tests excluded in this variant (CPU tests under ASan/UBSan)"
else
  echo "== Vulkan tests executed: $vulkan_run of $vulkan_all (${VKC_DEVICE:-default device}, validation layer on)"
fi
exit $status
