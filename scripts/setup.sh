#!/usr/bin/env bash
# Installs the Debian 12 packages vkcollide needs to build, test and run (root, or sudo).
# Idempotent: prints what it installs, and nothing is installed twice.
set -euo pipefail

PACKAGES=(
  cmake g++ make git pkg-config ccache
  libvulkan-dev libvulkan1 libvulkan-volk-dev glslang-tools spirv-tools
  libglm-dev libhwy-dev googletest libgtest-dev gzip zlib1g-dev libstb-dev
  clang libclang-rt-14-dev
  mesa-vulkan-drivers vulkan-validationlayers
  libcgal-dev
  libembree-dev
  libtinyobjloader-dev
  libfcl-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} Debian packages already installed"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
