// Host-side packing of covariance samples for the CUDA kernels that copy whole chunks of every
// channel row (cov_pack.hpp).
#include "cuda/cov_pack.hpp"

#include <algorithm>
#include <cstring>

#include "kafel/error.hpp"

namespace kafel::cuda {

void pack_padded_planar(const CovArgs& a, std::int64_t pitch, std::vector<char>& packed) {
  const CovDesc& d = a.desc;
  const SamplesView v = a.view();
  const int comps = d.complex() ? 2 : 1;
  const std::int64_t row = d.samples * comps;
  if (pitch < row) throw InvalidArgument("pack_padded_planar: pitch below a channel row");
  packed.assign(std::size_t(d.batch * d.channels * pitch) * sizeof(float), 0);
  auto* dst = reinterpret_cast<float*>(packed.data());
  const auto* in = static_cast<const float*>(a.data);
  for (std::int64_t b = 0; b < d.batch; ++b) {
    float* out = dst + b * d.channels * pitch;
    if (d.layout == SampleLayout::Planar) {
      for (std::int64_t c = 0; c < d.channels; ++c)
        std::memcpy(out + c * pitch, in + v.offset(c, 0, b) * comps,
                    std::size_t(row) * sizeof(float));
      continue;
    }
    // Sample-major input read in order, written to one running position per channel row.
    for (std::int64_t n = 0; n < d.samples; ++n) {
      const float* sample = in + v.offset(0, n, b) * comps;
      for (std::int64_t c = 0; c < d.channels; ++c)
        for (int k = 0; k < comps; ++k) out[c * pitch + n * comps + k] = sample[c * comps + k];
    }
  }
}

const void* tight_samples(const CovArgs& a, std::vector<char>& packed) {
  const CovDesc& d = a.desc;
  const SamplesView v = a.view();
  const bool planar = d.layout == SampleLayout::Planar;
  const std::int64_t lines = planar ? d.channels : d.samples;
  const std::int64_t len = planar ? d.samples : d.channels;
  const auto es = static_cast<std::int64_t>(dtype_size(d.type));
  if (v.tight_stride() == len && (d.batch == 1 || v.tight_batch_stride() == lines * len))
    return a.data;
  packed.resize(std::size_t(d.min_bytes()));
  const auto* in = static_cast<const char*>(a.data);
  for (std::int64_t b = 0; b < d.batch; ++b)
    for (std::int64_t l = 0; l < lines; ++l)
      std::memcpy(&packed[std::size_t((b * lines + l) * len * es)],
                  in + (b * v.tight_batch_stride() + l * v.tight_stride()) * es,
                  std::size_t(len * es));
  return packed.data();
}

std::vector<DeviceBuffer> upload_slots(const void* src, std::size_t bytes, int slots) {
  std::vector<DeviceBuffer> x;
  for (int s = 0; s < std::max(1, slots); ++s) {
    x.emplace_back(bytes, "covariance samples");
    x.back().upload(src, bytes);
  }
  return x;
}

}  // namespace kafel::cuda
