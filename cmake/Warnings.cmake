# One INTERFACE target carries the project's warning flags; VKC_WERROR turns them into errors.
add_library(vkc_warnings INTERFACE)
target_compile_options(vkc_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
  # `VkFooInfo x{VK_STRUCTURE_TYPE_FOO}` zero-initialises the rest on purpose (the Vulkan idiom).
  -Wno-missing-field-initializers>)
if(VKC_WERROR)
  target_compile_options(vkc_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
