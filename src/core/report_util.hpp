// Small helpers every report uses (the bench tables, `kafel` output, error messages): number
// and byte-size formatting, the median and nearest-rank quantiles of timings.
#pragma once

#include <string>
#include <vector>

namespace kafel {

// printf-style formatting of one number ("%.3g", "%.1f GFLOP/s") without iostream state.
std::string format_num(const char* format, double v);
// "512 B", "1.5 GB": binary units, one decimal above bytes.
std::string human_bytes(double bytes);

// The median of a sample (the mean of the two middle values when the count is even); 0 for an
// empty one.
double median(std::vector<double> v);
// The q-quantile by nearest rank (q = 0.5: the lower middle value, q = 0.99: p99); 0 for an
// empty sample.
double quantile(std::vector<double> v, double q);

}  // namespace kafel
