// The type table (one row per element type), the compute-mode table, GEMM element roles, and
// the exact conversions between doubles and every storage format (IEEE and 8-bit floats).
#include "kafel/types.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
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

// True when `word` is `name` or one of the comma-separated `aliases` (case-insensitive).
bool spelled(std::string_view word, const char* name, const char* aliases) {
  const std::string w = lower(word);
  if (w == lower(name)) return true;
  std::string_view rest = aliases;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (w == lower(rest.substr(0, comma))) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

// ---- small floating formats -------------------------------------------------------------------
// A binary format with `man` stored significand bits, exponent bias `bias` and `exp` exponent
// bits. IEEE-style formats reserve the top exponent for inf/NaN; e4m3 (OCP "FN") has no
// infinity and only S.1111.111 as NaN, so its top exponent holds normal numbers.
struct MiniFloat {
  int exp, man, bias;
  bool ieee;
  double max_value;
  int emin() const { return 1 - bias; }
};

constexpr MiniFloat kF16{5, 10, 15, true, 65504.0};
constexpr MiniFloat kBf16{8, 7, 127, true, 3.38953138925153547590e38};
constexpr MiniFloat kE4m3{4, 3, 7, false, 448.0};
constexpr MiniFloat kE5m2{5, 2, 15, true, 57344.0};

// `v` rounded to the nearest value of the format (ties to even); overflow to +-inf (NaN where
// the format has no infinity). Exact: v / quantum is a power-of-two scaling.
double round_mini(const MiniFloat& f, double v) {
  if (std::isnan(v)) return v;
  const double a = std::fabs(v);
  if (a == 0) return v;
  if (std::isinf(a)) return f.ieee ? v : std::numeric_limits<double>::quiet_NaN();
  int e = 0;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1): the leading bit has exponent e - 1
  const int lead = std::max(e - 1, f.emin());
  const double q = std::ldexp(1.0, lead - f.man);
  const double r = std::nearbyint(a / q) * q;
  if (r > f.max_value)
    return f.ieee ? std::copysign(INFINITY, v) : std::numeric_limits<double>::quiet_NaN();
  return std::copysign(r, v);
}

std::uint32_t encode_mini(const MiniFloat& f, double v) {
  const double r = round_mini(f, v);
  const std::uint32_t sign = std::signbit(r) ? 1u << (f.exp + f.man) : 0u;
  const std::uint32_t top = (1u << f.exp) - 1;
  if (std::isnan(r)) return sign | (top << f.man) | ((1u << f.man) - 1);  // quiet, all ones
  if (std::isinf(r)) return sign | (top << f.man);
  const double a = std::fabs(r);
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);
  const int lead = e - 1;
  if (lead < f.emin())  // subnormal: a = man * 2^(emin - man)
    return sign | static_cast<std::uint32_t>(std::ldexp(a, f.man - f.emin()));
  const auto mant = static_cast<std::uint32_t>(std::ldexp(a, f.man - lead)) & ((1u << f.man) - 1);
  return sign | (static_cast<std::uint32_t>(lead + f.bias) << f.man) | mant;
}

double decode_mini(const MiniFloat& f, std::uint32_t bits) {
  const bool neg = (bits >> (f.exp + f.man)) & 1u;
  const std::uint32_t e = (bits >> f.man) & ((1u << f.exp) - 1);
  const std::uint32_t m = bits & ((1u << f.man) - 1);
  const std::uint32_t top = (1u << f.exp) - 1;
  double v;
  if (f.ieee && e == top) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  } else if (!f.ieee && e == top && m == (1u << f.man) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(double(m), f.emin() - f.man);
  } else {
    v = std::ldexp(1.0 + std::ldexp(double(m), -f.man), int(e) - f.bias);
  }
  return neg ? -v : v;
}

// Integers: round to nearest, wrap modulo 2^bits like the integer kernels (NaN and values far
// outside the int64 range map to 0). Range checks belong to the caller (check_conversion).
template <class I>
void store_int(void* p, double v) {
  const double r = std::nearbyint(v);
  std::int64_t w = 0;
  if (std::isfinite(r) && std::fabs(r) < 9.2e18) w = static_cast<std::int64_t>(r);
  using U = std::make_unsigned_t<I>;
  const auto u = static_cast<U>(static_cast<std::uint64_t>(w));
  std::memcpy(p, &u, sizeof u);
}

template <class T>
T read(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void write(void* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

double load_f32(const void* p) {
  return read<float>(p);
}
void store_f32(void* p, double v) {
  write(p, static_cast<float>(v));
}
double load_f64(const void* p) {
  return read<double>(p);
}
void store_f64(void* p, double v) {
  write(p, v);
}
double load_i32(const void* p) {
  return read<std::int32_t>(p);
}
void store_i32(void* p, double v) {
  store_int<std::int32_t>(p, v);
}
double load_i8(const void* p) {
  return read<std::int8_t>(p);
}
void store_i8(void* p, double v) {
  store_int<std::int8_t>(p, v);
}
double load_f16(const void* p) {
  return half_to_float(read<std::uint16_t>(p));
}
void store_f16(void* p, double v) {
  write(p, static_cast<std::uint16_t>(encode_mini(kF16, v)));
}
double load_bf16(const void* p) {
  return bf16_to_float(read<std::uint16_t>(p));
}
void store_bf16(void* p, double v) {
  write(p, static_cast<std::uint16_t>(encode_mini(kBf16, v)));
}
double load_e4m3(const void* p) {
  return decode_mini(kE4m3, read<std::uint8_t>(p));
}
void store_e4m3(void* p, double v) {
  write(p, static_cast<std::uint8_t>(encode_mini(kE4m3, v)));
}
double load_e5m2(const void* p) {
  return decode_mini(kE5m2, read<std::uint8_t>(p));
}
void store_e5m2(void* p, double v) {
  write(p, static_cast<std::uint8_t>(encode_mini(kE5m2, v)));
}

constexpr double kF32Max = 3.40282346638528859812e38;
constexpr double kF64Max = std::numeric_limits<double>::max();
using K = TypeKind;

// The type table. Order = the DType enum.
const std::vector<TypeInfo> kTypes = {
    {DType::f32, "f32", "float,float32,s,single", 4, K::floating, 24, kF32Max, "<f4", DType::f32,
     "IEEE binary32", load_f32, store_f32},
    {DType::f64, "f64", "double,float64,d", 8, K::floating, 53, kF64Max, "<f8", DType::f64,
     "IEEE binary64", load_f64, store_f64},
    {DType::i32, "i32", "int,int32", 4, K::integer, 31, 2147483647.0, "<i4", DType::i32,
     "32-bit signed integer (arithmetic modulo 2^32)", load_i32, store_i32},
    {DType::f16, "f16", "half,float16,h", 2, K::floating, 11, 65504.0, "<f2", DType::f16,
     "IEEE binary16", load_f16, store_f16},
    {DType::bf16, "bf16", "bfloat16", 2, K::floating, 8, kBf16.max_value, "", DType::bf16,
     "bfloat16 (binary32's exponent, 8-bit significand)", load_bf16, store_bf16},
    {DType::i8, "i8", "int8", 1, K::integer, 7, 127.0, "|i1", DType::i8, "8-bit signed integer",
     load_i8, store_i8},
    {DType::e4m3, "e4m3", "fp8,fp8e4m3,float8_e4m3fn", 1, K::floating, 4, 448.0, "", DType::e4m3,
     "OCP fp8 E4M3 (no infinity, max 448)", load_e4m3, store_e4m3},
    {DType::e5m2, "e5m2", "fp8e5m2,float8_e5m2", 1, K::floating, 3, 57344.0, "", DType::e5m2,
     "OCP fp8 E5M2 (IEEE-style, max 57344)", load_e5m2, store_e5m2},
    {DType::c64, "cf32", "c64,complex64,c8", 8, K::complex, 24, kF32Max, "<c8", DType::f32,
     "complex of two f32 (re, im)", nullptr, nullptr},
    {DType::c128, "cf64", "c128,complex128,c16", 16, K::complex, 53, kF64Max, "<c16", DType::f64,
     "complex of two f64 (re, im)", nullptr, nullptr},
    {DType::ci8, "ci8", "complex_int8", 2, K::complex, 7, 127.0, "", DType::i8,
     "complex of two i8 (re, im), as correlators deliver", nullptr, nullptr},
    {DType::ci16, "ci16", "complex_int16", 4, K::complex, 15, 32767.0, "", DType::ci16,
     "complex of two 16-bit integers (re, im)", nullptr, nullptr},
};

// The compute-mode table. Order = the Compute enum.
const std::vector<ComputeInfo> kComputes = {
    {Compute::f32, "f32", "fp32,float", DType::f32, 0.0, "fp32 multiply-add"},
    {Compute::f64, "f64", "fp64,double", DType::f64, 0.0, "fp64 multiply-add"},
    {Compute::i32, "i32", "int32", DType::i32, 0.0, "integer multiply-add modulo 2^32 (exact)"},
    {Compute::tf32, "tf32", "", DType::f32, 0x1p-11,
     "inputs rounded to tf32 (11-bit significand), fp32 accumulation (tensor cores)"},
    {Compute::tf32x3, "3xtf32", "tf32x3", DType::f32, 0x1p-21,
     "fp32 split into two tf32 parts, three products: fp32 accuracy on tensor cores"},
    {Compute::f16, "f16", "half", DType::f16, 0.0, "native half: f16 products and sums"},
};

}  // namespace

// The f16 row's store rounds from double (no double rounding through float); these two work
// from float, bit by bit, for hot loops (packing, C stores).
std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // Inf, NaN
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
  // Normal: rebias the exponent, round 13 dropped bits to nearest even (may carry into it).
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

const std::vector<TypeInfo>& all_types() {
  return kTypes;
}

const TypeInfo& type_info(DType t) {
  const auto i = static_cast<std::size_t>(t);
  if (i >= kTypes.size()) throw InvalidArgument("unknown element type");
  return kTypes[i];
}

std::string_view to_string(DType t) {
  return type_info(t).name;
}

DType parse_dtype(std::string_view s) {
  for (const auto& t : kTypes)
    if (spelled(s, t.name, t.aliases)) return t.type;
  std::string names;
  for (const auto& t : kTypes) names += (names.empty() ? "" : ", ") + std::string(t.name);
  throw InvalidArgument("unknown element type '" + std::string(s) + "' (use one of " + names + ")");
}

std::size_t dtype_size(DType t) {
  return type_info(t).size;
}
bool is_floating(DType t) {
  return type_info(t).kind == TypeKind::floating;
}
bool is_integer(DType t) {
  return type_info(t).kind == TypeKind::integer;
}
bool is_complex(DType t) {
  return type_info(t).kind == TypeKind::complex;
}

double unit_roundoff(DType t) {
  const TypeInfo& i = type_info(t);
  return i.kind == TypeKind::integer ? 0.0 : std::ldexp(1.0, -i.precision);
}

double load_as_double(DType t, const void* p) {
  const TypeInfo& i = type_info(t);
  if (!i.load)
    throw InvalidArgument(std::string(i.name) + " elements are complex: read re and im as " +
                          std::string(to_string(i.component)));
  return i.load(p);
}

void store_from_double(DType t, void* p, double v) {
  const TypeInfo& i = type_info(t);
  if (!i.store)
    throw InvalidArgument(std::string(i.name) + " elements are complex: write re and im as " +
                          std::string(to_string(i.component)));
  i.store(p, v);
}

double round_to(DType t, double v) {
  unsigned char buf[16];
  store_from_double(t, buf, v);
  return load_as_double(t, buf);
}

// ---- compute modes --------------------------------------------------------------------------

const std::vector<ComputeInfo>& all_computes() {
  return kComputes;
}

const ComputeInfo& compute_info(Compute c) {
  const auto i = static_cast<std::size_t>(c);
  if (i >= kComputes.size()) throw InvalidArgument("unknown compute mode");
  return kComputes[i];
}

std::string_view to_string(Compute c) {
  return compute_info(c).name;
}

Compute parse_compute(std::string_view s) {
  for (const auto& c : kComputes)
    if (spelled(s, c.name, c.aliases)) return c.mode;
  std::string names;
  for (const auto& c : kComputes) names += (names.empty() ? "" : ", ") + std::string(c.name);
  throw InvalidArgument("unknown compute mode '" + std::string(s) + "' (use one of " + names + ")");
}

Compute default_compute(DType storage) {
  switch (storage) {
    case DType::f64:
      return Compute::f64;
    case DType::i32:
    case DType::i8:
      return Compute::i32;
    default:
      return Compute::f32;
  }
}

bool compute_accepts(Compute c, DType s) {
  switch (c) {
    case Compute::f32:
      return s == DType::f32 || s == DType::f16 || s == DType::bf16 || s == DType::e4m3 ||
             s == DType::e5m2;
    case Compute::f64:
      return s == DType::f64;
    case Compute::i32:
      return s == DType::i32 || s == DType::i8;
    case Compute::tf32:
    case Compute::tf32x3:
      return s == DType::f32;
    case Compute::f16:
      return s == DType::f16;
  }
  return false;
}

// ---- GEMM roles -----------------------------------------------------------------------------

GemmTypes GemmTypes::of(DType t) {
  return of(t, default_compute(t));
}

GemmTypes GemmTypes::of(DType t, Compute c) {
  GemmTypes g;
  g.a = g.b = t;
  g.compute = c;
  // Integer products are kept in i32; fp8 results in bf16 (fp8 is an input format only).
  g.c = t == DType::i8 ? DType::i32 : (t == DType::e4m3 || t == DType::e5m2) ? DType::bf16 : t;
  return g;
}

std::string GemmTypes::name() const {
  const GemmTypes natural = of(a);
  std::string s(to_string(a));
  if (b != a) s += "*" + std::string(to_string(b));
  if (c != natural.c) s += "->" + std::string(to_string(c));
  if (compute != natural.compute) s += "/" + std::string(to_string(compute));
  return s;
}

GemmTypes GemmTypes::parse(std::string_view text) {
  std::string s = lower(text);
  std::string compute, c;
  if (const auto slash = s.find('/'); slash != std::string::npos) {
    compute = s.substr(slash + 1);
    s.resize(slash);
  }
  if (const auto arrow = s.find("->"); arrow != std::string::npos) {
    c = s.substr(arrow + 2);
    s.resize(arrow);
  }
  std::string b;
  if (const auto star = s.find('*'); star != std::string::npos) {
    b = s.substr(star + 1);
    s.resize(star);
  }
  if (s.empty()) throw InvalidArgument("empty element type in '" + std::string(text) + "'");
  GemmTypes g = of(parse_dtype(s));
  if (!b.empty()) g.b = parse_dtype(b);
  if (!c.empty()) g.c = parse_dtype(c);
  if (!compute.empty()) g.compute = parse_compute(compute);
  if (const std::string why = g.check(); !why.empty())
    throw InvalidArgument("element types '" + std::string(text) + "': " + why);
  return g;
}

std::string GemmTypes::check() const {
  for (DType t : {a, b, c})
    if (is_complex(t)) return "complex GEMM is not available (" + name() + ")";
  const ComputeInfo& ci = compute_info(compute);
  for (DType t : {a, b})
    if (!compute_accepts(compute, t))
      return "compute " + std::string(ci.name) + " does not take " + std::string(to_string(t)) +
             " inputs";
  if (is_integer(ci.accumulator) != is_integer(c))
    return "C (" + std::string(to_string(c)) + ") cannot hold a " + std::string(ci.name) +
           " result";
  if (is_integer(c) && c != DType::i32) return "integer results are stored as i32";
  if (c == DType::e4m3 || c == DType::e5m2) return "fp8 is an input format: store C as bf16 or f32";
  return "";
}

double GemmTypes::input_roundoff() const {
  return compute_info(compute).input_roundoff;
}

// ---- layouts --------------------------------------------------------------------------------

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

// ---- capabilities -----------------------------------------------------------------------------

std::string_view to_string(Cap c) {
  switch (c) {
    case Cap::fp64:
      return "fp64";
    case Cap::fp16:
      return "fp16";
    case Cap::images:
      return "images";
    case Cap::mma_sm80:
      return "mma.sync (sm_80+)";
    case Cap::wgmma_sm90a:
      return "wgmma+TMA (sm_90a)";
    case Cap::avx2:
      return "avx2";
    case Cap::avx512:
      return "avx512";
    case Cap::avx512_bf16:
      return "avx512_bf16";
    case Cap::avx512_vnni:
      return "avx512_vnni";
    case Cap::amx:
      return "amx (bf16, int8 tiles)";
  }
  return "?";
}

std::string Caps::names() const {
  std::string out;
  for (std::uint32_t bit = 1; bit != 0 && bit <= bits; bit <<= 1)
    if (bits & bit)
      out += (out.empty() ? "" : ", ") + std::string(to_string(static_cast<Cap>(bit)));
  return out;
}

}  // namespace kafel
