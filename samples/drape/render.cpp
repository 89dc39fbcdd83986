// The drape sample's offscreen render (see render.h).
#include "render.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <glm/gtc/matrix_transform.hpp>

#include "colliders.h"

namespace drape {

using glm::vec3;
using glm::vec4;

Renderer createRenderer(const Gpu& g, const Options& o, const Scene& sc) {
  Renderer r;
  const uint32_t n = o.size;
  std::vector<uint32_t> clothIndices;
  for (uint32_t y = 0; y + 1 < n; ++y) {
    for (uint32_t x = 0; x + 1 < n; ++x) {
      const uint32_t a = y * n + x, b = a + 1, c = a + n, d = c + 1;
      clothIndices.insert(clothIndices.end(), {a, c, b, b, c, d});
    }
  }
  Mesh colliderMesh;
  // Drawn at their true size; they collide grown by the cloth's thickness (colliderSpheres).
  appendSphere(colliderMesh, vec3(sc.sphere), sc.sphere.w, 48, 24);
  appendTaperedCapsule(colliderMesh, vec3(sc.capsuleA), sc.capsuleA.w, vec3(sc.capsuleB), sc.capsuleB.w, 32,
                       16);
  appendGround(colliderMesh, 0.0f, sc.groundY, 0.0f, 6.0f);  // a 6 m square of the (unbounded) ground plane
  r.clothIndexCount = static_cast<uint32_t>(clothIndices.size());
  r.meshIndexCount = static_cast<uint32_t>(colliderMesh.indices.size());
  const VkDeviceSize clothIndexBytes = clothIndices.size() * sizeof(uint32_t);
  const VkDeviceSize meshVertexBytes = colliderMesh.vertices.size() * sizeof(vec4);
  const VkDeviceSize meshIndexBytes = colliderMesh.indices.size() * sizeof(uint32_t);
  r.clothIndices = createBuffer(g, clothIndexBytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                false);
  r.meshVertices = createBuffer(g, meshVertexBytes,
                                VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);
  r.meshIndices = createBuffer(g, meshIndexBytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               false);
  r.readImage = createBuffer(g, VkDeviceSize{o.width} * o.height * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  r.color = createImage(g, o.width, o.height, kColorFormat,
                        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, VK_IMAGE_ASPECT_COLOR_BIT);
  r.depth = createImage(g, o.width, o.height, kDepthFormat, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                        VK_IMAGE_ASPECT_DEPTH_BIT);
  r.pipeline = graphicsPipeline(g);

  // Camera.
  const float aspect = static_cast<float>(o.width) / static_cast<float>(o.height);
  glm::mat4 proj = glm::perspective(glm::radians(34.0f), aspect, 0.05f, 20.0f);
  proj[1][1] *= -1.0f;  // Vulkan's y points down
  const glm::mat4 view = glm::lookAt(vec3(1.5f, 1.45f, 3.9f), vec3(0.1f, -0.12f, 0.0f), vec3(0, 1, 0));
  r.viewProj = proj * view;

  // Upload through a staging buffer.
  Buffer staging = createBuffer(g, clothIndexBytes + meshVertexBytes + meshIndexBytes,
                                VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
  auto* bytes = static_cast<uint8_t*>(staging.mapped);
  std::memcpy(bytes, clothIndices.data(), clothIndexBytes);
  std::memcpy(bytes + clothIndexBytes, colliderMesh.vertices.data(), meshVertexBytes);
  std::memcpy(bytes + clothIndexBytes + meshVertexBytes, colliderMesh.indices.data(), meshIndexBytes);
  submitOnce(g, [&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, clothIndexBytes};
    vkCmdCopyBuffer(cmd, staging.buffer, r.clothIndices.buffer, 1, &region);
    region = {clothIndexBytes, 0, meshVertexBytes};
    vkCmdCopyBuffer(cmd, staging.buffer, r.meshVertices.buffer, 1, &region);
    region = {clothIndexBytes + meshVertexBytes, 0, meshIndexBytes};
    vkCmdCopyBuffer(cmd, staging.buffer, r.meshIndices.buffer, 1, &region);
    memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_VERTEX_INPUT_BIT,
                  VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_2_INDEX_READ_BIT);
  });
  destroy(g, staging);
  return r;
}

void destroy(const Gpu& g, Renderer& r) {
  vkDestroyPipeline(g.device, r.pipeline.pipeline, nullptr);
  vkDestroyPipelineLayout(g.device, r.pipeline.layout, nullptr);
  vkDestroyDescriptorSetLayout(g.device, r.pipeline.setLayout, nullptr);
  destroy(g, r.color);
  destroy(g, r.depth);
  for (Buffer* b : {&r.clothIndices, &r.meshVertices, &r.meshIndices, &r.readImage}) destroy(g, *b);
}

void recordRender(VkCommandBuffer cmd, const Renderer& r, const Options& o, const ParticleBuffers& b, bool copyImage) {
  VkImageMemoryBarrier2 toAttachment[2] = {
      imageBarrier(r.color.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                   VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT, VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT,
                   VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL),
      imageBarrier(
          r.depth.image, VK_IMAGE_ASPECT_DEPTH_BIT,
          VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
          VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
          VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
          VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT | VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
          VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL)};
  VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  di.imageMemoryBarrierCount = 2;
  di.pImageMemoryBarriers = toAttachment;
  vkCmdPipelineBarrier2(cmd, &di);
  VkRenderingAttachmentInfo colorAttachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
  colorAttachment.imageView = r.color.view;
  colorAttachment.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
  colorAttachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  colorAttachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  colorAttachment.clearValue.color = {{0.93f, 0.94f, 0.96f, 1.0f}};
  VkRenderingAttachmentInfo depthAttachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
  depthAttachment.imageView = r.depth.view;
  depthAttachment.imageLayout = VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL;
  depthAttachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  depthAttachment.storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  depthAttachment.clearValue.depthStencil = {1.0f, 0};
  VkRenderingInfo rinfo{VK_STRUCTURE_TYPE_RENDERING_INFO};
  rinfo.renderArea = {{0, 0}, {o.width, o.height}};
  rinfo.layerCount = 1;
  rinfo.colorAttachmentCount = 1;
  rinfo.pColorAttachments = &colorAttachment;
  rinfo.pDepthAttachment = &depthAttachment;
  vkCmdBeginRendering(cmd, &rinfo);
  const VkViewport viewport{0, 0, static_cast<float>(o.width), static_cast<float>(o.height), 0, 1};
  const VkRect2D scissor{{0, 0}, {o.width, o.height}};
  vkCmdSetViewport(cmd, 0, 1, &viewport);
  vkCmdSetScissor(cmd, 0, 1, &scissor);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, r.pipeline.pipeline);
  {
    const VkDescriptorBufferInfo info{b.particles, 0, b.bytes};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &info;
    vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, r.pipeline.layout, 0, 1, &write);
  }
  const VkDeviceSize zero = 0;
  RenderPush push{r.viewProj, vec4(0.55f, 0.58f, 0.62f, 1), vec4(0.55f, 0.58f, 0.62f, 1), 0, {}};
  vkCmdPushConstants(cmd, r.pipeline.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                     sizeof push, &push);
  vkCmdBindVertexBuffers(cmd, 0, 1, &r.meshVertices.buffer, &zero);
  vkCmdBindIndexBuffer(cmd, r.meshIndices.buffer, 0, VK_INDEX_TYPE_UINT32);
  vkCmdDrawIndexed(cmd, r.meshIndexCount, 1, 0, 0, 0);
  push = {r.viewProj, vec4(0.85f, 0.33f, 0.22f, 1), vec4(0.95f, 0.78f, 0.35f, 1), o.size, {}};
  vkCmdPushConstants(cmd, r.pipeline.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                     sizeof push, &push);
  vkCmdBindVertexBuffers(cmd, 0, 1, &b.particles, &zero);  // the particle buffer, as it is
  vkCmdBindIndexBuffer(cmd, r.clothIndices.buffer, 0, VK_INDEX_TYPE_UINT32);
  vkCmdDrawIndexed(cmd, r.clothIndexCount, 1, 0, 0, 0);
  vkCmdEndRendering(cmd);

  // The image, for the frames that become PNGs.
  VkImageMemoryBarrier2 toCopy = imageBarrier(
      r.color.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
      VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT,
      VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
  di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  di.imageMemoryBarrierCount = 1;
  di.pImageMemoryBarriers = &toCopy;
  vkCmdPipelineBarrier2(cmd, &di);
  if (copyImage) {
    VkBufferImageCopy bic{};
    bic.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    bic.imageExtent = {o.width, o.height, 1};
    vkCmdCopyImageToBuffer(cmd, r.color.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, r.readImage.buffer, 1,
                           &bic);
  }
}

void writeContactSheet(const Options& o, const std::vector<Saved>& saved) {
if (saved.empty()) return;
{
  const size_t cells = std::min<size_t>(12, saved.size());
  const uint32_t cw = o.width / 2, ch = o.height / 2, cols = 4;
  const uint32_t rows = static_cast<uint32_t>((cells + cols - 1) / cols);
  std::vector<uint8_t> sheet(size_t{cw} * cols * ch * rows * 4, 255);
  for (size_t c = 0; c < cells; ++c) {
    const Saved& sv = saved[cells == 1 ? 0 : c * (saved.size() - 1) / (cells - 1)];
    const uint32_t ox = static_cast<uint32_t>(c % cols) * cw, oy = static_cast<uint32_t>(c / cols) * ch;
    for (uint32_t y = 0; y < ch; ++y) {
      for (uint32_t x = 0; x < cw; ++x) {
        for (uint32_t k = 0; k < 4; ++k) {  // 2x2 box filter
          uint32_t acc = 0;
          for (uint32_t dy = 0; dy < 2; ++dy) {
            for (uint32_t dx = 0; dx < 2; ++dx)
              acc += sv.rgba[((size_t{2 * y + dy} * o.width) + 2 * x + dx) * 4 + k];
          }
          sheet[((size_t{oy + y} * cw * cols) + ox + x) * 4 + k] = static_cast<uint8_t>(acc / 4);
        }
      }
    }
  }
  const std::string path = (std::filesystem::path(o.out) / "contact_sheet.png").string();
  if (!writePng(path.c_str(), static_cast<int>(cw * cols), static_cast<int>(ch * rows), sheet.data())) {
    fail("cannot write " + path);
  }
  std::printf("drape: wrote %zu frames and %s (frames", saved.size(), path.c_str());
  for (size_t c = 0; c < cells; ++c)
    std::printf(" %u", saved[cells == 1 ? 0 : c * (saved.size() - 1) / (cells - 1)].frame);
  std::printf(")\n");
}
}

}  // namespace drape
