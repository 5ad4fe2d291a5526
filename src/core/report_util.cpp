// Number and size formatting and timing statistics shared by the library's reports and the
// CLI, so every table and message prints the same way.
#include "kafel/bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kafel {

std::string format_num(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  for (; bytes >= 1024.0 && u < 6; ++u) bytes /= 1024.0;
  return format_num(u == 0 ? "%.0f" : "%.1f", bytes) + " " + units[u];
}

double peak_share(double measured, double peak) {
  if (!(peak > 0) || !(measured >= 0) || measured > peak) return 0;
  return 100.0 * measured / peak;
}

std::string peak_share_text(double measured, double peak) {
  const double pct = peak_share(measured, peak);
  return pct > 0 ? format_num("%.1f %%", pct) : "-";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::ceil(q * double(v.size())));
  return v[std::clamp<std::size_t>(k, 1, v.size()) - 1];
}

}  // namespace kafel
