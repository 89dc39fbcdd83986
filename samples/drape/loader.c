/* The sample's own Vulkan loader, as a renderer has one: volk's implementation from Debian's
   libvulkan-volk-dev. vkcollide's copy inside the library is prefixed (vkc_...), so the two never
   clash; vkcollide reaches this device through Context::import's getInstanceProcAddr. */
#include <volk.c>
