// The article's serial rung: channel means, then one sweep over the samples per channel pair
// of the lower triangle with a double accumulator (55 sweeps for 10 channels). Unlike the
// article the mean stays in double: a float mean of data around 1e4 is off by up to 5e-4,
// which costs ~1e-5 relative error on short blocks of the offset signal.
#include "cpu/cov_host_plan.hpp"

namespace kafel::cpu {

void serial_moments(const CovArgs& a, CovMoments& out) {
  const SamplesView v = a.view();
  out.reset(a.desc);
  const auto c = static_cast<std::size_t>(v.channels);
  std::vector<double> mean(c);
  for (std::size_t ch = 0; ch < c; ++ch) {
    double reg = 0;
    for (std::int64_t n = 0; n < v.samples; ++n) reg += v.re(ch, n);
    mean[ch] = reg / static_cast<double>(v.samples);
  }
  out.mean.assign(mean.begin(), mean.end());
  out.comoment.assign(c * c, 0.0);
  for (std::size_t i = 0; i < c; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double reg = 0;
      for (std::int64_t n = 0; n < v.samples; ++n)
        reg += (v.re(i, n) - mean[i]) * (v.re(j, n) - mean[j]);
      out.comoment[i * c + j] = out.comoment[j * c + i] = reg;
    }
}

}  // namespace kafel::cpu
