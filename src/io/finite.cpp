// The checks applied to data read from files before it is computed with: NaN / infinity, and
// values the requested storage type cannot hold (they would surface as a "verification failed").
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel {

void check_finite(const MatrixView& m, const std::string& what) {
  if (!is_floating(m.dtype)) return;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) {
      double v = m.get(i, j);
      if (std::isfinite(v)) continue;
      throw InvalidArgument(what + " holds " + (std::isnan(v) ? "NaN" : "an infinity") + " at (" +
                            std::to_string(i) + ", " + std::to_string(j) + ")");
    }
  }
}

namespace {

std::string element(const std::string& what, std::int64_t i, std::int64_t j, double v) {
  char buf[64];  // the shortest of 15 or 17 digits that reads back as v
  std::snprintf(buf, sizeof buf, "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  return what + " (" + std::to_string(i) + ", " + std::to_string(j) + ") = " + buf;
}

// "" when `v` converts to `target` without leaving its range or losing its integer value.
std::string conversion_problem(double v, DType target) {
  const TypeInfo& t = type_info(target);
  if (std::isnan(v) || std::isinf(v)) return "";  // check_finite's business
  if (t.kind == TypeKind::integer) {
    if (v != std::nearbyint(v)) return "is not an integer";
    const double lo = -t.max_value - 1.0;
    if (v < lo || v > t.max_value)
      return "is outside the range of " + std::string(t.name) + " (" +
             std::to_string(static_cast<long long>(lo)) + " .. " +
             std::to_string(static_cast<long long>(t.max_value)) + ")";
    return "";
  }
  if (!std::isfinite(round_to(target, v))) {
    char max[32];
    std::snprintf(max, sizeof max, "%g", t.max_value);
    return "overflows " + std::string(t.name) + " (largest finite value " + max + ")";
  }
  return "";
}

}  // namespace

void check_convertible(const MatrixView& m, DType target, const std::string& what) {
  // Between real and complex nothing converts (copy refuses it); complex to complex converts
  // each half, checked against the target's component type (cf64 1e300 -> cf32 is refused).
  if (is_complex(target) != is_complex(m.dtype) || m.dtype == target) return;
  const bool complex = is_complex(target);
  const DType from = type_info(m.dtype).component, to = type_info(target).component;
  if (is_complex(from) || is_complex(to)) return;  // ci16 has no real half type in the table
  const std::size_t half = dtype_size(from);
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (std::int64_t j = 0; j < m.cols; ++j)
      for (int part = 0; part < (complex ? 2 : 1); ++part) {
        const auto* p = static_cast<const char*>(m.address(i, j)) + std::size_t(part) * half;
        const double v = load_as_double(from, p);
        if (const std::string why = conversion_problem(v, to); !why.empty())
          throw InvalidArgument("cannot convert " + element(what, i, j, v) +
                                (complex ? part ? " (im)" : " (re)" : "") + " to " +
                                std::string(to_string(target)) + ": it " + why);
      }
}

}  // namespace kafel
