// The scene-file subcommands of the vkcollide tool (tools/scene_commands.cpp).
#pragma once

namespace vkc::tool {

// vkcollide step SCENE --backend vulkan|cpu|cpu-scalar [--device SEL] [--repeat K] [--skip STAGE]... [--validation] --out OUT
int stepCommand(int argc, char** argv);

// vkcollide compare SCENE [--device SEL] [--repeat K] [--skip STAGE]... [--validation]
int compareCommand(int argc, char** argv);

// vkcollide stages: the stages of one iteration, whether this build has them, and what enables them.
int stagesCommand();

// The usage lines of these commands.
const char* sceneUsage();

}  // namespace vkc::tool
