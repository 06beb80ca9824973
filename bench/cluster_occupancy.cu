// How many thread-block clusters of each size a GPU holds at once, for a kernel that takes a whole SM
// (as cuforge's SM90 GEMM kernels do: one CTA an SM, by its shared memory): what the cost model's
// CostModel::cluster_of_four_sm_fraction stands for (clusters stay within one GPC, so a GPC's SMs past a
// multiple of the cluster size idle). Prints, per cluster size, cudaOccupancyMaxActiveClusters and the
// fraction of the SMs those clusters cover; then launches one wave of exactly that many clusters and one
// of one cluster more, timing each (a kernel that spins for a fixed time), so a second wave shows.
//
//   nvcc -std=c++17 -O2 -arch=sm_90a bench/cluster_occupancy.cu -o cluster_occupancy && ./cluster_occupancy
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kThreads = 128;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

// Holds its SM for `cycles` clock cycles: a wave of clusters that fits runs once as long.
__global__ void hold(long long cycles) {
  extern __shared__ char smem[];
  const long long start = clock64();
  while (clock64() - start < cycles) smem[threadIdx.x] = char(threadIdx.x);
}

cudaLaunchConfig_t config(int clusters, int size, int smem, cudaLaunchAttribute* attribute) {
  cudaLaunchConfig_t c{};
  c.gridDim = dim3(clusters * size);
  c.blockDim = dim3(kThreads);
  c.dynamicSmemBytes = smem;
  attribute->id = cudaLaunchAttributeClusterDimension;
  attribute->val.clusterDim.x = size;
  attribute->val.clusterDim.y = attribute->val.clusterDim.z = 1;
  c.attrs = attribute;
  c.numAttrs = 1;
  return c;
}

float time_ms(int clusters, int size, int smem, long long cycles) {
  cudaLaunchAttribute attribute;
  cudaLaunchConfig_t c = config(clusters, size, smem, &attribute);
  cudaEvent_t begin, end;
  check(cudaEventCreate(&begin), "event");
  check(cudaEventCreate(&end), "event");
  check(cudaLaunchKernelEx(&c, hold, cycles), "warm-up launch");
  check(cudaEventRecord(begin), "record");
  check(cudaLaunchKernelEx(&c, hold, cycles), "launch");
  check(cudaEventRecord(end), "record");
  check(cudaEventSynchronize(end), "synchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, begin, end), "elapsed");
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return ms;
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "device properties");
  // More than half an SM's shared memory: one CTA an SM.
  const int smem = int(prop.sharedMemPerBlockOptin);
  check(cudaFuncSetAttribute(hold, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "shared memory");
  check(cudaFuncSetAttribute(hold, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "cluster size");
  const long long cycles = 2'000'000;  // about 1 ms at 1.98 GHz
  std::printf("%s: %d SMs, %d bytes of shared memory a CTA\n", prop.name, prop.multiProcessorCount, smem);
  std::printf("cluster  max active  SMs covered  fraction  one wave (ms)  one cluster more (ms)\n");
  for (int size : {1, 2, 4, 8, 16}) {
    cudaLaunchAttribute attribute;
    cudaLaunchConfig_t c = config(1, size, smem, &attribute);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, hold, &c) != cudaSuccess || clusters == 0) {
      cudaGetLastError();
      std::printf("%7d  not launchable\n", size);
      continue;
    }
    std::printf("%7d  %10d  %11d  %8.3f  %13.3f  %21.3f\n", size, clusters, clusters * size,
                double(clusters * size) / prop.multiProcessorCount, time_ms(clusters, size, smem, cycles),
                time_ms(clusters + 1, size, smem, cycles));
  }
  return 0;
}
