// The nanobind extension module kafel._kafel: errors, devices, GEMM and covariance. The public
// API, array-kind handling and docs live in the Python package around it (python/kafel).
#include "binding.hpp"
#include "kafel/version.hpp"

NB_MODULE(_kafel, m) {
  m.doc() = "kafel's C++ library, bound with nanobind (use the kafel package, not this module).";
  m.attr("__version__") = KAFEL_VERSION;
#if defined(KAFEL_WITH_CUDA)
  m.attr("with_cuda") = true;
#else
  m.attr("with_cuda") = false;
#endif
#if defined(KAFEL_WITH_OPENCL)
  m.attr("with_opencl") = true;
#else
  m.attr("with_opencl") = false;
#endif
  kafel::py::bind_errors(m);
  kafel::py::bind_devices(m);
  kafel::py::bind_gemm(m);
  kafel::py::bind_cov(m);
}
