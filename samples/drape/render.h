// The drape sample's offscreen render (scaffolding: nothing here calls vkcollide): the colliders'
// meshes, then the cloth straight from the particle buffer (bound as the vertex buffer, and as a
// storage buffer for smooth normals), into a colour image that frames to be saved are copied from;
// and the PNG contact sheet.
#pragma once

#include <cstdint>
#include <vector>

#include <glm/glm.hpp>

#include "gpu.h"
#include "options.h"

namespace drape {

struct Renderer {
  Buffer clothIndices, meshVertices, meshIndices;  // device-local, uploaded once
  Buffer readImage;                                // host-visible copy of the colour image
  Image color, depth;
  GraphicsPipeline pipeline;
  uint32_t clothIndexCount = 0, meshIndexCount = 0;
  glm::mat4 viewProj{1.0f};
};

// Creates the render's resources and uploads the meshes (a one-time submit on the queue).
Renderer createRenderer(const Gpu& g, const Options& o, const Scene& sc);
void destroy(const Gpu& g, Renderer& r);

// Records the render of the particles in `b` (read after vkcollide's closing barrier) and, with
// `copyImage`, the copy of the colour image into readImage (ends with the image in TRANSFER_SRC).
void recordRender(VkCommandBuffer cmd, const Renderer& r, const Options& o, const ParticleBuffers& b, bool copyImage);

// A rendered frame kept for the contact sheet.
struct Saved {
  uint32_t frame;
  std::vector<uint8_t> rgba;
};
// Writes contact_sheet.png (up to 12 of the saved frames, evenly spaced, at half size, 4 per row) to
// --out and says so; nothing when no frame was saved.
void writeContactSheet(const Options& o, const std::vector<Saved>& saved);

}  // namespace drape
