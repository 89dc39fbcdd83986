// A cost model that projects a record's RecordStats (context.h) to the time it would take on a named
// GPU. It is a MODEL, not a measurement: vkcollide's tests and benchmarks run on lavapipe unless a GPU
// is lent, and the projection is what every machine can compute from the counts.
//
//   projected seconds = dependentDispatches x dispatchLatency
//                     + (bytesRead + bytesWritten + transferBytes) / bandwidth
//
// The first term is the record's critical path: each dependent dispatch waits for the barrier before
// it to drain the GPU and for its own launch. The second assumes every declared byte moves once
// through DRAM at the device's peak bandwidth (declared ranges are upper bounds of what the shaders
// touch, and peak bandwidth is a lower bound of the time: the two errors go opposite ways). Neither
// arithmetic nor occupancy is modelled: the collision shaders do little arithmetic per byte, and
// small cloths are latency-bound. Measured figures replace the model wherever a GPU is available
// (bench/results/).
#pragma once

#include "vkcollide/context.h"

namespace vkc {

#include "vkcollide/export.h"
VKC_API_BEGIN

struct GpuCostModel {
  const char* name = "";               // the GPU the parameters describe
  double bandwidthBytesPerSecond = 0;  // DRAM peak bandwidth
  double dispatchLatencySeconds = 0;   // per dependent dispatch: launch + barrier drain
  const char* source = "";             // where the two numbers come from
};

// NVIDIA H100 SXM5 80 GB. Bandwidth: 3.35 TB/s, NVIDIA's H100 data sheet (HBM3). Latency: 3 us per
// dependent dispatch, the launch overhead of an empty CUDA kernel on recent NVIDIA GPUs and drivers
// as measured and reported on NVIDIA's developer forum ("Too much time for kernel launch latency",
// forums.developer.nvidia.com/t/233645, 2022); a dispatch recorded in a Vulkan command buffer skips
// the host-side launch, so this is taken as an upper bound, not measured by this project.
inline constexpr GpuCostModel kH100CostModel{
    "NVIDIA H100 SXM5 (model)", 3.35e12, 3.0e-6,
    "bandwidth: NVIDIA H100 data sheet (3.35 TB/s); latency: 3 us per dependent dispatch, the empty-kernel "
    "launch overhead reported on NVIDIA's developer forum (thread 233645), not measured here"};

// The model's time for what `stats` counts, in seconds.
constexpr double projectSeconds(const RecordStats& stats, const GpuCostModel& model) {
  const double bytes = static_cast<double>(stats.bytesRead + stats.bytesWritten + stats.transferBytes);
  return stats.dependentDispatches * model.dispatchLatencySeconds + bytes / model.bandwidthBytesPerSecond;
}

VKC_API_END

}  // namespace vkc
