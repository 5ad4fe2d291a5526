// Element types (one traits table), compute modes, GEMM element roles, layouts and device
// capabilities: the type system every kafel interface, kernel, test and tool reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace kafel {

// Storage type of one element. Complex types hold (re, im) pairs of their component type.
enum class DType : std::uint8_t { f32, f64, i32, f16, bf16, i8, e4m3, e5m2, c64, c128, ci8, ci16 };

enum class TypeKind : std::uint8_t { floating, integer, complex };

// One row of the type table (types.cpp). Adding a type is one row there plus its enum value.
struct TypeInfo {
  DType type;
  const char* name;     // canonical spelling: "bf16"
  const char* aliases;  // other accepted spellings, comma-separated: "bfloat16"
  std::size_t size;     // bytes per element
  TypeKind kind;
  // Significand bits including the implicit one (f32 24, bf16 8, e4m3 4); integers: value bits.
  int precision;
  double max_value;     // largest finite magnitude (integers: the largest positive value)
  const char* npy;      // NumPy descriptor ("<f4", "|i1") or "" when NumPy has no such type
  DType component;      // complex: the type of re and im; otherwise the type itself
  const char* summary;  // one line for help texts
  // Widen one element to double / round a double into one element (round to nearest even;
  // integers wrap modulo 2^bits; a value beyond max_value becomes inf, or NaN where the
  // format has no infinity). Real types only: complex rows have null here.
  double (*load)(const void* p);
  void (*store)(void* p, double v);
};

const TypeInfo& type_info(DType t);
// Every type in the table, in enum order.
const std::vector<TypeInfo>& all_types();

std::string_view to_string(DType t);
// Any spelling of the table (case-insensitive); throws InvalidArgument listing the valid ones.
DType parse_dtype(std::string_view s);
std::size_t dtype_size(DType t);
bool is_floating(DType t);  // real floating point
bool is_integer(DType t);   // real integer
bool is_complex(DType t);
// Unit roundoff 2^-precision of a real floating type (f32 2^-24, bf16 2^-8); 0 for integers.
double unit_roundoff(DType t);

// Element of type `t` at `p` widened to double / `v` rounded into it (see TypeInfo).
// Throws InvalidArgument for complex types (use their component type on each half).
double load_as_double(DType t, const void* p);
void store_from_double(DType t, void* p, double v);
// `v` rounded to the nearest value of `t` (what store_from_double would keep), as a double.
double round_to(DType t, double v);

// IEEE 754 binary16 <-> binary32, round to nearest even; NaN and infinities are kept.
std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
// bfloat16 (the top 16 bits of a binary32) <-> binary32, round to nearest even. Inline: the
// CPU kernels convert whole C matrices with them, which then vectorise.
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);  // memcpy, not std::bit_cast: nvcc's front end reads this too
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);  // ties to even; carries to inf
  return static_cast<std::uint16_t>(rounded >> 16);
}
inline float bf16_to_float(std::uint16_t h) {
  const std::uint32_t x = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

// ---- compute modes --------------------------------------------------------------------------
// What the multiply-accumulate of a GEMM does. Storage is converted exactly into the compute
// type (f16/bf16/fp8 -> f32 and i8 -> i32 lose nothing), so "bf16 -> f32" is bf16 storage with
// compute f32, and "i8 -> i32" is i8 storage with compute i32.
enum class Compute : std::uint8_t {
  f32,     // IEEE fp32 multiply-add (SIMT FMA, or tensor cores on 16-bit / 8-bit inputs)
  f64,     // IEEE fp64 multiply-add (FMA units or the DMMA tensor cores)
  i32,     // integer multiply-add modulo 2^32 (exact)
  tf32,    // fp32 inputs rounded to tf32 (11-bit significand), fp32 accumulation
  tf32x3,  // fp32 inputs split into tf32 big + small parts, 3 products, fp32 accumulation
  f16,     // native half arithmetic: f16 products accumulated in f16 (OpenCL cl_khr_fp16)
};

struct ComputeInfo {
  Compute mode;
  const char* name;     // "tf32", "3xtf32"
  const char* aliases;  // other spellings
  DType accumulator;    // the type partial sums are kept in
  // Relative rounding applied to the inputs beyond their storage (tf32 2^-11, 3xtf32 2^-21);
  // verification widens its tolerance by this much.
  double input_roundoff;
  const char* summary;
};

const ComputeInfo& compute_info(Compute c);
const std::vector<ComputeInfo>& all_computes();
std::string_view to_string(Compute c);
Compute parse_compute(std::string_view s);
// The compute mode a storage type gets when none is asked for: f32 for f32/f16/bf16/fp8,
// f64 for f64, i32 for i32 and i8.
Compute default_compute(DType storage);
// True when compute mode `c` is defined for inputs stored as `storage`.
bool compute_accepts(Compute c, DType storage);

// ---- GEMM element roles ---------------------------------------------------------------------
// Storage of A, B and C and the compute mode, as CUTLASS's ElementA/B/C + operator tag.
struct GemmTypes {
  DType a = DType::f32, b = DType::f32, c = DType::f32;
  Compute compute = Compute::f32;

  GemmTypes() = default;
  // A storage type stands for its natural roles (of(t)): GemmDesc{m, n, k, ..., DType::f64}.
  GemmTypes(DType t) : GemmTypes(of(t)) {}  // NOLINT: implicit on purpose

  // The natural roles of one storage type: A = B = t, C = t (i32 for i8, bf16 for fp8),
  // compute default_compute(t).
  static GemmTypes of(DType t);
  static GemmTypes of(DType t, Compute c);
  // "f32", "f32/tf32", "bf16->f32" (C in f32), "i8" (C i32, compute i32 are natural):
  // the storage of A (and of B when it differs, "e4m3*e5m2"), C when it is not the natural
  // one, and the compute mode when it is not the default.
  std::string name() const;
  // Inverse of name(); throws InvalidArgument.
  static GemmTypes parse(std::string_view s);
  // "" when the combination is meaningful (real types, compute accepts A and B, C can hold
  // the accumulator's result), else why not.
  std::string check() const;
  // Largest relative input rounding of the compute mode (ComputeInfo::input_roundoff).
  double input_roundoff() const;
  bool exact() const { return compute == Compute::i32; }

  friend bool operator==(const GemmTypes& x, const GemmTypes& y) {
    return x.a == y.a && x.b == y.b && x.c == y.c && x.compute == y.compute;
  }
  friend bool operator!=(const GemmTypes& x, const GemmTypes& y) { return !(x == y); }
};

// ---- layouts --------------------------------------------------------------------------------

// Row-major: element (i, j) at i*ld + j. Column-major: at j*ld + i.
enum class Layout { RowMajor, ColMajor };

// op(X) = X (N) or X transposed (T).
enum class Op { N, T };

std::string_view to_string(Layout l);
std::string_view to_string(Op op);

// Layout of a block of samples of several channels (covariance, raw sample files).
// Planar: channel c, sample n at c*stride + n (C x N). Interleaved: at n*stride + c (N x C).
enum class SampleLayout { Planar, Interleaved };

std::string_view to_string(SampleLayout l);
// "planar" (or channel-major), "interleaved" (or sample-major); throws InvalidArgument.
SampleLayout parse_sample_layout(std::string_view s);

// Parse "row"/"row-major"/"C", "col"/"column-major"/"F"; throws InvalidArgument.
Layout parse_layout(std::string_view s);
// Parse "n"/"N"/"t"/"T"; throws InvalidArgument.
Op parse_op(std::string_view s);

// ---- device capabilities --------------------------------------------------------------------
// Features a kernel may need beyond its backend. A kernel lists them per type combination
// (TypeSupport in kernels.hpp), so "unsupported here" is a fact the registry states, not an
// exception a test has to forgive.
enum class Cap : std::uint32_t {
  fp64 = 1u << 0,         // double arithmetic (OpenCL cl_khr_fp64)
  fp16 = 1u << 1,         // native half arithmetic (OpenCL cl_khr_fp16)
  images = 1u << 2,       // image2d objects (OpenCL CL_DEVICE_IMAGE_SUPPORT)
  mma_sm80 = 1u << 3,     // CUDA tensor cores through mma.sync / ldmatrix (compute capability 8.0+)
  wgmma_sm90a = 1u << 4,  // Hopper warpgroup MMA + TMA (compute capability 9.0, sm_90a code)
  avx2 = 1u << 5,         // AVX2 + FMA kernels compiled and present
  avx512 = 1u << 6,       // AVX-512 F/BW/DQ/VL kernels compiled and present
  avx512_bf16 = 1u << 7,  // vdpbf16ps
  avx512_vnni = 1u << 8,  // vpdpbusd
  amx = 1u << 9,          // AMX tiles for bf16 and int8 (CPU, OS permission and kernels present)
};

struct Caps {
  std::uint32_t bits = 0;
  Caps() = default;
  Caps(Cap c) : bits(static_cast<std::uint32_t>(c)) {}  // NOLINT: a single cap is a set
  bool has(Caps need) const { return (bits & need.bits) == need.bits; }
  Caps& operator|=(Caps o) {
    bits |= o.bits;
    return *this;
  }
  friend Caps operator|(Caps x, Caps y) { return x |= y; }
  bool empty() const { return bits == 0; }
  // "fp64, images" (names of the bits set).
  std::string names() const;
};
inline Caps operator|(Cap x, Cap y) {
  return Caps(x) | Caps(y);
}
std::string_view to_string(Cap c);

}  // namespace kafel
