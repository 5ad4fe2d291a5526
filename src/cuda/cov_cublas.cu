// cuBLAS comparison for covariance: channel means (double) and centring on the device, then
// cublasSsyrk (float, sums over all N in float) or cublasDsyrk (centred data in double).

#include <memory>
#include <string>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/registry.hpp"
#include "cuda/cublas_api.hpp"
#include "cuda/runtime.hpp"

namespace kafel::cuda {

namespace {

constexpr int kThreads = 256;

void check_blas(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(std::string(what) + " failed: cuBLAS status " + std::to_string(int(st)));
}

// mean[c] over n samples, one block per channel, double sums in a fixed order.
__global__ void channel_means(const float* __restrict__ x, long long n, long long channels,
                              int planar, double* __restrict__ mean) {
  __shared__ double red[kThreads];
  const long long c = blockIdx.x;
  double s = 0;
  for (long long i = threadIdx.x; i < n; i += kThreads)
    s += planar ? x[c * n + i] : x[i * channels + c];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) mean[c] = red[0] / double(n);
}

// y = x - mean[channel of the element], same layout, as T (float or double).
template <class T>
__global__ void centre(const float* __restrict__ x, long long n, long long channels, int planar,
                       const double* __restrict__ mean, T* __restrict__ y) {
  const long long total = n * channels, step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += step) {
    const long long c = planar ? i / n : i % channels;
    y[i] = static_cast<T>(static_cast<double>(x[i]) - mean[c]);
  }
}

template <class T>
class CublasCovPlan : public CovPlan {
 public:
  CublasCovPlan(const Device& dev, const CovDesc& d)
      : ordinal_(ordinal_of(dev)), guard_(ordinal_), desc_(d) {
    // Buffers first: an OutOfMemory from them must not leak a created handle.
    x_ = DeviceBuffer(std::size_t(d.min_bytes()), "covariance samples");
    y_ = DeviceBuffer(std::size_t(d.channels * d.samples) * sizeof(T), "centred samples");
    mean_ = DeviceBuffer(std::size_t(d.channels) * 8, "means");
    c_ = DeviceBuffer(std::size_t(d.channels * d.channels) * sizeof(T), "covariance");
    check_blas(cublas_api().Create(&handle_), "cublasCreate");
    if (cublas_api().SetStream(handle_, stream_) != CUBLAS_STATUS_SUCCESS) {
      cublas_api().Destroy(handle_);
      throw DeviceError("cublasSetStream failed for the covariance baseline");
    }
  }
  ~CublasCovPlan() override { cublas_api().Destroy(handle_); }

  void load(const CovArgs& a, int) override {
    DeviceGuard g(ordinal_);  // another plan may have switched the current device
    const bool planar = desc_.layout == SampleLayout::Planar;
    const std::int64_t rows = planar ? desc_.channels : desc_.samples;
    const std::int64_t cols = planar ? desc_.samples : desc_.channels;
    std::vector<float> packed(std::size_t(rows * cols));
    for (std::int64_t r = 0; r < rows; ++r)
      std::copy(a.f32() + r * a.stride, a.f32() + r * a.stride + cols, &packed[r * cols]);
    x_.upload(packed.data(), packed.size() * 4);
  }

  double run(int) override {
    DeviceGuard g(ordinal_);  // another plan may have switched the current device
    const long long n = desc_.samples, ch = desc_.channels;
    const int planar = desc_.layout == SampleLayout::Planar;
    EventTimer t;
    t.start(stream_);
    channel_means<<<int(ch), kThreads, 0, stream_>>>(x_.as<float>(), n, ch, planar,
                                                     mean_.as<double>());
    KAFEL_CUDA_CHECK_LAUNCH("channel_means");
    centre<T><<<1024, kThreads, 0, stream_>>>(x_.as<float>(), n, ch, planar, mean_.as<double>(),
                                              y_.as<T>());
    KAFEL_CUDA_CHECK_LAUNCH("centre");
    // Column-major view: planar C x N row-major is N x C (lda N): C = A^T A (op T).
    // Interleaved N x C row-major is C x N (lda C): C = A A^T (op N).
    const T one = 1, zero = 0;
    const cublasOperation_t op = planar ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = planar ? int(n) : int(ch);
    if constexpr (sizeof(T) == 4)
      check_blas(cublas_api().Ssyrk(handle_, CUBLAS_FILL_MODE_LOWER, op, int(ch), int(n), &one,
                                    y_.as<T>(), lda, &zero, c_.as<T>(), int(ch)),
                 "cublasSsyrk");
    else
      check_blas(cublas_api().Dsyrk(handle_, CUBLAS_FILL_MODE_LOWER, op, int(ch), int(n), &one,
                                    y_.as<T>(), lda, &zero, c_.as<T>(), int(ch)),
                 "cublasDsyrk");
    t.stop(stream_);
    return t.ms();
  }

  void fetch(CovMoments& out) override {
    DeviceGuard g(ordinal_);  // another plan may have switched the current device
    stream_.synchronize();
    const auto c = std::size_t(desc_.channels);
    std::vector<T> m(c * c);
    c_.download(m.data(), m.size() * sizeof(T));
    out.reset(desc_);
    mean_.download(out.mean.data(), c * 8);
    for (std::size_t j = 0; j < c; ++j)  // column-major lower triangle: (i, j), i >= j at i + j*c
      for (std::size_t i = j; i < c; ++i)
        out.comoment[i * c + j] = out.comoment[j * c + i] = m[i + j * c];
  }

  std::string timer() const override { return "cuda-events"; }

 private:
  int ordinal_;
  DeviceGuard guard_;
  CovDesc desc_;
  Stream stream_;
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer x_, y_, mean_, c_;
};

template <class T>
CovKernel cublas_kernel(const char* name, const char* summary, int rung) {
  CovKernel k;
  k.name = name;
  k.summary = summary;
  k.rung = rung;
  k.sample_types = {DType::f32};
  k.baseline = true;
  k.can_implement = [](const Device&, const CovDesc& d, const Params&) -> std::string {
    return d.batch == 1 ? "" : "the cuBLAS baselines take one block";
  };
  k.make_plan = [name](const Device& dev, const CovDesc& d,
                       const Params&) -> std::unique_ptr<CovPlan> {
    if (d.samples > 2147483647 || d.channels * d.samples > (1ll << 40))
      throw Unsupported(std::string(name) + ": cuBLAS takes 32-bit sizes");
    return std::make_unique<CublasCovPlan<T>>(dev, d);
  };
  return k;
}

// Baselines sort after the ladder.
const Register ssyrk{cublas_kernel<float>(
    "cuda.cublas-ssyrk",
    "cuBLAS baseline: means + centring kernels, then cublasSsyrk (float sums over N)", 100)};
const Register dsyrk{cublas_kernel<double>(
    "cuda.cublas-dsyrk", "cuBLAS baseline: means + centring to double, then cublasDsyrk", 101)};

}  // namespace
}  // namespace kafel::cuda
