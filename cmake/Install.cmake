# Install rules (VKC_INSTALL, on by default when vkcollide is the top-level project):
#   lib/libvkcollide.{a,so}, lib/libvkcollide_scene.{a,so}
#   include/vkcollide/*.h
#   lib/cmake/vkcollide/vkcollide{Config,ConfigVersion,Targets}.cmake: vkcollide::vkcollide, vkcollide::scene
#   lib/pkgconfig/vkcollide.pc, vkcollide-scene.pc
# Everything refers to the install prefix relatively, so `cmake --install build --prefix DIR` and a
# moved prefix work.
include(CMakePackageConfigHelpers)

set(VKC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkcollide)

install(TARGETS vkcollide vkcollide_scene EXPORT vkcollideTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/vkcollide DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(EXPORT vkcollideTargets NAMESPACE vkcollide:: DESTINATION ${VKC_CMAKE_DIR})

# What vkcollideConfig.cmake must find before the targets: Vulkan's headers always (the public
# headers include <vulkan/vulkan.h>); for static archives also what they link privately.
if(BUILD_SHARED_LIBS)
  set(VKC_CONFIG_STATIC OFF)
else()
  set(VKC_CONFIG_STATIC ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vkcollideConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vkcollideConfig.cmake INSTALL_DESTINATION ${VKC_CMAKE_DIR})
# Before 1.0 a minor version may change the API: only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkcollideConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vkcollideConfig.cmake ${PROJECT_BINARY_DIR}/vkcollideConfigVersion.cmake
  DESTINATION ${VKC_CMAKE_DIR})

# pkg-config: prefix is found from the .pc file's own directory (${pcfiledir}, known to pkg-config
# and pkgconf). Link-only dependencies of the static archives go under Libs.private and
# Requires.private (used by `pkg-config --static`).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(VKC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH vkc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  set(VKC_PC_PREFIX "\${pcfiledir}/${vkc_up}")
  string(REGEX REPLACE "/$" "" VKC_PC_PREFIX "${VKC_PC_PREFIX}")
endif()
cmake_path(ABSOLUTE_PATH CMAKE_INSTALL_LIBDIR BASE_DIRECTORY "\${prefix}" OUTPUT_VARIABLE VKC_PC_LIBDIR)
cmake_path(ABSOLUTE_PATH CMAKE_INSTALL_INCLUDEDIR BASE_DIRECTORY "\${prefix}" OUTPUT_VARIABLE VKC_PC_INCLUDEDIR)
# Vulkan's headers: their directory, unless the compiler searches it anyway. Not `Requires: vulkan`,
# whose Libs would link libvulkan: vkcollide loads Vulkan through its own (prefixed) volk.
set(VKC_PC_VULKAN_CFLAGS "")
if(NOT Vulkan_INCLUDE_DIR IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
  set(VKC_PC_VULKAN_CFLAGS " -I${Vulkan_INCLUDE_DIR}")
endif()
set(VKC_PC_LIBS_PRIVATE "-pthread")
foreach(lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND VKC_PC_LIBS_PRIVATE " -l${lib}")
endforeach()
set(VKC_PC_REQUIRES_PRIVATE "")
if(VKC_SIMD)
  set(VKC_PC_REQUIRES_PRIVATE "libhwy")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/vkcollide.pc.in ${PROJECT_BINARY_DIR}/vkcollide.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/vkcollide-scene.pc.in ${PROJECT_BINARY_DIR}/vkcollide-scene.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkcollide.pc ${PROJECT_BINARY_DIR}/vkcollide-scene.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
