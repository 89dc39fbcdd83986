#!/usr/bin/env bash
# The main program: installs what is missing, builds, lists the Vulkan devices, runs the NvCloth
# drape state through every stage on every backend (`vkcollide compare`: Vulkan on the default device
# -- VKC_DEVICE selects another -- against the CPU twins), then the drape sample, which writes PNG
# frames and a contact sheet to build/drape-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Mesa's WSI code complains on every device enumeration when this is unset.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target vkcollide_tool drape
build/tools/vkcollide devices
build/tools/vkcollide compare bench/scenes/nvcloth-drape-64.json
build/samples/drape/drape --out build/drape-out "$@"
