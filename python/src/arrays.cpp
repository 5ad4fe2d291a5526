// Array operands for the Python binding: DLPack / buffer-protocol arrays mapped onto kafel's
// MatrixView (row- or column-major with a leading dimension), copied once when they do not map.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "binding.hpp"
#include "kafel/error.hpp"

namespace kafel::py {
namespace {

using Code = nb::dlpack::dtype_code;

struct DlpackType {
  DType type;
  Code code;
  std::uint8_t bits;
  const char* numpy;
};

// The element types a Python caller can hand kafel, with their DLPack codes and NumPy names.
constexpr DlpackType kTypes[] = {
    {DType::f32, Code::Float, 32, "float32"},
    {DType::f64, Code::Float, 64, "float64"},
    {DType::f16, Code::Float, 16, "float16"},
    {DType::bf16, Code::Bfloat, 16, "bfloat16"},
    {DType::i32, Code::Int, 32, "int32"},
    {DType::i8, Code::Int, 8, "int8"},
    {DType::e4m3, Code::Float8_E4M3FN, 8, "float8_e4m3fn"},
    {DType::e5m2, Code::Float8_E5M2, 8, "float8_e5m2"},
};

constexpr const char* kTakenTypes =
    "(float32, float64, float16, bfloat16, int32, int8, float8_e4m3fn, float8_e5m2)";

// str(x) of a Python object.
std::string text_of(nb::handle x) {
  nb::str s = nb::steal<nb::str>(PyObject_Str(x.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  return s.c_str();
}

std::string describe(nb::dlpack::dtype t) {
  static const char* kNames[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const std::string kind = t.code < 7 ? kNames[t.code] : "dlpack code " + std::to_string(t.code);
  return kind + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

std::string shape_text(const nb::ndarray<nb::ro>& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

MatrixView tight_copy(const MatrixView& like, const void* src, std::int64_t s0, std::int64_t s1,
                      Matrix& owner) {
  owner = Matrix(like.dtype, like.rows, like.cols);
  const std::size_t es = dtype_size(like.dtype);
  const char* base = static_cast<const char*>(src);
  char* dst = static_cast<char*>(owner.data());
  for (std::int64_t i = 0; i < like.rows; ++i)
    for (std::int64_t j = 0; j < like.cols; ++j)
      std::memcpy(dst + (i * like.cols + j) * es, base + (i * s0 + j * s1) * std::int64_t(es), es);
  return owner.view();
}

}  // namespace

DType dtype_from_dlpack(nb::dlpack::dtype t, const char* what) {
  for (const DlpackType& k : kTypes)
    if (t.code == std::uint8_t(k.code) && t.bits == k.bits && t.lanes == 1) return k.type;
  throw InvalidArgument(std::string(what) + " has element type " + describe(t) +
                        ", which kafel does not take " + kTakenTypes);
}

nb::dlpack::dtype dlpack_from_dtype(DType t) {
  for (const DlpackType& k : kTypes)
    if (k.type == t) return {std::uint8_t(k.code), k.bits, 1};
  throw Unsupported("no array type for kafel's " + std::string(to_string(t)));
}

std::string numpy_name(DType t) {
  for (const DlpackType& k : kTypes)
    if (k.type == t) return k.numpy;
  return std::string(to_string(t));
}

std::optional<MatrixView> strided_view(DType t, void* data, std::int64_t rows, std::int64_t cols,
                                       std::int64_t s0, std::int64_t s1) {
  // A dimension of extent <= 1 never steps, so its stride is free.
  const bool one_row = rows <= 1, one_col = cols <= 1;
  const std::int64_t tight_row = cols > 1 ? cols : 1, tight_col = rows > 1 ? rows : 1;
  if ((s1 == 1 || one_col) && (one_row || s0 >= tight_row))
    return MatrixView{t, data, rows, cols, one_row ? tight_row : s0, Layout::RowMajor};
  if ((s0 == 1 || one_row) && (one_col || s1 >= tight_col))
    return MatrixView{t, data, rows, cols, one_col ? tight_col : s1, Layout::ColMajor};
  return std::nullopt;
}

std::pair<const char*, const char*> Operand::extent() const {
  const auto* base = static_cast<const char*>(array.data());
  const std::int64_t es = std::int64_t(dtype_size(view.dtype));
  if (view.rows == 0 || view.cols == 0) return {base, base};
  std::int64_t lo = 0, hi = 0;
  for (auto [extent, stride] : {std::pair{view.rows, stride0}, {view.cols, stride1}}) {
    const std::int64_t reach = (extent - 1) * stride;
    (reach < 0 ? lo : hi) += reach;
  }
  return {base + lo * es, base + (hi + 1) * es};
}

Operand to_operand(nb::handle obj, const char* what, bool copy_if_needed) {
  nb::ndarray<nb::ro> array;
  if (!nb::try_cast(obj, array)) {
    // An array whose element type has no DLPack / buffer code (float128, object ...).
    if (nb::hasattr(obj, "dtype") && nb::hasattr(obj, "shape"))
      throw InvalidArgument(std::string(what) + " has element type " + text_of(obj.attr("dtype")) +
                            ", which kafel does not take " + kTakenTypes);
    throw InvalidArgument(std::string(what) + " is a " + nb::type_name(obj.type()).c_str() +
                          ", not an array (numpy, DLPack or buffer protocol)");
  }
  return to_operand(std::move(array), what, copy_if_needed);
}

Operand to_operand(nb::ndarray<nb::ro> array, const char* what, bool copy_if_needed) {
  Operand op;
  op.array = std::move(array);
  const auto& a = op.array;
  if (a.ndim() != 2)
    throw InvalidArgument(std::string(what) + " must be a 2-D array, got " +
                          std::to_string(a.ndim()) + "-D with shape " + shape_text(a));
  const DType t = dtype_from_dlpack(a.dtype(), what);
  const auto rows = std::int64_t(a.shape(0)), cols = std::int64_t(a.shape(1));
  op.stride0 = a.stride(0);
  op.stride1 = a.stride(1);
  void* data = const_cast<void*>(a.data());
  if (auto v = strided_view(t, data, rows, cols, op.stride0, op.stride1)) {
    op.view = *v;
    return op;
  }
  if (!copy_if_needed)
    throw InvalidArgument(std::string(what) + " has strides (" + std::to_string(op.stride0) + ", " +
                          std::to_string(op.stride1) +
                          ") that map to no row- or column-major layout; make it contiguous");
  op.view = tight_copy(MatrixView{t, data, rows, cols, cols, Layout::RowMajor}, data, op.stride0,
                       op.stride1, op.copy);
  return op;
}

void copy_back(const MatrixView& src, const Operand& dst) {
  Matrix staged;
  const MatrixView* from = &src;
  MatrixView converted;
  if (src.dtype != dst.view.dtype) {
    staged = Matrix(dst.view.dtype, src.rows, src.cols);
    copy(src, staged.view());
    converted = staged.view();
    from = &converted;
  }
  const std::size_t es = dtype_size(dst.view.dtype);
  char* base = static_cast<char*>(const_cast<void*>(dst.array.data()));
  for (std::int64_t i = 0; i < from->rows; ++i)
    for (std::int64_t j = 0; j < from->cols; ++j)
      std::memcpy(base + (i * dst.stride0 + j * dst.stride1) * std::int64_t(es),
                  from->address(i, j), es);
}

std::pair<nb::object, MatrixView> new_host_matrix(DType t, std::int64_t rows, std::int64_t cols) {
  const std::size_t es = dtype_size(t);
  const std::size_t bytes = std::size_t(rows) * std::size_t(cols) * es;
  // 64-byte aligned like kafel::Matrix; aligned_alloc needs a multiple of the alignment.
  void* data = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!data)
    throw OutOfMemory("cannot allocate a " + std::to_string(rows) + "x" + std::to_string(cols) +
                      " result in host memory");
  nb::capsule owner(data, [](void* p) noexcept { std::free(p); });
  const std::size_t shape[2] = {std::size_t(rows), std::size_t(cols)};
  const MatrixView view{t, data, rows, cols, cols > 0 ? cols : 1, Layout::RowMajor};
  if (t == DType::bf16 || t == DType::e4m3 || t == DType::e5m2)  // NumPy has no such type
    return {nb::ndarray<>(data, 2, shape, owner, nullptr, dlpack_from_dtype(t)).cast(), view};
  return {nb::ndarray<nb::numpy>(data, 2, shape, owner, nullptr, dlpack_from_dtype(t)).cast(),
          view};
}

const Device& cached_device(const std::string& spec) {
  static std::map<std::string, Device> cache;
  static std::mutex lock;
  const char* env = std::getenv("KAFEL_DEVICE");
  const std::string key = spec.empty() ? "\x01" + std::string(env ? env : "") : spec;
  std::lock_guard guard(lock);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, select_device(spec)).first;
  return it->second;
}

}  // namespace kafel::py
