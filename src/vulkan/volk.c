/* volk's implementation, from Debian's libvulkan-volk-dev (header-only source in /usr/include), with
   every global symbol prefixed vkc_ (see src/CMakeLists.txt). */
#include "vkc_volk_names.h"
#include <volk.c>
