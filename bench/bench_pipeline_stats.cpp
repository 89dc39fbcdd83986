// What the driver compiled for the embedded shaders: each compute pipeline is created the way the
// library creates it (one push-descriptor set of storage buffers, one push-constant range: see
// measure(); specialization constant 0 = the pass), timed, and with VK_KHR_pipeline_executable_properties its
// executables' statistics are printed (on NVIDIA: registers, local memory, ...; whatever the driver
// reports). Pipelines whose creation fails are listed with their VkResult, the others go on. See --help.
//
// The program makes its own instance and device instead of a vkc::Context: statistics need the
// extension's feature enabled at device creation and the capture flag at pipeline creation, which
// the library's contexts and pipeline cache do not ask for. The SPIR-V is the library's own
// (detail::embeddedShader); the names come from the build (VKC_SHADER_NAMES, bench/CMakeLists.txt).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench_common.h"
#include "vulkan/context_impl.h"  // detail::queryDeviceInfo
#include "vulkan/pipelines.h"     // detail::embeddedShader

namespace vkc::bench {
namespace {

constexpr const char* kProg = "bench_pipeline_stats";

struct Options {
  std::string device;  // a name substring
  std::string json = "bench_pipeline_stats.json";
  // --shader: a name and its own values of constant_id 0 (empty: spec0); without: every shader.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> shaders;
  std::vector<uint32_t> spec0 = {0};
  bool validation = false;
  bool quick = false;
  bool exactArithmetic = false;  // the embedded shaders' exact-arithmetic variants
};

void usage(std::FILE* f) {
  std::fprintf(
      f,
      "usage: bench_pipeline_stats [options]\n"
      "  --device NAME    the Vulkan device whose name contains NAME (default: the first\n"
      "                   device that is not a CPU)\n"
      "  --shader NAME[:A,B,..]  only shaders/NAME.comp (repeatable; default every embedded shader),\n"
      "                   with its own values of constant 0 after the colon; a NAME ending in .spv is\n"
      "                   a SPIR-V file (a variant of a shader, for a driver's compiler)\n"
      "  --exact-arithmetic  the embedded shaders' exact-arithmetic variants (ContextCreateInfo::exactArithmetic)\n"
      "  --spec0 A,B,..   values of specialization constant 0 (the pass) for the shaders that\n"
      "                   declare it and have no list of their own (default 0)\n"
      "  --all-passes     --spec0 0,1,2,3 (the geometry-query families: COUNT, WRITE, QUERY COUNT,\n"
      "                   QUERY WRITE)\n"
      "  --validation     enable VK_LAYER_KHRONOS_validation (also VKC_BENCH_VALIDATION=1); any\n"
      "                   message makes the exit code 3\n"
      "  --quick          the shaders copy and bvh only (smoke test)\n"
      "  --json PATH      write results as JSON (default bench_pipeline_stats.json)\n");
}

bool isFile(const std::string& name) { return name.size() > 4 && name.substr(name.size() - 4) == ".spv"; }

// The SPIR-V words of a --shader: the embedded shader (its exact-arithmetic variant where asked), or
// the file's (empty when unreadable).
std::vector<uint32_t> shaderWords(const std::string& name, bool exactArithmetic) {
  if (!isFile(name)) {
    const std::span<const uint32_t> words = detail::embeddedShader(name.c_str(), exactArithmetic);
    return {words.begin(), words.end()};
  }
  // C stdio: GCC 12 warns of a null dereference inside istreambuf_iterator (tools/spirv_embed.cpp).
  std::vector<uint32_t> words;
  if (std::FILE* f = std::fopen(name.c_str(), "rb")) {
    uint32_t w = 0;
    while (std::fread(&w, sizeof w, 1, f) == 1) words.push_back(w);
    std::fclose(f);
  }
  return words;
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  if (const char* v = std::getenv("VKC_BENCH_VALIDATION"); v != nullptr && std::string(v) == "1")
    o.validation = true;
  ArgReader args(kProg, argc, argv);
  while (args.next()) {
    std::string value;
    if (args.is("--help") || args.is("-h")) {
      usage(stdout);
      std::exit(0);
    } else if (args.is("--device") || args.is("--json")) {
      if (!args.text(args.is("--device") ? o.device : o.json)) return std::nullopt;
    } else if (args.is("--shader")) {
      if (!args.text(value)) return std::nullopt;
      const size_t colon = value.find(':');
      o.shaders.emplace_back(value.substr(0, colon), std::vector<uint32_t>{});
      if (colon != std::string::npos &&
          !parseUintList(value.substr(colon + 1), o.shaders.back().second, 0, UINT32_MAX)) {
        std::fprintf(stderr, "%s: --shader %s: a list of non-negative integers must follow the colon\n",
                     kProg, value.c_str());
        return std::nullopt;
      }
    } else if (args.is("--spec0")) {
      if (!args.text(value) || !parseUintList(value, o.spec0, 0, UINT32_MAX)) {
        std::fprintf(stderr, "%s: --spec0 needs a list of non-negative integers\n", kProg);
        return std::nullopt;
      }
    } else if (args.is("--all-passes")) {
      o.spec0 = {0, 1, 2, 3};
    } else if (args.is("--validation")) {
      o.validation = true;
    } else if (args.is("--exact-arithmetic")) {
      o.exactArithmetic = true;
    } else if (args.is("--quick")) {
      o.quick = true;
    } else {
      std::fprintf(stderr, "%s: unknown option '%s'\n", kProg, args.arg().c_str());
      usage(stderr);
      return std::nullopt;
    }
  }
  if (o.quick && o.shaders.empty()) o.shaders = {{"copy", {}}, {"bvh", {}}};
  if (o.shaders.empty()) {
    const std::string all = VKC_SHADER_NAMES;
    for (size_t start = 0, comma = 0; comma != std::string::npos; start = comma + 1)
      o.shaders.emplace_back(all.substr(start, (comma = all.find(',', start)) - start),
                             std::vector<uint32_t>{});
  }
  for (const auto& [name, spec0] : o.shaders) {
    if (!isFile(name) && detail::embeddedShader(name.c_str()).empty()) {
      std::fprintf(stderr, "%s: no embedded shader named '%s' (shaders/NAME.comp)\n", kProg, name.c_str());
      return std::nullopt;
    }
  }
  return o;
}

// What the pipeline layout needs, read from the SPIR-V so that no table here can drift from the
// stages' headers: storage buffers (set 0) up to the highest binding decorated, as the stages declare
// them, and whether the shader has constant_id 0 (its pass).
struct Reflection {
  uint32_t bindingCount = 0;
  bool hasSpec0 = false;
};

Reflection reflect(std::span<const uint32_t> words) {
  constexpr uint32_t kOpDecorate = 71, kSpecId = 1, kBinding = 33;  // the SPIR-V specification's numbers
  Reflection r;
  for (size_t i = 5; i < words.size();) {  // after the 5-word header
    const uint32_t op = words[i] & 0xFFFFu, n = words[i] >> 16;
    if (n == 0 || i + n > words.size()) break;
    if (op == kOpDecorate && n >= 4 && words[i + 2] == kBinding)
      r.bindingCount = std::max(r.bindingCount, words[i + 3] + 1);
    if (op == kOpDecorate && n >= 4 && words[i + 2] == kSpecId && words[i + 3] == 0) r.hasSpec0 = true;
    i += n;
  }
  return r;
}

struct Executable {
  std::string name, description;
  uint32_t subgroupSize = 0;
  std::vector<std::pair<std::string, std::string>> statistics;  // name, value as JSON text
};

struct Row {
  std::string shader;
  std::optional<uint32_t> spec0;
  VkResult result = VK_SUCCESS;
  double createMs = 0;
  std::vector<Executable> executables;
};

std::string statisticValue(const VkPipelineExecutableStatisticKHR& s) {
  if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR) return s.value.b32 ? "true" : "false";
  if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR) return std::to_string(s.value.i64);
  if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR) return std::to_string(s.value.u64);
  return jsonNumber(s.value.f64);  // FLOAT64, the last of the four formats
}

std::vector<Executable> executables(VkDevice device, VkPipeline pipeline) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, nullptr, pipeline};
  uint32_t n = 0;
  vkGetPipelineExecutablePropertiesKHR(device, &info, &n, nullptr);
  std::vector<VkPipelineExecutablePropertiesKHR> props(
      n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  vkGetPipelineExecutablePropertiesKHR(device, &info, &n, props.data());
  std::vector<Executable> out;
  for (uint32_t e = 0; e < n; ++e) {
    Executable x{props[e].name, props[e].description, props[e].subgroupSize, {}};
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, nullptr, pipeline, e};
    uint32_t m = 0;
    vkGetPipelineExecutableStatisticsKHR(device, &ei, &m, nullptr);
    std::vector<VkPipelineExecutableStatisticKHR> stats(
        m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    vkGetPipelineExecutableStatisticsKHR(device, &ei, &m, stats.data());
    for (uint32_t s = 0; s < m; ++s) x.statistics.emplace_back(stats[s].name, statisticValue(stats[s]));
    out.push_back(std::move(x));
  }
  return out;
}

// One pipeline: its creation timed (steady clock), its statistics when `capture`. The layout is the
// library's but for the push-constant range, of the device's limit (pushConstantSize) rather than
// the stage's block: a range that holds the block is all a pipeline needs, and any valid block fits.
Row measure(VkDevice device, const std::string& shader, VkShaderModule module, const Reflection& refl,
            uint32_t pushConstantSize, std::optional<uint32_t> spec0, bool capture) {
  Row row{shader, spec0, VK_SUCCESS, 0, {}};
  std::vector<VkDescriptorSetLayoutBinding> bindings(refl.bindingCount);
  for (uint32_t i = 0; i < refl.bindingCount; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dslci.bindingCount = refl.bindingCount;
  dslci.pBindings = bindings.data();
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, pushConstantSize};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &setLayout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  const VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
  const VkSpecializationInfo spec{1, &entry, sizeof(uint32_t), spec0 ? &*spec0 : nullptr};
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.flags = capture ? VkPipelineCreateFlags{VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR} : 0u;
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.stage.pSpecializationInfo = spec0 ? &spec : nullptr;
  row.result = vkCreateDescriptorSetLayout(device, &dslci, nullptr, &setLayout);
  if (row.result == VK_SUCCESS) row.result = vkCreatePipelineLayout(device, &plci, nullptr, &layout);
  if (row.result == VK_SUCCESS) {
    cpci.layout = layout;
    const double t0 = nowMs();
    row.result = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline);
    row.createMs = nowMs() - t0;
  }
  if (row.result == VK_SUCCESS && capture) row.executables = executables(device, pipeline);
  vkDestroyPipeline(device, pipeline, nullptr);
  vkDestroyPipelineLayout(device, layout, nullptr);
  vkDestroyDescriptorSetLayout(device, setLayout, nullptr);
  return row;
}

uint32_t validationMessages = 0;

VKAPI_ATTR VkBool32 VKAPI_CALL onValidation(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                            VkDebugUtilsMessageTypeFlagsEXT,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++validationMessages;
  std::fprintf(stderr, "%s: validation: %s\n", kProg, data->pMessage);
  return VK_FALSE;
}

// The instance and device, destroyed in order when the program ends.
struct Gpu {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  DeviceInfo info;
  bool capture = false;  // the device has VK_KHR_pipeline_executable_properties, enabled
  Gpu() = default;
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;
  ~Gpu() {
    if (device != VK_NULL_HANDLE) vkDestroyDevice(device, nullptr);
    if (messenger != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
    if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
  }
};

// Creates the instance (with the validation layer when asked), picks the physical device (--device: a
// name substring; without it the first device that is not a CPU, i.e. not lavapipe, else the first)
// and creates a device with the library's features (src/vulkan/context.cpp), so that the driver
// compiles the same code, plus the statistics' feature where there is one. False with a message on
// stderr.
bool openGpu(const Options& o, Gpu& gpu) {
  if (volkInitialize() != VK_SUCCESS) {
    std::fprintf(stderr, "%s: no Vulkan loader (libvulkan.so.1)\n", kProg);
    return false;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_3;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debugUtils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mci.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mci.messageType =
      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  mci.pfnUserCallback = onValidation;
  // Chained, the messenger also sees vkCreateInstance and vkDestroyInstance.
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, o.validation ? &mci : nullptr};
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = ici.enabledExtensionCount = o.validation ? 1u : 0u;
  ici.ppEnabledLayerNames = &layer;
  ici.ppEnabledExtensionNames = &debugUtils;
  if (const VkResult r = vkCreateInstance(&ici, nullptr, &gpu.instance); r != VK_SUCCESS) {
    std::fprintf(stderr, "%s: vkCreateInstance%s: %s\n", kProg, o.validation ? " (validation layer)" : "",
                 detail::vkResultName(r));
    return false;
  }
  volkLoadInstanceOnly(gpu.instance);
  if (o.validation) vkCreateDebugUtilsMessengerEXT(gpu.instance, &mci, nullptr, &gpu.messenger);

  uint32_t count = 0;
  vkEnumeratePhysicalDevices(gpu.instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(gpu.instance, &count, devices.data());
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < count; ++i) infos.push_back(detail::queryDeviceInfo(devices[i], i));
  auto it = std::find_if(infos.begin(), infos.end(), [&](const DeviceInfo& d) {
    return o.device.empty() ? d.type != VK_PHYSICAL_DEVICE_TYPE_CPU
                            : d.name.find(o.device) != std::string::npos;
  });
  if (it == infos.end() && o.device.empty() && !infos.empty()) it = infos.begin();
  if (it == infos.end() || !it->usable()) {
    std::fprintf(stderr, "%s: no usable Vulkan device%s%s\n", kProg, o.device.empty() ? "" : " named *",
                 (o.device.empty() ? "" : o.device + "*").c_str());
    return false;
  }
  gpu.info = *it;
  const VkPhysicalDevice pd = devices[gpu.info.index];
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &pef};
  const bool extension = detail::hasExtension(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (extension) vkGetPhysicalDeviceFeatures2(pd, &query);
  gpu.capture = extension && pef.pipelineExecutableInfo == VK_TRUE;

  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                       gpu.capture ? &pef : nullptr};
  f13.synchronization2 = VK_TRUE;
  f13.maintenance4 = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f13};
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueCount = 1;  // of family 0: no queue is used, but a device has at least one
  qci.pQueuePriorities = &priority;
  const char* extensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME,
                              VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = gpu.capture ? 2u : 1u;
  dci.ppEnabledExtensionNames = extensions;
  if (const VkResult r = vkCreateDevice(pd, &dci, nullptr, &gpu.device); r != VK_SUCCESS) {
    std::fprintf(stderr, "%s: vkCreateDevice: %s\n", kProg, detail::vkResultName(r));
    return false;
  }
  volkLoadDevice(gpu.device);
  return true;
}

std::string resultsJson(const Gpu& gpu, const std::vector<Row>& rows) {
  std::string s = "{\n  \"benchmark\": \"pipeline_stats\",\n" + jsonDeviceFields(gpu.info) + jsonHostFields();
  s += "  \"date\": " + jsonString(utcDate()) + ",\n";
  s += "  \"pipeline_executable_properties\": " + std::string(gpu.capture ? "true" : "false") + ",\n";
  s += "  \"notes\": \"create_ms: wall clock of vkCreateComputePipelines (a driver's shader disk cache makes "
       "repeated runs faster); statistics as the driver names them\",\n";
  return s + jsonRowsAndEnd(rows, [](const Row& r) {
           std::string m = "\"shader\": " + jsonString(r.shader) +
                           ", \"spec0\": " + (r.spec0 ? std::to_string(*r.spec0) : "null") +
                           ", \"result\": " + jsonString(detail::vkResultName(r.result)) +
                           ", \"create_ms\": " + jsonNumber(r.createMs) + ", \"executables\": [";
           for (size_t e = 0; e < r.executables.size(); ++e) {
             const Executable& x = r.executables[e];
             m += std::string(e > 0 ? ", " : "") + "{\"name\": " + jsonString(x.name) +
                  ", \"description\": " + jsonString(x.description) +
                  ", \"subgroup_size\": " + std::to_string(x.subgroupSize) + ", \"statistics\": {";
             for (size_t k = 0; k < x.statistics.size(); ++k)
               m += (k > 0 ? ", " : "") + jsonString(x.statistics[k].first) + ": " + x.statistics[k].second;
             m += "}}";
           }
           return m + "]";
         });
}

int run(const Options& o) {
  Gpu gpu;
  if (!openGpu(o, gpu)) return 1;
  std::printf("device: %s (%s %s)\n", gpu.info.name.c_str(), gpu.info.driverName.c_str(),
              gpu.info.driverInfo.c_str());
  if (!gpu.capture) {
    std::printf(
        "%s: the device lacks VK_KHR_pipeline_executable_properties (extension or feature): creation "
        "times only, no statistics\n",
        kProg);
  }
  std::vector<Row> rows;
  uint32_t failed = 0;
  std::printf("%-36s %5s %-26s %10s  executables: statistics\n", "shader", "spec0", "result", "create ms");
  for (const auto& [name, ownSpec0] : o.shaders) {
    const std::vector<uint32_t> words = shaderWords(name, o.exactArithmetic);
    const Reflection refl = reflect(words);
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * sizeof(uint32_t);
    smci.pCode = words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    if (const VkResult r = vkCreateShaderModule(gpu.device, &smci, nullptr, &module); r != VK_SUCCESS) {
      std::printf("%-36s vkCreateShaderModule: %s\n", name.c_str(), detail::vkResultName(r));
      ++failed;
      continue;
    }
    std::vector<std::optional<uint32_t>> specs = {std::nullopt};
    if (refl.hasSpec0) {
      const std::vector<uint32_t>& values = ownSpec0.empty() ? o.spec0 : ownSpec0;
      specs.assign(values.begin(), values.end());
    }
    for (const std::optional<uint32_t> spec : specs) {
      const Row& r = rows.emplace_back(
          measure(gpu.device, name, module, refl, gpu.info.maxPushConstantsSize, spec, gpu.capture));
      failed += r.result != VK_SUCCESS;
      std::printf("%-36s %5s %-26s %10.2f\n", name.c_str(), spec ? std::to_string(*spec).c_str() : "-",
                  detail::vkResultName(r.result), r.createMs);
      for (const Executable& e : r.executables) {
        std::printf("    %s (subgroup %u):", e.name.c_str(), e.subgroupSize);
        for (const auto& [stat, value] : e.statistics) std::printf(" %s=%s;", stat.c_str(), value.c_str());
        std::printf("\n");
      }
      std::fflush(stdout);  // a driver that crashes on a later shader leaves these lines
    }
    vkDestroyShaderModule(gpu.device, module, nullptr);
  }
  std::printf("%zu pipelines, %u failed to create\n", rows.size(), failed);
  if (!reportWritten(kProg, o.json, writeTextFile(o.json, resultsJson(gpu, rows)))) return 1;
  if (validationMessages > 0) {
    std::fprintf(stderr, "%s: %u validation messages\n", kProg, validationMessages);
    return 3;
  }
  return 0;
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto o = vkc::bench::parseOptions(argc, argv);
  if (!o) return 2;
  return vkc::bench::run(*o);
}
