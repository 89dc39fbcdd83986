// stb_image_write (Debian libstb-dev) in its own translation unit.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "colliders.h"

namespace drape {

bool writePng(const char* path, int width, int height, const uint8_t* rgba) {
  return stbi_write_png(path, width, height, 4, rgba, width * 4) != 0;
}

}  // namespace drape
