// Everything the drape sample asks of vkcollide (see collision.h).
#include "collision.h"

#include "cloth.h"

namespace drape {
namespace {

void must(const vkc::Status& s, const char* what) {
  if (!s.ok()) fail(std::string(what) + ": " + s.message());
}
template <class T>
T must(vkc::Result<T> r, const char* what) {
  if (!r) fail(std::string(what) + ": " + r.message());
  return std::move(r.value());
}

const vkc::Capsule kCapsules[] = {{.sphere0 = 1, .sphere1 = 2}};  // the tapered capsule
// The ground: a convex of one plane (a half-space), colliderPlanes()[0]. Planes collide only through
// the convexes that list them.
const uint32_t kGroundPlanes[] = {0};
const vkc::Convex kGround[] = {{.planes = kGroundPlanes}};

// The sample's colliders: the spheres (sphere, capsule ends), the capsule and the ground plane (none
// with --no-ground: `planes` empty). The planes do not move: prevPlanes stays empty (= planes).
vkc::ClothColliders colliders(std::span<const vkc::Float4> spheres, std::span<const vkc::Float4> planes) {
  return {.spheres = spheres, .capsules = kCapsules, .planes = planes,
          .convexes = planes.empty() ? std::span<const vkc::Convex>() : std::span<const vkc::Convex>(kGround)};
}

vkc::SelfCollisionSettings selfSettings(const Options& o, const Scene& sc) {
  return {.distance = selfDistance(o, sc), .stiffness = 1.0f};
}

// Swept (CCD) over substep `s` of the frame; the colliders do not move. CCD stops the particles on the
// ground at any speed (a discrete test alone lets a fast particle pass a thin shape).
vkc::ShapeCollisionSettings shapeSettings(const Options& o, const Scene& sc, uint32_t s) {
  const float n = static_cast<float>(o.substeps);
  return {.continuous = true, .friction = sc.friction, .collisionMassScale = 0.0f,
          .alphaBegin = static_cast<float>(s) / n, .alphaEnd = static_cast<float>(s + 1) / n};
}

// vkcollide's passes wait for the sample's compute writes (the constraints) and make their results
// visible to the sample's next compute pass (integration), the render (vertex input, and the vertex
// shader's normals) and the readback copy; between self and shapes, the same barriers order the two.
const vkc::RecordSync kSync{
    .srcStage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
    .srcAccess = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
    .dstStage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT |
                VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
    .dstAccess = VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT |
                 VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT};

}  // namespace

Collision::Collision(const Gpu& g, const Options& o, const Scene& sc, std::span<const vkc::Float4> spheres,
                     std::span<const vkc::Float4> planes)
    : o_(o), sc_(sc), cloths_{{0, o.size * o.size}}, colliders_{colliders(spheres, planes)} {
  // The renderer's device, imported: vkcollide records into the sample's command buffers.
  context_ = must(vkc::Context::import({.instance = g.instance, .physicalDevice = g.physical,
                                        .device = g.device, .queueFamilyIndex = g.family, .queue = g.queue,
                                        .getInstanceProcAddr = vkGetInstanceProcAddr}),
                  "vkc::Context::import");
  const uint32_t count = o.size * o.size;
  shapes_ = must(vkc::ShapeCollisionStage::create(
                     *context_, {.cloths = cloths_, .particleCount = count, .colliders = colliders_}),
                 "vkc::ShapeCollisionStage::create");
  if (o.self) {
    self_ = must(vkc::SelfCollisionStage::create(*context_, {.cloths = cloths_, .particleCount = count}),
                 "vkc::SelfCollisionStage::create");
  }
}

Collision::~Collision() = default;

void Collision::recordSelf(VkCommandBuffer cmd, const ParticleBuffers& b, uint32_t s) {
  if (!selfInSubstep(o_, s)) return;
  must(self_->record(cmd, {.particles = {b.particles, 0, b.bytes}, .settings = selfSettings(o_, sc_),
                           .sync = kSync}),
       "SelfCollisionStage::record");
}

void Collision::recordShapes(VkCommandBuffer cmd, const ParticleBuffers& b, uint32_t s) {
  must(shapes_->record(cmd, {.particles = {b.particles, 0, b.bytes}, .prevParticles = {b.prev, 0, b.bytes},
                             .colliders = colliders_, .settings = shapeSettings(o_, sc_, s), .sync = kSync}),
       "ShapeCollisionStage::record");
}

void collideCpu(std::vector<vkc::Float4>& particles, std::vector<vkc::Float4>& prev, const Options& o,
                const Scene& sc, std::span<const vkc::Float4> spheres, std::span<const vkc::Float4> planes,
                uint32_t s) {
  const vkc::ClothRange cloths[] = {{0, o.size * o.size}};
  const vkc::ClothColliders clothColliders[] = {colliders(spheres, planes)};
  if (selfInSubstep(o, s)) {
    must(vkc::collideSelfCpu({.particles = particles, .cloths = cloths, .settings = selfSettings(o, sc)},
                             o.cpuBackend),
         "collideSelfCpu");
  }
  must(vkc::collideShapesCpu({.particles = particles, .prevParticles = prev, .cloths = cloths,
                              .colliders = clothColliders, .settings = shapeSettings(o, sc, s)},
                             o.cpuBackend),
       "collideShapesCpu");
}

const char* cpuBackendName(const Options& o) {
  return vkc::toString(o.cpuBackend);
}

}  // namespace drape
