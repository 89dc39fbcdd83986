#!/usr/bin/env bash
# The main program: installs what is missing, builds, lists the Vulkan devices, then runs the bounds
# stage and a sphere/capsule collision iteration (CCD + friction) on the default device (VKC_DEVICE
# selects another) and compares them with the CPU twins.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Mesa's WSI code complains on every device enumeration when this is unset.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target vkcollide_tool
build/tools/vkcollide devices
build/tools/vkcollide bounds
build/tools/vkcollide shapes --ccd --friction 0.3
