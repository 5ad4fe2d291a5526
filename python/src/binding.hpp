// Shared pieces of the nanobind module kafel._kafel: array <-> MatrixView conversion, device
// lookup and the registration functions of each part (errors, devices, gemm, covariance).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kafel/device.hpp"
#include "kafel/matrix.hpp"
#include "kafel/types.hpp"

namespace kafel::py {

namespace nb = nanobind;

// DLPack device types kafel reads directly.
inline constexpr int kDlCpu = 1, kDlCuda = 2, kDlCudaHost = 3, kDlCudaManaged = 13;

// kafel's element type for a DLPack dtype; InvalidArgument naming `what` for other types.
DType dtype_from_dlpack(nb::dlpack::dtype t, const char* what);
nb::dlpack::dtype dlpack_from_dtype(DType t);
// The NumPy-style name of a type ("float32", "bfloat16", "int8").
std::string numpy_name(DType t);

// An array operand seen as a MatrixView. When its strides map to no row- or column-major view
// with a leading dimension (negative, zero or overlapping strides), `copy` holds a tight
// row-major copy and the view points at it.
struct Operand {
  MatrixView view;
  Matrix copy;
  nb::ndarray<nb::ro> array;              // keeps the source alive
  std::int64_t stride0 = 0, stride1 = 0;  // the source's strides, in elements

  bool copied() const { return copy.data() != nullptr; }
  // Bytes [first, last) the source spans, for overlap checks.
  std::pair<const char*, const char*> extent() const;
};

// The array `obj` as a 2-D operand. Throws InvalidArgument (naming `what`) when it is not an
// array, not 2-D or of a type kafel has no name for. `copy_if_needed` false: unmappable
// strides throw InvalidArgument instead of copying (device memory, which the host cannot read).
Operand to_operand(nb::handle obj, const char* what, bool copy_if_needed = true);
// The same for an array already imported (one DLPack import per operand and call).
Operand to_operand(nb::ndarray<nb::ro> array, const char* what, bool copy_if_needed = true);
// The view of a rows x cols array of `t` at `data` with element strides s0, s1, if one exists.
std::optional<MatrixView> strided_view(DType t, void* data, std::int64_t rows, std::int64_t cols,
                                       std::int64_t s0, std::int64_t s1);
// Writes `src` (any view) into the array `dst` was made from, element by element, through
// the source's strides (used after computing into a copy).
void copy_back(const MatrixView& src, const Operand& dst);
// A new C-ordered host array of `t` (NumPy, or a plain DLPack-capable array for bfloat16
// and other types NumPy lacks) and its view.
std::pair<nb::object, MatrixView> new_host_matrix(DType t, std::int64_t rows, std::int64_t cols);

// The device named `spec` ("" = $KAFEL_DEVICE, else "cpu"), looked up once per spec: listing
// devices probes every runtime, which is far slower than a GEMM of 64x64.
const Device& cached_device(const std::string& spec);

void bind_errors(nb::module_& m);
void bind_devices(nb::module_& m);
void bind_gemm(nb::module_& m);
void bind_cov(nb::module_& m);

}  // namespace kafel::py
