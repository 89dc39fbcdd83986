# Writes the README's ```cpp blocks into one C++ file that the test binary compiles (it is never
# called): a README example that no longer matches the API fails the build. #include lines go to the
# top; the rest of the blocks goes, in order, into the body of one function (later blocks use what
# earlier ones declared) whose parameters are the handles an engine would have (instance, device,
# command buffer, buffers, counts).
function(vkc_readme_examples readme out)
  file(READ ${readme} text)
  # (Semicolons would split CMake lists: carried as a placeholder, put back when writing.)
  string(REPLACE ";" "@SEMICOLON@" text "${text}")
  string(REGEX MATCHALL "```cpp\n[^`]*```" blocks "${text}")
  if(NOT blocks)
    message(FATAL_ERROR "${readme}: no ```cpp blocks found")
  endif()
  set(includes "")
  set(body "")
  foreach(block IN LISTS blocks)
    string(REGEX REPLACE "^```cpp\n" "" block "${block}")
    string(REGEX REPLACE "```$" "" block "${block}")
    string(REGEX MATCHALL "#include [^\n]*\n" incs "${block}")
    foreach(inc IN LISTS incs)
      string(APPEND includes "${inc}")
    endforeach()
    string(REGEX REPLACE "#include [^\n]*\n" "" block "${block}")
    string(APPEND body "${block}")
  endforeach()
  string(REPLACE "@SEMICOLON@" ";" body "${body}")
  string(REPLACE "@SEMICOLON@" ";" includes "${includes}")
  file(WRITE ${out}.tmp
"// Generated from README.md by cmake/readme_examples.cmake: do not edit.
#include <cstdint>
#include <string_view>
${includes}
namespace vkc::readme {
namespace {
void log(std::string_view) {}
}  // namespace

[[maybe_unused]] void examples(VkInstance instance, VkPhysicalDevice gpu, VkDevice device, uint32_t computeFamily,
                               PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr,
                               VkCommandBuffer frameCmd, VkBuffer particleBuffer, VkBuffer prevParticleBuffer,
                               VkBuffer keyBuffer, VkBuffer valueBuffer, uint32_t iterations, uint32_t pairCount,
                               VkBuffer roomVertexBuffer, VkBuffer roomIndexBuffer, VkBuffer skinnedBuffer,
                               VkBuffer prevSkinnedBuffer, VkBuffer bodyIndexBuffer) {
${body}}

}  // namespace vkc::readme
")
  file(COPY_FILE ${out}.tmp ${out} ONLY_IF_DIFFERENT)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${readme})
endfunction()
