// Wavefront OBJ meshes for scene files (version 2 "obj"), read with tinyobjloader (Debian
// libtinyobjloader-dev), linked privately by the scene library.
#include <tiny_obj_loader.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "io/file.h"
#include "vkcollide/scene.h"

namespace vkc {

Status loadObjMesh(const std::string& path, SceneMesh& mesh) {
  // Only regular files (a device or a FIFO could block or never end).
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    return Error{ErrorCode::kIo, path + ": not a regular file"};
  }
  Result<std::string> text = io::readFile(path);
  if (!text) return text.error();
  std::istringstream in(*text);
  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> materials;
  std::string warn, err;
  // No material reader: "mtllib" lines are ignored (a warning, not an error). Polygons triangulated.
  const bool ok = tinyobj::LoadObj(&attrib, &shapes, &materials, &warn, &err, &in, nullptr, /*triangulate=*/true);
  auto bad = [&](const std::string& what) { return Error{ErrorCode::kInvalidArgument, path + ": " + what}; };
  if (!ok) return bad(err.empty() ? "not a readable OBJ file" : err);
  if (attrib.vertices.size() % 3 != 0) return bad("vertex coordinates are not triples");
  const size_t vertexCount = attrib.vertices.size() / 3;
  std::vector<Float4> vertices(vertexCount);
  for (size_t v = 0; v < vertexCount; ++v) {
    const float x = attrib.vertices[3 * v], y = attrib.vertices[3 * v + 1], z = attrib.vertices[3 * v + 2];
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z)) {
      return bad("vertex " + std::to_string(v + 1) + " is not finite");
    }
    vertices[v] = {x, y, z, 0.0f};
  }
  std::vector<uint32_t> indices;
  for (const tinyobj::shape_t& shape : shapes) {
    size_t corner = 0;
    for (size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const size_t n = shape.mesh.num_face_vertices[f];
      if (n == 3) {
        for (size_t k = 0; k < 3; ++k) {
          const int i = shape.mesh.indices[corner + k].vertex_index;
          if (i < 0 || static_cast<size_t>(i) >= vertexCount) {
            return bad("face " + std::to_string(f + 1) + " of \"" + shape.name + "\" uses vertex " +
                       std::to_string(i + 1) + "; the file has " + std::to_string(vertexCount) + " vertices");
          }
          indices.push_back(static_cast<uint32_t>(i));
        }
      }
      // Faces the triangulation left with fewer than 3 corners (degenerate polygons) are skipped.
      corner += n;
    }
  }
  if (vertices.empty()) return bad("no vertices");
  if (indices.empty()) return bad("no triangles (faces)");
  mesh.vertices = std::move(vertices);
  mesh.indices = std::move(indices);
  return {};
}

}  // namespace vkc
