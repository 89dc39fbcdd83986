/* volk's implementation, from Debian's libvulkan-volk-dev (header-only source in /usr/include). */
#include <volk.c>
