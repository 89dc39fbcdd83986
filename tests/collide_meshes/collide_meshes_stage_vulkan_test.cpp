// The mesh stage on every backend: one body per backend against CPU scalar (static, rigid and
// deforming meshes, discrete and continuous, several cloths listing different meshes, vec3 vertex
// strides on Vulkan), the tree bitwise equal on every backend; 100 Vulkan reruns bitwise identical;
// what record() puts into the host's command buffer (dispatch counts that do not depend on the number
// of meshes or cloths, frames in flight); bad input refused by record() with the field named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "scene/mesh_layout.h"
#include "support/device_memory.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"
#include "vkcollide/collide_meshes.h"
#include "vulkan/collide_meshes_stage.h"
#include "vulkan/recorder.h"

namespace vkc::test {
namespace {

Float4 quatAxisAngle(float ax, float ay, float az, float angle) {
  const float n = std::sqrt(ax * ax + ay * ay + az * az);
  const float s = std::sin(angle * 0.5f) / n;
  return {ax * s, ay * s, az * s, std::cos(angle * 0.5f)};
}

struct MeshData {
  std::vector<Float4> vertices, prevVertices;
  std::vector<uint32_t> indices;
  MeshMotion motion = MeshMotion::kStatic;
  RigidTransform transform, prevTransform;
  MeshSurface surface;
  uint32_t stride = 16;  // the Vulkan stage's layout
};

// An nx x nz grid of quads (two triangles each) in the plane y = height, centred at (cx, cz).
MeshData grid(uint32_t nx, uint32_t nz, float size, float cx, float height, float cz) {
  MeshData m;
  for (uint32_t j = 0; j <= nz; ++j) {
    for (uint32_t i = 0; i <= nx; ++i) {
      m.vertices.push_back({cx + size * (float(i) / float(nx) - 0.5f), height, cz + size * (float(j) / float(nz) - 0.5f), 0});
    }
  }
  for (uint32_t j = 0; j < nz; ++j) {
    for (uint32_t i = 0; i < nx; ++i) {
      const uint32_t a = j * (nx + 1) + i, b = a + 1, c = a + nx + 1, d = c + 1;
      m.indices.insert(m.indices.end(), {a, c, b, b, c, d});  // front face +y
    }
  }
  return m;
}

// A UV sphere of `radius` about the origin (mesh space).
MeshData sphere(uint32_t stacks, uint32_t slices, float radius) {
  MeshData m;
  m.vertices.push_back({0, radius, 0, 0});
  for (uint32_t s = 1; s < stacks; ++s) {
    const float phi = 3.14159265f * float(s) / float(stacks);
    for (uint32_t k = 0; k < slices; ++k) {
      const float th = 2 * 3.14159265f * float(k) / float(slices);
      m.vertices.push_back({radius * std::sin(phi) * std::cos(th), radius * std::cos(phi), radius * std::sin(phi) * std::sin(th), 0});
    }
  }
  const uint32_t bottom = static_cast<uint32_t>(m.vertices.size());
  m.vertices.push_back({0, -radius, 0, 0});
  auto ring = [&](uint32_t s, uint32_t k) { return 1 + (s - 1) * slices + k % slices; };
  for (uint32_t k = 0; k < slices; ++k) m.indices.insert(m.indices.end(), {0, ring(1, k + 1), ring(1, k)});
  for (uint32_t s = 1; s + 1 < stacks; ++s) {
    for (uint32_t k = 0; k < slices; ++k) {
      m.indices.insert(m.indices.end(), {ring(s, k), ring(s, k + 1), ring(s + 1, k)});
      m.indices.insert(m.indices.end(), {ring(s, k + 1), ring(s + 1, k + 1), ring(s + 1, k)});
    }
  }
  for (uint32_t k = 0; k < slices; ++k) m.indices.insert(m.indices.end(), {bottom, ring(stacks - 1, k), ring(stacks - 1, k + 1)});
  return m;
}

struct Scene {
  std::vector<MeshData> meshes;
  std::vector<ClothRange> cloths;
  std::vector<std::vector<uint32_t>> clothMeshLists;
  std::vector<Float4> particles, prevParticles;

  std::vector<CollisionMesh> collisionMeshes() const {
    std::vector<CollisionMesh> out;
    for (const MeshData& m : meshes) {
      out.push_back({m.vertices, m.prevVertices, m.indices, m.motion, m.transform, m.prevTransform, m.surface});
    }
    return out;
  }
  std::vector<ClothMeshes> clothMeshes() const {
    std::vector<ClothMeshes> out;
    for (const auto& l : clothMeshLists) out.push_back({l});
    return out;
  }
  std::vector<MeshLayout> layouts() const {
    std::vector<MeshLayout> out;
    for (const MeshData& m : meshes) {
      out.push_back({uint32_t(m.vertices.size()), uint32_t(m.indices.size() / 3), m.motion, m.stride});
    }
    return out;
  }
  uint32_t triangles() const {
    uint32_t n = 0;
    for (const MeshData& m : meshes) n += uint32_t(m.indices.size() / 3);
    return n;
  }
  // Moves the rigid and deforming meshes to iteration `it` (the previous state becomes the start).
  void advance(int it) {
    for (size_t k = 0; k < meshes.size(); ++k) {
      MeshData& m = meshes[k];
      if (m.motion == MeshMotion::kRigid) {
        m.prevTransform = m.transform;
        m.transform.rotation = quatAxisAngle(0.3f, 1.0f, 0.2f, 0.25f * float(it + 1) + 0.1f * float(k));
        m.transform.translation = {0.1f * float(it + 1) - 0.3f + 0.2f * float(k % 3), 0.35f, 0.15f * float(k % 5) - 0.3f, 0};
      } else if (m.motion == MeshMotion::kDeforming) {
        m.prevVertices = m.vertices;
        for (size_t i = 0; i < m.vertices.size(); ++i) {
          m.vertices[i].y = 0.9f + 0.08f * float(it + 1) + 0.05f * std::sin(float(i) * 0.7f + float(it));
        }
      }
    }
  }
};

// Static floor (vec3 on Vulkan, one-sided, friction), rigid sphere (restitution), deforming sheet
// (vec3 on Vulkan); four cloths: all three meshes, the sphere only, none, and sheet + floor.
Scene mixedScene(uint32_t seed) {
  Scene s;
  MeshData floor = grid(10, 10, 4.0f, 0, 0, 0);
  floor.stride = 12;
  floor.surface = {.thickness = 0.05f, .oneSided = true, .friction = 0.2f, .staticFriction = 0.1f};
  MeshData ball = sphere(7, 9, 0.4f);
  ball.motion = MeshMotion::kRigid;
  ball.surface = {.thickness = 0.03f, .restitution = 0.3f, .friction = 0.1f};
  MeshData sheet = grid(6, 6, 2.0f, 0.3f, 0.9f, -0.2f);
  sheet.motion = MeshMotion::kDeforming;
  sheet.stride = 12;
  sheet.prevVertices = sheet.vertices;
  sheet.surface = {.thickness = 0.04f};
  s.meshes = {floor, ball, sheet};
  s.cloths = {{0, 300}, {300, 77}, {377, 64}, {441, 150}};
  s.clothMeshLists = {{0, 1, 2}, {1}, {}, {2, 0}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> px(-1.5f, 1.5f), py(-0.1f, 1.4f), dv(-0.25f, 0.25f);
  for (uint32_t i = 0; i < 591; ++i) {
    const float w = i % 17 == 5 ? 0.0f : 1.0f;
    const Float4 p{px(rng), py(rng), px(rng), w};
    s.prevParticles.push_back(p);
    s.particles.push_back({p.x + dv(rng), p.y + dv(rng) - 0.15f, p.z + dv(rng), w});
  }
  s.advance(0);
  return s;
}

struct Outcome {
  std::vector<Float4> particles, prevParticles;
  std::vector<BvhNode> nodes;
  std::vector<Aabb> boxes;
  std::vector<uint32_t> parents;
  MeshCollisionDebug debug;
};

// `iterations` iterations (the meshes move between them, the particles start from the scene's
// state each time), the tree kept between them (kAuto: built once, then refit).
Outcome runScene(Backend backend, Context* ctx, Scene scene, const MeshCollisionSettings& settings, int iterations) {
  Outcome out;
  const uint32_t n = scene.triangles();
  out.nodes.resize(bvhNodeCount(n));
  out.boxes.resize(n);
  out.parents.resize(n);
  bool built = false;
  std::unique_ptr<MeshCollisionStage> stage;
  const std::vector<ClothMeshes> clothMeshes = scene.clothMeshes();
  if (backend == Backend::kVulkan) {
    const std::vector<MeshLayout> layouts = scene.layouts();
    auto st = MeshCollisionStage::create(*ctx, {.cloths = scene.cloths,
                                                .particleCount = uint32_t(scene.particles.size()),
                                                .meshes = layouts,
                                                .clothMeshes = clothMeshes});
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok()) return out;
    stage = std::move(st.value());
  }
  for (int it = 0; it < iterations; ++it) {
    if (it > 0) scene.advance(it);
    out.particles = scene.particles;
    out.prevParticles = scene.prevParticles;
    const std::vector<CollisionMesh> meshes = scene.collisionMeshes();
    MeshCollisionInput in{.particles = out.particles,
                          .prevParticles = out.prevParticles,
                          .cloths = scene.cloths,
                          .clothMeshes = clothMeshes,
                          .meshes = meshes,
                          .settings = settings,
                          .tree = {out.nodes, out.boxes, out.parents, MeshTreeUpdate::kAuto, &built}};
    const Status st = backend == Backend::kVulkan ? stage->run(in, &out.debug) : collideMeshesCpu(in, backend, &out.debug);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_TRUE(built);
  }
  return out;
}

float len(const Float4& p) { return std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z); }

void expectNear(const std::vector<Float4>& got, const std::vector<Float4>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 10; ++i) {
    const float tol = kMeshCollisionTolerance * (1 + len(want[i]));
    const bool ok = std::abs(got[i].x - want[i].x) <= tol && std::abs(got[i].y - want[i].y) <= tol &&
                    std::abs(got[i].z - want[i].z) <= tol && std::memcmp(&got[i].w, &want[i].w, 4) == 0;
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << "[" << i << "] (" << got[i].x << ", " << got[i].y << ", " << got[i].z << ") vs CPU scalar ("
                    << want[i].x << ", " << want[i].y << ", " << want[i].z << ")";
    }
  }
}

using MeshStageConformanceVulkan = BackendTest;

TEST_P(MeshStageConformanceVulkan, MixedMeshesAndClothsMatchCpuScalar) {
  for (bool continuous : {false, true}) {
    SCOPED_TRACE(continuous ? "continuous" : "discrete");
    const Scene scene = mixedScene(continuous ? 7 : 8);
    const MeshCollisionSettings settings{.continuous = continuous, .maxBounces = 4};
    const Outcome want = runScene(Backend::kCpuScalar, nullptr, scene, settings, 3);
    const Outcome got = runScene(backend(), ctx(), scene, settings, 3);
    // The test can fail: particles of the listing cloths met the meshes, the unlisting cloth's did not.
    uint32_t touched = 0, moved = 0;
    for (size_t i = 0; i < want.particles.size(); ++i) {
      touched += want.debug.contacts[i] > 0;
      moved += std::memcmp(&want.particles[i], &scene.particles[i], sizeof(Float4)) != 0;
    }
    EXPECT_GT(touched, 40u);
    EXPECT_EQ(touched, moved);
    for (uint32_t i = 377; i < 441; ++i) EXPECT_EQ(want.debug.contacts[i], 0u);
    expectNear(got.particles, want.particles, "particles");
    expectNear(got.prevParticles, want.prevParticles, "prevParticles");
    EXPECT_TRUE(got.nodes == want.nodes) << "tree nodes differ from CPU scalar";
    EXPECT_EQ(0, std::memcmp(got.boxes.data(), want.boxes.data(), got.boxes.size() * sizeof(Aabb)));
    EXPECT_EQ(got.parents, want.parents);
    uint32_t sameContacts = 0;
    for (size_t i = 0; i < want.particles.size(); ++i) sameContacts += got.debug.contacts[i] == want.debug.contacts[i];
    EXPECT_GE(sameContacts, want.particles.size() - 2) << "contacts differ beyond rounding ties";
    std::printf("[ mesh stage %s %s ] %u of %zu particles met a mesh\n", toString(backend()),
                continuous ? "continuous" : "discrete", touched, want.particles.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MeshStageConformanceVulkan, VKC_ALL_BACKENDS);

using MeshStageVulkan = VulkanTest;

TEST_F(MeshStageVulkan, HundredRerunsAreBitwiseIdentical) {
  const Scene scene = mixedScene(11);
  const MeshCollisionSettings settings{.continuous = true, .maxBounces = 4};
  const Outcome first = runScene(Backend::kVulkan, &ctx(), scene, settings, 2);
  for (int r = 0; r < 99; ++r) {
    const Outcome again = runScene(Backend::kVulkan, &ctx(), scene, settings, 2);
    ASSERT_EQ(0, std::memcmp(again.particles.data(), first.particles.data(), first.particles.size() * sizeof(Float4)))
        << "rerun " << r;
    ASSERT_EQ(0, std::memcmp(again.prevParticles.data(), first.prevParticles.data(),
                             first.prevParticles.size() * sizeof(Float4)));
    ASSERT_TRUE(again.nodes == first.nodes);
    ASSERT_EQ(again.debug.contacts, first.debug.contacts);
    ASSERT_EQ(again.debug.lastTriangle, first.debug.lastTriangle);
  }
}

// The scene's arrays in one host-visible buffer, and the records that point into it.
struct Uploaded {
  detail::Buffer buffer;
  BufferRange particles, prevParticles;
  std::vector<MeshRecord> records;
};

Uploaded upload(VulkanTest& t, detail::Buffer buffer, const Scene& s, VkDeviceSize align) {
  Uploaded u{std::move(buffer), {}, {}, {}};
  char* base = static_cast<char*>(u.buffer.mapped());
  VkDeviceSize off = 0;
  auto put = [&](const void* data, VkDeviceSize bytes) {
    std::memcpy(base + off, data, bytes);
    const BufferRange r{u.buffer.handle(), off, bytes};
    off += (bytes + align - 1) / align * align;
    return r;
  };
  u.particles = put(s.particles.data(), s.particles.size() * sizeof(Float4));
  u.prevParticles = put(s.prevParticles.data(), s.prevParticles.size() * sizeof(Float4));
  for (const MeshData& m : s.meshes) {
    MeshRecord r;
    std::vector<float> packed;
    auto pack = [&](const std::vector<Float4>& v) {
      packed.clear();
      for (const Float4& x : v) {
        packed.insert(packed.end(), {x.x, x.y, x.z});
        if (m.stride == 16) packed.push_back(x.w);
      }
      return put(packed.data(), packed.size() * sizeof(float));
    };
    r.vertices = pack(m.vertices);
    if (m.motion == MeshMotion::kDeforming) r.prevVertices = pack(m.prevVertices);
    r.indices = put(m.indices.data(), m.indices.size() * sizeof(uint32_t));
    r.transform = m.transform;
    r.prevTransform = m.prevTransform;
    r.surface = m.surface;
    u.records.push_back(r);
  }
  (void)t;
  return u;
}

VkDeviceSize bytesOf(const Scene& s) {
  VkDeviceSize n = 2 * s.particles.size() * sizeof(Float4) + 4096;
  for (const MeshData& m : s.meshes) n += 2 * m.vertices.size() * 16 + m.indices.size() * 4 + 1024;
  return n;
}

class MeshRecordVulkan : public VulkanTest {
 protected:
  VkDeviceSize align() { return std::max<VkDeviceSize>(ctx().deviceInfo().minStorageBufferOffsetAlignment, 16); }
  std::unique_ptr<MeshCollisionStage> makeStage(const Scene& s, uint32_t frames = 1) {
    layouts_ = s.layouts();
    lists_ = s.clothMeshes();
    auto st = MeshCollisionStage::create(ctx(), {.cloths = s.cloths,
                                                 .particleCount = uint32_t(s.particles.size()),
                                                 .meshes = layouts_,
                                                 .clothMeshes = lists_,
                                                 .framesInFlight = frames});
    EXPECT_TRUE(st.ok()) << st.message();
    return st.ok() ? std::move(st.value()) : nullptr;
  }
  Uploaded uploadScene(const Scene& s) { return upload(*this, hostBuffer(bytesOf(s)), s, align()); }
  // Records one continuous iteration of `u` (frame 0), then copies `bytes` of `src` into a host buffer.
  detail::Buffer recordAndRead(MeshCollisionStage& stage, const Uploaded& u, const BufferRange& src, VkDeviceSize bytes) {
    detail::Buffer back = hostBuffer(bytes);
    submit([&](VkCommandBuffer cmd) {
      const Status st = stage.record(cmd, {.particles = u.particles, .prevParticles = u.prevParticles,
                                           .meshes = u.records, .settings = {.continuous = true}});
      ASSERT_TRUE(st.ok()) << st.message();
      detail::globalBarrier(impl(), cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                            VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
      const VkBufferCopy region{src.offset, 0, bytes};
      impl().vk.vkCmdCopyBuffer(cmd, src.buffer, back.handle(), 1, &region);
    });
    return back;
  }

 private:
  std::vector<MeshLayout> layouts_;
  std::vector<ClothMeshes> lists_;
};

// `meshes` rigid or static meshes (small grids) and as many cloths, cloth c listing meshes c and c+1.
Scene manyMeshes(uint32_t meshes, MeshMotion motion) {
  Scene s;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (uint32_t k = 0; k < meshes; ++k) {
    MeshData m = grid(3, 3, 0.8f, 0, 0, 0);
    if (motion == MeshMotion::kStatic) {
      for (Float4& v : m.vertices) v = {v.x + 0.3f * float(k), v.y + 0.05f * float(k), v.z, 0};
    }
    m.motion = motion;
    m.surface.thickness = 0.05f;
    s.meshes.push_back(m);
    s.cloths.push_back({uint32_t(s.particles.size()), 40});
    s.clothMeshLists.push_back({k, (k + 1) % meshes});
    if (meshes == 1) s.clothMeshLists.back().pop_back();
    for (int i = 0; i < 40; ++i) {
      const Float4 p{u(rng), 0.2f * u(rng), u(rng), 1};
      s.prevParticles.push_back(p);
      s.particles.push_back({p.x, p.y - 0.1f, p.z, 1});
    }
  }
  s.advance(0);
  return s;
}

TEST_F(MeshRecordVulkan, DispatchCountsDoNotDependOnMeshesOrCloths) {
  for (uint32_t count : {1u, 20u}) {
    SCOPED_TRACE(count);
    for (MeshMotion motion : {MeshMotion::kStatic, MeshMotion::kRigid}) {
      const Scene s = manyMeshes(count, motion);
      auto stage = makeStage(s);
      ASSERT_NE(stage, nullptr);
      Uploaded u = uploadScene(s);
      MeshCollisionRecordInfo info{.particles = u.particles, .prevParticles = u.prevParticles, .meshes = u.records,
                                   .settings = {.continuous = true}};
      VkCommandBuffer cmd = beginCommandBuffer();
      Status st = stage->record(cmd, info);
      ASSERT_TRUE(st.ok()) << st.message();
      const RecordStats build = stage->lastRecordStats();
      st = stage->record(cmd, info);
      ASSERT_TRUE(st.ok()) << st.message();
      const RecordStats next = stage->lastRecordStats();
      VkCommandBuffer cmds[] = {cmd};
      submitRecorded(cmds);
      // Build: gather, the BVH build (init, boxes, morton, sort, hierarchy, climb, finalize), collide.
      EXPECT_GE(build.dispatches, 8u);
      if (motion == MeshMotion::kStatic) {
        EXPECT_EQ(next.dispatches, 1u);  // collide only
        EXPECT_EQ(next.transfers, 1u);   // this record's materials
      } else {
        EXPECT_EQ(next.dispatches, 5u);  // gather, refit (boxes, climb, finalize), collide
        EXPECT_EQ(next.dependentDispatches, 5u);
      }
      std::printf("[ mesh record %u %s meshes ] build %u dispatches, then %u (%u transfers, %u barriers)\n", count,
                  motion == MeshMotion::kStatic ? "static" : "rigid", build.dispatches, next.dispatches, next.transfers,
                  next.barriers);
    }
  }
}

TEST_F(MeshRecordVulkan, RecordMatchesRunAndFramesInFlightShareNoWrites) {
  Scene s = mixedScene(5);
  auto stage = makeStage(s, 2);
  ASSERT_NE(stage, nullptr);
  const std::vector<uint64_t> w0 = detail::meshFrameWrites(*stage, 0), w1 = detail::meshFrameWrites(*stage, 1);
  for (uint64_t b : w0) EXPECT_EQ(std::count(w1.begin(), w1.end(), b), 0) << "frames share a written buffer";
  // Two frames recorded into two command buffers, each with its own copy of the particles.
  Uploaded u0 = uploadScene(s), u1 = uploadScene(s);
  const MeshCollisionSettings settings{.continuous = true};
  VkCommandBuffer cmds[] = {beginCommandBuffer(), beginCommandBuffer()};
  Uploaded* ups[] = {&u0, &u1};
  for (uint32_t f = 0; f < 2; ++f) {
    const Status st = stage->record(cmds[f], {.particles = ups[f]->particles, .prevParticles = ups[f]->prevParticles,
                                              .meshes = ups[f]->records, .settings = settings, .frame = f});
    ASSERT_TRUE(st.ok()) << st.message();
  }
  submitRecorded(cmds);
  // The convenience path on the same scene gives the same bits.
  std::vector<Float4> p = s.particles, q = s.prevParticles;
  const std::vector<CollisionMesh> meshes = s.collisionMeshes();
  const std::vector<ClothMeshes> lists = s.clothMeshes();
  const Status st = collideMeshes(Backend::kVulkan, &ctx(), {.particles = p, .prevParticles = q, .cloths = s.cloths,
                                                             .clothMeshes = lists, .meshes = meshes, .settings = settings});
  ASSERT_TRUE(st.ok()) << st.message();
  for (const Uploaded* u : ups) {
    const char* base = static_cast<const char*>(u->buffer.mapped());
    EXPECT_EQ(0, std::memcmp(base + u->particles.offset, p.data(), p.size() * sizeof(Float4)));
    EXPECT_EQ(0, std::memcmp(base + u->prevParticles.offset, q.data(), q.size() * sizeof(Float4)));
  }
  EXPECT_NE(0, std::memcmp(p.data(), s.particles.data(), p.size() * sizeof(Float4)));
}

TEST_F(MeshStageVulkan, ClothsThatListNoMeshAreUntouchedAndARecordMayHaveNoPass) {
  Scene s = mixedScene(4);
  for (auto& l : s.clothMeshLists) l.clear();
  const Outcome out = runScene(Backend::kVulkan, &ctx(), s, {.continuous = true}, 1);
  EXPECT_EQ(0, std::memcmp(out.particles.data(), s.particles.data(), s.particles.size() * sizeof(Float4)));
  EXPECT_EQ(0, std::memcmp(out.prevParticles.data(), s.prevParticles.data(), s.particles.size() * sizeof(Float4)));
  for (uint32_t c : out.debug.contacts) EXPECT_EQ(c, 0u);
  // Static meshes only: after the build, a record has no pass at all (nothing to refit, nothing to
  // collide), and run() still returns the particles unchanged.
  Scene still = s;
  for (MeshData& m : still.meshes) {
    if (m.motion == MeshMotion::kDeforming) m.prevVertices.clear();
    m.motion = MeshMotion::kStatic;
  }
  const Outcome twice = runScene(Backend::kVulkan, &ctx(), still, {}, 2);
  EXPECT_EQ(0, std::memcmp(twice.particles.data(), s.particles.data(), s.particles.size() * sizeof(Float4)));
}

TEST_F(MeshStageVulkan, MemoryRequirementsAreWhatCreateAllocates) {
  const Scene s = mixedScene(2);
  const std::vector<MeshLayout> layouts = s.layouts();
  const std::vector<ClothMeshes> lists = s.clothMeshes();
  for (uint32_t frames : {1u, 3u}) {
    const MeshCollisionStageCreateInfo info{.cloths = s.cloths,
                                            .particleCount = uint32_t(s.particles.size()),
                                            .meshes = layouts,
                                            .clothMeshes = lists,
                                            .framesInFlight = frames};
    const auto need = expectMemoryRequirementsMatchCreate<MeshCollisionStage>(ctx(), impl(), info, "mesh stage");
    ASSERT_TRUE(need.has_value());
    EXPECT_GT(need->deviceLocalBytes, 0u);
  }
  MeshCollisionStageCreateInfo bad{.cloths = s.cloths, .particleCount = uint32_t(s.particles.size()),
                                   .meshes = layouts, .clothMeshes = lists, .framesInFlight = 0};
  expectErrorNaming(MeshCollisionStage::memoryRequirements(ctx(), bad).status(), "framesInFlight");
  bad.framesInFlight = 1;
  std::vector<MeshLayout> vec2 = layouts;
  vec2[1].vertexStride = 8;
  bad.meshes = vec2;
  expectErrorNaming(MeshCollisionStage::create(ctx(), bad).status(), "meshes[1].vertexStride");
}

TEST_F(MeshStageVulkan, EveryFailingAllocationIsReportedAndLeaksNothing) {
  const Scene original = mixedScene(3);
  const MeshCollisionSettings settings{.continuous = true};
  const Outcome want = runScene(Backend::kCpuScalar, nullptr, original, settings, 1);
  forEachFailingAllocation(impl(), [&](Context& c, TestDeviceMemory& memory) {
    std::vector<Float4> p = original.particles, q = original.prevParticles;
    const std::vector<CollisionMesh> meshes = original.collisionMeshes();
    const std::vector<ClothMeshes> lists = original.clothMeshes();
    const std::vector<MeshLayout> layouts = original.layouts();
    const MeshCollisionInput in{.particles = p, .prevParticles = q, .cloths = original.cloths, .clothMeshes = lists,
                                .meshes = meshes, .settings = settings};
    auto stage = MeshCollisionStage::create(c, {.cloths = original.cloths, .particleCount = uint32_t(p.size()),
                                                .meshes = layouts, .clothMeshes = lists});
    MeshCollisionDebug debug{{7u}, {9u}};
    const Status st = stage.ok() ? (*stage)->run(in, &debug) : stage.status();
    if (st.ok()) {
      expectNear(p, want.particles, "particles after the failures");
      return true;
    }
    EXPECT_EQ(st.error().code, ErrorCode::kOutOfMemory) << st.message();
    EXPECT_EQ(0, std::memcmp(p.data(), original.particles.data(), p.size() * sizeof(Float4))) << "written on error";
    EXPECT_EQ(0, std::memcmp(q.data(), original.prevParticles.data(), q.size() * sizeof(Float4)));
    EXPECT_EQ(debug.contacts, (std::vector<uint32_t>{7u})) << "debug output written on error";
    if (stage.ok()) {
      memory.failAt(-1);
      const Status again = (*stage)->run(in);
      EXPECT_TRUE(again.ok()) << again.message();
    }
    return false;
  });
}

TEST_F(MeshStageVulkan, RunRefusesAnInputOfAnotherLayout) {
  Scene s = mixedScene(6);
  const std::vector<MeshLayout> layouts = s.layouts();
  const std::vector<ClothMeshes> lists = s.clothMeshes();
  auto stage = MeshCollisionStage::create(ctx(), {.cloths = s.cloths, .particleCount = uint32_t(s.particles.size()),
                                                  .meshes = layouts, .clothMeshes = lists});
  ASSERT_TRUE(stage.ok()) << stage.message();
  s.meshes[1].motion = MeshMotion::kStatic;  // the layout says rigid
  std::vector<Float4> p = s.particles, q = s.prevParticles;
  const std::vector<CollisionMesh> meshes = s.collisionMeshes();
  const Status st = (*stage)->run({.particles = p, .prevParticles = q, .cloths = s.cloths, .clothMeshes = lists,
                                   .meshes = meshes});
  expectErrorNaming(st, "layout");
  EXPECT_EQ(0, std::memcmp(p.data(), s.particles.data(), p.size() * sizeof(Float4)));
  // A mesh value the CPU validation refuses is refused the same way (the field named).
  s.meshes[1].motion = MeshMotion::kRigid;
  s.meshes[0].vertices[3].y = std::nanf("");
  const std::vector<CollisionMesh> nanMeshes = s.collisionMeshes();
  expectErrorNaming((*stage)->run({.particles = p, .prevParticles = q, .cloths = s.cloths, .clothMeshes = lists,
                                   .meshes = nanMeshes}),
                    "meshes[0].vertices[3].y");
}

TEST_F(MeshRecordVulkan, DeviceIndicesOutOfRangeReadTheMeshsLastVertex) {
  // The host cannot check indices in its buffers: one beyond its mesh reads the mesh's last vertex,
  // so the tree is the CPU's tree of the same meshes with that index clamped, bit for bit.
  Scene s = mixedScene(12);
  auto stage = makeStage(s);
  ASSERT_NE(stage, nullptr);
  Uploaded u = uploadScene(s);
  const uint32_t bad = 5;
  uint32_t* idx = reinterpret_cast<uint32_t*>(static_cast<char*>(u.buffer.mapped()) + u.records[0].indices.offset);
  idx[bad] = 1'000'000;
  const BufferRange nodes = stage->nodesBuffer(0);
  const uint32_t n = s.triangles();
  const VkDeviceSize nodeBytes = bvhNodeCount(n) * sizeof(BvhNode);
  const detail::Buffer back = recordAndRead(*stage, u, nodes, nodeBytes);
  s.meshes[0].indices[bad] = uint32_t(s.meshes[0].vertices.size() - 1);
  const Outcome want = runScene(Backend::kCpuScalar, nullptr, s, {.continuous = true}, 1);
  std::vector<BvhNode> got(bvhNodeCount(n));
  std::memcpy(got.data(), back.mapped(), nodeBytes);
  EXPECT_TRUE(got == want.nodes) << "the tree differs from the CPU's with the index clamped";
  // And it differs from the tree without the clamped index (the test can fail).
  s.meshes[0].indices[bad] = 0;
  EXPECT_FALSE(runScene(Backend::kCpuScalar, nullptr, s, {.continuous = true}, 1).nodes == got);
}

TEST_F(MeshRecordVulkan, RigidChordBoundIsTheLargestOverAllRigidVertices) {
  // 20 rigid meshes of 16 vertices (several subgroups): the gather's reduction gives the bits of the
  // largest bound the CPU computes vertex by vertex.
  Scene s = manyMeshes(20, MeshMotion::kRigid);
  s.meshes[19].vertices[5] = {2.5f, 1.0f, -0.7f, 0};  // the largest bound, at no subgroup's first lane
  auto stage = makeStage(s);
  ASSERT_NE(stage, nullptr);
  Uploaded u = uploadScene(s);
  const BufferRange state = detail::meshStateBuffer(*stage, 0);
  const detail::Buffer back = recordAndRead(*stage, u, state, 16);
  const std::vector<MeshLayout> layouts = s.layouts();
  const std::vector<ClothMeshes> lists = s.clothMeshes();
  detail::MeshTables tables = detail::makeMeshTables(layouts, s.cloths, lists);
  std::vector<MeshSurface> surfaces;
  std::vector<RigidTransform> transforms, prevTransforms;
  for (const MeshData& m : s.meshes) {
    surfaces.push_back(m.surface);
    transforms.push_back(m.transform);
    prevTransforms.push_back(m.prevTransform);
  }
  const detail::MeshValues values = detail::setMeshValues(tables, surfaces, transforms, prevTransforms);
  float want = 0;
  for (size_t m = 0; m < s.meshes.size(); ++m) {
    for (const Float4& v : s.meshes[m].vertices) {
      want = std::max(want, gpu::rigidChordBound(values.sweeps[tables.meshes[m].sweep].angle.x, gpu::vec3(v.x, v.y, v.z)));
    }
  }
  EXPECT_GT(want, 0.0f);
  float got = 0;
  std::memcpy(&got, back.mapped(), 4);
  EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << got << " vs " << want;
}

TEST_F(MeshRecordVulkan, BadInputIsRefusedNamingTheFieldAndNothingIsRecorded) {
  const Scene s = mixedScene(9);
  auto stage = makeStage(s, 2);
  ASSERT_NE(stage, nullptr);
  Uploaded u = uploadScene(s);
  const MeshCollisionRecordInfo good{.particles = u.particles, .prevParticles = u.prevParticles, .meshes = u.records};
  struct Case {
    const char* expect;
    std::function<void(MeshCollisionRecordInfo&, std::vector<MeshRecord>&)> spoil;
  };
  const float nan = std::nanf("");
  const Case cases[] = {
      {"particles.buffer is null", [](auto& i, auto&) { i.particles.buffer = VK_NULL_HANDLE; }},
      {"prevParticles holds", [](auto& i, auto&) { i.prevParticles.size -= 16; }},
      {"meshes[0].vertices.buffer is null", [](auto&, auto& r) { r[0].vertices.buffer = VK_NULL_HANDLE; }},
      {"meshes[2].prevVertices holds", [](auto&, auto& r) { r[2].prevVertices.size = 12; }},
      {"meshes[1].indices holds", [](auto&, auto& r) { r[1].indices.size -= 4; }},
      {"meshes[1].transform", [nan](auto&, auto& r) { r[1].transform.translation.y = nan; }},
      {"meshes[1].prevTransform", [](auto&, auto& r) { r[1].prevTransform.rotation = {0, 0, 0, 1.5f}; }},
      {"meshes[1].surface.restitution", [](auto&, auto& r) { r[1].surface.restitution = 2; }},
      {"meshes[0].surface.thickness", [](auto&, auto& r) { r[0].surface.thickness = -1; }},
      {"maxBounces", [](auto& i, auto&) { i.settings.maxBounces = kMaxMeshBounces + 1; }},
      {"frame is 2", [](auto& i, auto&) { i.frame = 2; }},
      {"tree is kRefit", [](auto& i, auto&) { i.tree = MeshTreeUpdate::kRefit; }},
      {"meshes holds 2 records", [](auto&, auto& r) { r.pop_back(); }},
  };
  VkCommandBuffer cmd = beginCommandBuffer();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expect);
    MeshCollisionRecordInfo info = good;
    std::vector<MeshRecord> records = u.records;
    c.spoil(info, records);
    info.meshes = records;
    const Status st = stage->record(cmd, info);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
    const RecordStats none{};
    EXPECT_TRUE(stage->lastRecordStats() == none) << "a refused record recorded something";
  }
  EXPECT_FALSE(stage->record(VK_NULL_HANDLE, good).ok());
  // The refused records left the command buffer empty, and a good one still records.
  const Status st = stage->record(cmd, good);
  ASSERT_TRUE(st.ok()) << st.message();
  VkCommandBuffer cmds[] = {cmd};
  submitRecorded(cmds);
}

}  // namespace
}  // namespace vkc::test
