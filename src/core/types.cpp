// Names, parsing and conversions for element types, layouts and transpose flags.
// The half conversions are exact IEEE binary16 with round-to-nearest-even.
#include "kafel/types.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>

#include "kafel/error.hpp"

namespace kafel {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string_view to_string(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::i32:
      return "i32";
    case DType::f16:
      return "f16";
  }
  return "?";
}

std::string_view to_string(Layout l) {
  return l == Layout::RowMajor ? "row" : "col";
}
std::string_view to_string(Op op) {
  return op == Op::N ? "N" : "T";
}

std::string_view to_string(SampleLayout l) {
  return l == SampleLayout::Planar ? "planar" : "interleaved";
}

SampleLayout parse_sample_layout(std::string_view s) {
  const std::string v = lower(s);
  if (v == "planar" || v == "channel-major" || v == "cxn") return SampleLayout::Planar;
  if (v == "interleaved" || v == "sample-major" || v == "nxc") return SampleLayout::Interleaved;
  throw InvalidArgument("unknown sample layout '" + std::string(s) +
                        "' (use planar or interleaved)");
}

DType parse_dtype(std::string_view s) {
  const std::string v = lower(s);
  if (v == "f32" || v == "float" || v == "float32" || v == "s" || v == "single") return DType::f32;
  if (v == "f64" || v == "double" || v == "float64" || v == "d") return DType::f64;
  if (v == "i32" || v == "int" || v == "int32") return DType::i32;
  if (v == "f16" || v == "half" || v == "float16" || v == "h") return DType::f16;
  throw InvalidArgument("unknown element type '" + std::string(s) + "' (use f32, f64, i32 or f16)");
}

Layout parse_layout(std::string_view s) {
  const std::string v = lower(s);
  if (v == "row" || v == "row-major" || v == "rowmajor" || v == "c") return Layout::RowMajor;
  if (v == "col" || v == "column" || v == "col-major" || v == "column-major" || v == "colmajor" ||
      v == "f")
    return Layout::ColMajor;
  throw InvalidArgument("unknown layout '" + std::string(s) + "' (use row or col)");
}

Op parse_op(std::string_view s) {
  const std::string v = lower(s);
  if (v == "n" || v == "no" || v == "none") return Op::N;
  if (v == "t" || v == "trans" || v == "transpose") return Op::T;
  throw InvalidArgument("unknown transpose flag '" + std::string(s) + "' (use N or T)");
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64:
      return 8;
    case DType::f16:
      return 2;
    case DType::f32:
    case DType::i32:
      return 4;
  }
  return 4;
}

bool is_floating(DType t) {
  return t != DType::i32;
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f32:
      return std::ldexp(1.0, -24);
    case DType::f64:
      return std::ldexp(1.0, -53);
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::i32:
      return 0.0;
  }
  return 0.0;
}

std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN; keep NaNs quiet and non-zero.
    return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to Inf
  if (abs < 0x38800000u) {                        // below 2^-14: subnormal half or zero
    if (abs < 0x33000000u) return sign;           // below half of the smallest subnormal
    const std::uint32_t mant = (abs & 0x007fffffu) | 0x00800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    const std::uint32_t half = 1u << (shift - 1);
    std::uint32_t q = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    if (rest > half || (rest == half && (q & 1u))) ++q;
    return sign | static_cast<std::uint16_t>(q);
  }
  // Normal: rebias exponent, round 13 dropped bits to nearest even (carry may bump exponent).
  std::uint32_t h = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return sign | static_cast<std::uint16_t>(h);
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

double load_as_double(DType t, const void* p) {
  switch (t) {
    case DType::f32:
      return *static_cast<const float*>(p);
    case DType::f64:
      return *static_cast<const double*>(p);
    case DType::i32:
      return *static_cast<const std::int32_t*>(p);
    case DType::f16:
      return half_to_float(*static_cast<const std::uint16_t*>(p));
  }
  return 0.0;
}

void store_from_double(DType t, void* p, double v) {
  switch (t) {
    case DType::f32:
      *static_cast<float*>(p) = static_cast<float>(v);
      return;
    case DType::f64:
      *static_cast<double*>(p) = v;
      return;
    case DType::i32: {
      // Wrap modulo 2^32 like int32 kernels do; NaN/out-of-range doubles map to 0.
      const double r = std::nearbyint(v);
      std::int64_t w = 0;
      if (std::isfinite(r) && std::fabs(r) < 9.2e18) w = static_cast<std::int64_t>(r);
      *static_cast<std::int32_t*>(p) = static_cast<std::int32_t>(static_cast<std::uint32_t>(w));
      return;
    }
    case DType::f16:
      *static_cast<std::uint16_t*>(p) = float_to_half(static_cast<float>(v));
      return;
  }
}

}  // namespace kafel
