// vkcollide intersect (tools/intersect_command.cpp): two OBJ meshes' intersection (mesh_intersection.h)
// written as a curves file, or checked across the CPU backends.
#pragma once

namespace vkc::tool {

// vkcollide intersect A.obj B.obj [--backend cpu|cpu-scalar] [--threads N] [--compare] [--repeat K]
// [--out CURVES]
int intersectCommand(int argc, char** argv);

// The usage lines of this command.
const char* intersectUsage();

}  // namespace vkc::tool
