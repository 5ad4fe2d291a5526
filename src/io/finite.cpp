// The NaN / infinity check applied to data read from files before it is computed with.
// A NaN in an input would otherwise surface as a confusing verification failure.
#include <cmath>

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

}  // namespace kafel
