// Device-side helpers run around the GEMM kernels: the transpose pre-pass that turns op-T
// operands into op-N ones for the fast rungs, the k-major relayout of 1- and 4-byte operands
// (cuBLASLt's fp8/int8, wgmma's tf32/fp8/int8), and the spin kernel that hides launch latency.
#include <algorithm>

#include "cuda/gemm_common.cuh"
#include "cuda/mma.cuh"
#include "cuda/runtime.hpp"

namespace kafel::cuda {
namespace {

constexpr int kTile = 32, kRows = 8;

// Tiles of 32 x 32 through shared memory; block rows stride by the grid so any row count fits
// the 65535-block limit of gridDim.y. blockIdx.z picks the matrix of a batch.
template <class T>
__global__ void transpose_kernel(const T* __restrict__ src, long long rows, long long cols,
                                 long long lds, T* __restrict__ dst, long long ldd,
                                 long long src_stride, long long dst_stride) {
  __shared__ T tile[kTile][kTile + 1];
  src += blockIdx.z * src_stride;
  dst += blockIdx.z * dst_stride;
  const long long c0 = static_cast<long long>(blockIdx.x) * kTile;
  for (long long r0 = static_cast<long long>(blockIdx.y) * kTile; r0 < rows;
       r0 += static_cast<long long>(gridDim.y) * kTile) {
    for (int y = threadIdx.y; y < kTile; y += kRows) {
      const long long r = r0 + y, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[y][threadIdx.x] = src[r * lds + c];
    }
    __syncthreads();
    for (int y = threadIdx.y; y < kTile; y += kRows) {
      const long long r = c0 + y, c = r0 + threadIdx.x;  // dst row = src column
      if (r < cols && c < rows) dst[r * ldd + c] = tile[threadIdx.x][y];
    }
    __syncthreads();  // the tile is refilled by the next block row
  }
}

// What relayout_kernel writes for each element: the element itself.
struct Copy {
  template <class T>
  __device__ void operator()(T* at, long long, T v) const {
    *at = v;
  }
};

// For 3xtf32: x as big = tf32(x) at its place and small = tf32(x - big) `small_rows` rows below
// it, split as the mma.sync rungs split their fragments (rounded to nearest; x - big is exact).
struct SplitTf32 {
  long long small_rows = 0;
  __device__ void operator()(unsigned* at, long long ldd, unsigned x) const {
    std::uint32_t big = x, small = 0;
    tc::OpTf32<true>::split(big, small);
    at[0] = big;
    at[small_rows * ldd] = small;
  }
};

// dst(r, c) = op(src)(r, c) inside op(src), 0 in the padding; one 32 x 32 tile of dst per step.
template <class T, class Store = Copy>
__global__ void relayout_kernel(const T* __restrict__ src, long long rows, long long cols,
                                long long lds, int transposed, T* __restrict__ dst,
                                long long dst_rows, long long dst_cols, long long ldd,
                                Store store = {}) {
  __shared__ T tile[kTile][kTile + 1];
  const long long c0 = static_cast<long long>(blockIdx.x) * kTile;  // dst columns
  const long long op_rows = transposed ? cols : rows, op_cols = transposed ? rows : cols;
  for (long long r0 = static_cast<long long>(blockIdx.y) * kTile; r0 < dst_rows;
       r0 += static_cast<long long>(gridDim.y) * kTile) {
    // Read src coalesced along its rows: for a transposed source, tile[y][x] holds
    // src(c0 + y, r0 + x) = op(src)(r0 + x, c0 + y).
    for (int y = threadIdx.y; y < kTile; y += kRows) {
      const long long sr = transposed ? c0 + y : r0 + y;
      const long long sc = transposed ? r0 + threadIdx.x : c0 + threadIdx.x;
      const long long orow = transposed ? sc : sr, ocol = transposed ? sr : sc;
      tile[y][threadIdx.x] = orow < op_rows && ocol < op_cols ? src[sr * lds + sc] : T(0);
    }
    __syncthreads();
    for (int y = threadIdx.y; y < kTile; y += kRows) {
      const long long r = r0 + y, c = c0 + threadIdx.x;
      if (r < dst_rows && c < dst_cols)
        store(dst + r * ldd + c, ldd, transposed ? tile[threadIdx.x][y] : tile[y][threadIdx.x]);
    }
    __syncthreads();
  }
}

// A batch goes in launches of at most 65535 matrices (gridDim.z).
template <class T>
void transpose(const void* src, long long rows, long long cols, long long lds, void* dst,
               long long ldd, cudaStream_t s, long long count, long long src_stride,
               long long dst_stride) {
  for (long long first = 0; first < count; first += 65535) {
    const auto n = static_cast<unsigned>(std::min<long long>(65535, count - first));
    const dim3 grid(ceil_div(cols, kTile), std::min<unsigned>(ceil_div(rows, kTile), 65535u), n);
    transpose_kernel<T><<<grid, dim3(kTile, kRows), 0, s>>>(
        static_cast<const T*>(src) + first * src_stride, rows, cols, lds,
        static_cast<T*>(dst) + first * dst_stride, ldd, src_stride, dst_stride);
    KAFEL_CUDA_CHECK_LAUNCH("transpose");
  }
}

template <class T>
void relayout(const void* src, std::int64_t rows, std::int64_t cols, std::int64_t lds,
              bool transposed, void* dst, std::int64_t dst_rows, std::int64_t dst_cols,
              std::int64_t ldd, cudaStream_t s) {
  const dim3 grid(ceil_div(dst_cols, kTile), std::min<unsigned>(ceil_div(dst_rows, kTile), 65535u));
  relayout_kernel<T><<<grid, dim3(kTile, kRows), 0, s>>>(
      static_cast<const T*>(src), rows, cols, lds, transposed ? 1 : 0, static_cast<T*>(dst),
      dst_rows, dst_cols, ldd);
  KAFEL_CUDA_CHECK_LAUNCH("relayout");
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void launch_spin(cudaStream_t s) {
  // ~10 us at 2 GHz: long enough for the host to enqueue the timed work behind it.
  spin_kernel<<<1, 1, 0, s>>>(20000);
  KAFEL_CUDA_CHECK_LAUNCH("spin");
}

void launch_transpose(DType t, const void* src, std::int64_t rows, std::int64_t cols,
                      std::int64_t lds, void* dst, std::int64_t ldd, cudaStream_t s,
                      std::int64_t count, std::int64_t src_stride, std::int64_t dst_stride) {
  if (rows == 0 || cols == 0 || count == 0) return;
  switch (dtype_size(t)) {
    case 1:  // i8 for the tensor-core rungs
      transpose<unsigned char>(src, rows, cols, lds, dst, ldd, s, count, src_stride, dst_stride);
      return;
    case 2:  // f16, bf16 for the tensor-core rungs
      transpose<unsigned short>(src, rows, cols, lds, dst, ldd, s, count, src_stride, dst_stride);
      return;
    case 4:
      transpose<float>(src, rows, cols, lds, dst, ldd, s, count, src_stride, dst_stride);
      return;
    case 8:
      transpose<double>(src, rows, cols, lds, dst, ldd, s, count, src_stride, dst_stride);
      return;
    default:
      throw Unsupported("transpose: " + std::string(to_string(t)) +
                        " elements are not compiled in (1, 2, 4 and 8 bytes are)");
  }
}

void launch_relayout(DType t, const void* src, std::int64_t rows, std::int64_t cols,
                     std::int64_t lds, bool transposed, void* dst, std::int64_t dst_rows,
                     std::int64_t dst_cols, std::int64_t ldd, cudaStream_t s) {
  if (dst_rows == 0 || dst_cols == 0) return;
  switch (dtype_size(t)) {
    case 1:
      relayout<unsigned char>(src, rows, cols, lds, transposed, dst, dst_rows, dst_cols, ldd, s);
      return;
    case 4:
      relayout<unsigned int>(src, rows, cols, lds, transposed, dst, dst_rows, dst_cols, ldd, s);
      return;
    default:
      throw Unsupported("relayout: " + std::string(to_string(t)) +
                        " elements are not compiled in (1 and 4 bytes are)");
  }
}

void launch_split_tf32(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t lds,
                       bool transposed, float* dst, std::int64_t dst_rows, std::int64_t dst_cols,
                       std::int64_t ldd, std::int64_t small_rows, cudaStream_t s) {
  if (dst_rows == 0 || dst_cols == 0) return;
  const dim3 grid(ceil_div(dst_cols, kTile), std::min<unsigned>(ceil_div(dst_rows, kTile), 65535u));
  relayout_kernel<unsigned, SplitTf32><<<grid, dim3(kTile, kRows), 0, s>>>(
      reinterpret_cast<const unsigned*>(src), rows, cols, lds, transposed ? 1 : 0,
      reinterpret_cast<unsigned*>(dst), dst_rows, dst_cols, ldd, SplitTf32{small_rows});
  KAFEL_CUDA_CHECK_LAUNCH("3xtf32 split");
}

}  // namespace kafel::cuda
