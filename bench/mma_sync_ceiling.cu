// The rate of the mma.sync instruction itself on this GPU (issue 10's 16-bit ceiling): bf16
// m16n8k16 from registers only, no memory, no barriers, timed beside nothing else.
//
// Built with the CUDA backend (target mma_sync_ceiling: build/mma_sync_ceiling), or alone:
//   nvcc -O3 -arch=sm_90 -o /tmp/c bench/mma_sync_ceiling.cu && /tmp/c
//
// Two figures per line: "same operands" issues MT x NT independent accumulators on one A and
// one B fragment (the instruction's issue limit); "warp tile" gives each product its own A and B
// fragments, as a GEMM's MT x NT warp tile does (MT A fragments, NT B fragments), which is the
// most a kernel with that warp tile and that many warps per SM can reach.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

__device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// SAME: every product reads fragment 0 (issue limit); else product (i, j) reads A_i and B_j,
// rows serpentine as in kafel's fragment policies.
template <int MT, int NT, bool SAME>
__global__ void __launch_bounds__(256, 1) probe(float* sink, int iters, std::uint32_t seed) {
  std::uint32_t a[MT][4], b[NT][2];
  for (int i = 0; i < MT; ++i)
    for (int r = 0; r < 4; ++r) a[i][r] = (seed * (4 * i + r + 1)) ^ threadIdx.x;
  for (int j = 0; j < NT; ++j)
    for (int r = 0; r < 2; ++r) b[j][r] = (seed * (2 * j + r + 77)) ^ threadIdx.x;
  float c[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) c[i][j][r] = 0.f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int jj = 0; jj < NT; ++jj) {
        const int j = (i & 1) ? NT - 1 - jj : jj;
        mma(c[i][j], a[SAME ? 0 : i], b[SAME ? 0 : j]);
      }
      // Operands that change between iterations, as fresh fragments do.
#pragma unroll
    for (int i = 0; i < MT; ++i) a[i][0] ^= it;
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j) s += c[i][j][0] + c[i][j][1] + c[i][j][2] + c[i][j][3];
  if (s == 1.2345f) *sink = s;  // never true; keeps the products live
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "mma_sync_ceiling: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

template <int MT, int NT, bool SAME>
double tflops(int warps, int sms, float* sink) {
  constexpr int kIters = 2048;
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  probe<MT, NT, SAME><<<sms, warps * 32>>>(sink, kIters, 3);  // warm-up (clocks up)
  check(cudaEventRecord(e0), "record");
  probe<MT, NT, SAME><<<sms, warps * 32>>>(sink, kIters, 3);
  check(cudaEventRecord(e1), "record");
  check(cudaEventSynchronize(e1), "launch");
  float ms = 0.f;
  check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
  const double flop = 2.0 * 16 * 8 * 16 * MT * NT * double(kIters) * warps * sms;
  return flop / (ms * 1e-3) / 1e12;
}

template <int MT, int NT>
void line(int warps, int sms, float* sink) {
  const double same = tflops<MT, NT, true>(warps, sms, sink);
  const double tile = tflops<MT, NT, false>(warps, sms, sink);
  std::printf("warp tile %3dx%-3d %2d warps/SM: same operands %6.1f TFLOP/s, warp tile %6.1f\n",
              16 * MT, 8 * NT, warps, same, tile);
}

}  // namespace

int main() {
  int sms = 0, clock_khz = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "attribute");
  float* sink = nullptr;
  check(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
  std::printf("mma.sync m16n8k16 bf16 -> f32, %d SMs, one block per SM (max clock %d MHz)\n", sms,
              clock_khz / 1000);
  for (int warps : {4, 8}) {
    line<4, 8>(warps, sms, sink);  // kafel's 16-bit warp tile (64 x 64)
    line<2, 8>(warps, sms, sink);  // 32 x 64
  }
  check(cudaFree(sink), "cudaFree");
  return 0;
}
