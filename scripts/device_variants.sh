#!/usr/bin/env bash
# Diagnostic SPIR-V variants of the convex family's shader for a GPU session, written to
# .devpack/variants/ (ignored by git), where scripts/device_check.sh's pipeline_stats step finds them
# and asks the driver to create each one's QUERY COUNT pipeline (constant 0 = 2). On an H100 with
# driver 580 that pipeline failed (VK_ERROR_UNKNOWN) while QUERY WRITE compiled; each variant removes
# one difference between the two passes (shared/geometry_queries_family.h, VKC_DIAG_*), so the one that
# compiles names the cause. The variants change results: they are for the compiler only, never run.
#   scripts/device_variants.sh [BUILD_DIR]   (default build: where vkc_spirv_embed was built)
# Each variant is built as the library builds its shaders (glslang, then vkc_spirv_embed's NoContraction
# decoration), without exact arithmetic, as the failing pipeline was. Four variants: a driver took tens
# of seconds to fail each convex pipeline, and device_check.sh's step has 180 s for all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
embed="$build/vkc_spirv_embed"
[ -x "$embed" ] || { echo "device_variants.sh: no $embed (build the project first: cmake --build $build)" >&2; exit 1; }
out=.devpack/variants
mkdir -p "$out"
rm -f "$out"/*.spv
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The words of array NAME in a vkc_spirv_embed header, as a binary SPIR-V file.
header_to_spv() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, struct, sys
text = open(sys.argv[1]).read()
m = re.search(r"const uint32_t " + re.escape(sys.argv[2]) + r"\[\] = \{(.*?)\};", text, re.S)
if not m:
    sys.exit("no array %s in %s" % (sys.argv[2], sys.argv[1]))
words = [int(w, 16) for w in re.findall(r"0x[0-9a-fA-F]+", m.group(1))]
open(sys.argv[3], "wb").write(struct.pack("<%dI" % len(words), *words))
PY
}

# name: the macros it defines
variants=(
  "always_load:VKC_DIAG_ALWAYS_LOAD"
  "no_checks:VKC_DIAG_NO_CHECKS"
  "no_atomics:VKC_DIAG_NO_ATOMICS"
  "all:VKC_DIAG_ALWAYS_LOAD,VKC_DIAG_NO_CHECKS,VKC_DIAG_NO_ATOMICS"
)
src=shaders/geometry_queries_convex.comp
for v in "${variants[@]}"; do
  name="${v%%:*}"
  defines=()
  IFS=, read -r -a macros <<< "${v#*:}"
  for m in "${macros[@]}"; do defines+=("-D$m"); done
  glslangValidator --quiet --target-env vulkan1.3 -Ishaders "${defines[@]}" -o "$work/$name.spv" "$src"
  "$embed" "$work/$name.spv" "$work/$name.h" variant
  header_to_spv "$work/$name.h" variant "$out/convex_$name.spv"
  echo "device_variants.sh: $out/convex_$name.spv (${macros[*]})"
done
# The unchanged shader through the same steps: its words must equal the library's embedded module, or
# the variants above were not built as the library builds.
glslangValidator --quiet --target-env vulkan1.3 -Ishaders -o "$work/base.spv" "$src"
"$embed" "$work/base.spv" "$work/base.h" vkc_spv_geometry_queries_convex
header_to_spv "$work/base.h" vkc_spv_geometry_queries_convex "$work/base.words"
header_to_spv "$build/src/generated/shaders/geometry_queries_convex.spv.h" vkc_spv_geometry_queries_convex "$work/lib.words"
cmp -s "$work/base.words" "$work/lib.words" ||
  { echo "device_variants.sh: the unchanged shader differs from $build's embedded module (rebuild $build)" >&2; exit 1; }
echo "device_variants.sh: the unchanged shader equals $build's embedded module"
