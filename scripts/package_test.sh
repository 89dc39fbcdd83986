#!/usr/bin/env bash
# The installable package, checked as an integrator uses it: builds the library alone (no tests,
# tools, benchmarks or samples), installs it into a prefix under build-package/, and builds and runs
# tests/package/consumer/ against it three ways:
#   1. find_package(vkcollide) against the install prefix     (static archives, then shared libraries)
#   2. pkg-config vkcollide vkcollide-scene                    (--static, then shared)
#   3. add_subdirectory() of this source tree
# and checks the installed shared libraries' exports (tests/package/check_symbols.sh).
#   scripts/package_test.sh          (CI: .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
src="$PWD"
root="$src/build-package"
jobs="$(nproc)"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
rm -rf "$root/static" "$root/shared" "$root/consumer-"*
launcher=()
if command -v ccache >/dev/null; then
  # Paths hashed relative to the source tree: the three library builds below compile the same
  # objects in build directories of the same depth, so the second and third hit the cache.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$src}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# Release as an integrator builds it; warnings are not errors here (scripts/test.sh builds with -Werror).
# Position-independent code in all three builds (as a shared build needs it anyway, and as hosts that
# link into PIE executables or their own .so build it): the objects are then the same in each.
lib_only=(-DVKC_BUILD_TESTS=OFF -DVKC_BUILD_BENCH=OFF -DVKC_BUILD_TOOLS=OFF -DVKC_BUILD_SAMPLES=OFF
          -DCMAKE_POSITION_INDEPENDENT_CODE=ON)

# install KIND (static|shared): configure, build and `cmake --install --prefix` into $root/KIND/prefix.
install_library() {
  local kind="$1" shared=OFF
  [ "$kind" = shared ] && shared=ON
  echo "== vkcollide ($kind): build and install into build-package/$kind/prefix"
  cmake -S "$src" -B "$root/$kind/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=$shared \
    "${lib_only[@]}" "${launcher[@]}" >/dev/null
  cmake --build "$root/$kind/build" -j"$jobs" >/dev/null
  cmake --install "$root/$kind/build" --prefix "$root/$kind/prefix" >/dev/null
}

# consumer NAME CMAKE_ARGS...: configure, build and run tests/package/consumer.
consumer() {
  local name="$1"; shift
  echo "== consumer: $name"
  cmake -S "$src/tests/package/consumer" -B "$root/consumer-$name" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
  cmake --build "$root/consumer-$name" -j"$jobs" >/dev/null
  "$root/consumer-$name/consumer"
}

install_library static
prefix="$root/static/prefix"
consumer find_package-static -DVKC_CONSUMER_MODE=package -DCMAKE_PREFIX_PATH="$prefix"
PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name vkcollide.pc)")" \
  consumer pkg-config-static -DVKC_CONSUMER_MODE=pkgconfig -DVKC_CONSUMER_STATIC=ON

install_library shared
prefix="$root/shared/prefix"
libdir="$(dirname "$(find "$prefix" -name 'libvkcollide.so' | head -1)")"
tests/package/check_symbols.sh nm shared-api "$libdir/libvkcollide.so" "$libdir/libvkcollide_scene.so"
consumer find_package-shared -DVKC_CONSUMER_MODE=package -DCMAKE_PREFIX_PATH="$prefix"
PKG_CONFIG_PATH="$libdir/pkgconfig" \
  consumer pkg-config-shared -DVKC_CONSUMER_MODE=pkgconfig -DVKC_CONSUMER_STATIC=OFF
# The executables must have used the shared libraries (not a static copy).
for c in find_package-shared pkg-config-shared; do
  deps="$(ldd "$root/consumer-$c/consumer")"
  if ! grep -q "libvkcollide.so" <<<"$deps"; then
    echo "consumer-$c does not load libvkcollide.so"; exit 1
  fi
done

consumer add_subdirectory -DVKC_CONSUMER_MODE=subdirectory -DVKC_SOURCE_DIR="$src" -DCMAKE_POSITION_INDEPENDENT_CODE=ON
echo "== package test: all consumers built and passed"
