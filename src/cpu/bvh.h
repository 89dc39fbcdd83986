// Private interface of the BVH stage's CPU twin (src/cpu/bvh.cpp) for other stages' CPU twins.
#pragma once

#include "vkcollide/bvh.h"

namespace vkc::cpu {

// refitBvhCpu without its validation: for a caller that has validated the same input already (the
// mesh stage's explicit kRefit validates the tree's topology in its own validate()).
void refitBvhValidated(const BvhInput& input);

}  // namespace vkc::cpu
