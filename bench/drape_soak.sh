#!/usr/bin/env bash
# The drape sample as a benchmark and soak on the Vulkan device: 1,000 frames of the 32x32 cloth
# (8 substeps, self collision once per frame, CCD shapes, render and readback every frame, no PNGs,
# no CPU twin) with the checks of the CPU soak (tests/soak/drape_soak.cpp) on every frame: finite,
# no particle deeper than 1e-4 m inside a collider, resident set within 4 MiB of where it was after
# the warm-up frames. Writes the results file (bench/results format, "benchmark": "drape_soak") and
# exits non-zero when a check fails.
#   bench/drape_soak.sh [--build DIR=build-test] [--frames F=1000] [--json PATH=drape_soak.json] [drape options...]
# The ctest smoke (drape_Vulkan_soak_smoke) runs the sample directly with fewer frames.
set -euo pipefail
build=build-test
frames=1000
json=drape_soak.json
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
drape="$build/samples/drape/drape"
[ -x "$drape" ] || { echo "drape_soak.sh: no $drape (build the samples first)" >&2; exit 2; }
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$drape" --size 32 --frames "$frames" --png-every 0 --no-cpu --check --json "$json" --out "$out" "${extra[@]}"
