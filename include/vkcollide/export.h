// Symbol visibility of the public API. vkcollide is compiled with -fvisibility=hidden
// -fvisibility-inlines-hidden, so a shared build (BUILD_SHARED_LIBS=ON) exports only what the public
// headers declare between VKC_API_BEGIN and VKC_API_END (the body of their `namespace vkc`); the
// library's internals (vkc::detail, vkc::cpu, its prefixed volk) stay private to the .so.
// Both macros expand to nothing where GCC's visibility pragmas do not exist.
//
// A class's visibility is fixed where it is first declared: forward declarations of internal types
// (namespace vkc::detail) go outside the markers, or the .so exports those types' members. The
// pragma covers namespace-scope declarations only: a non-inline friend function declared only in its
// class is hidden unless its definition is also between the markers (src/io/scene.cpp). The ctest
// SharedLibraryExportsOnlyTheApi and scripts/package_test.sh check the shared library's exports.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define VKC_API_BEGIN _Pragma("GCC visibility push(default)")
#define VKC_API_END _Pragma("GCC visibility pop")
#else
#define VKC_API_BEGIN
#define VKC_API_END
#endif
