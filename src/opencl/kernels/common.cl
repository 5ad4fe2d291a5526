// Element-role macros shared by every kafel OpenCL GEMM kernel. The host picks the storage of
// A, B and C with -DKAFEL_STORE_{F32,F64,I32,F16,BF16} and the compute mode with
// -DKAFEL_COMPUTE_{F32,F64,I32,F16} (gemm_plan.cpp: type_options), as GemmTypes states them.
//
//   real  storage type of A, B, C          acc   accumulator type (f16/bf16 storage -> float)
//   scal  type of the alpha/beta arguments raw   same-size unsigned type (pre-pass bit copies)
//   LD(p, i) / ST(p, i, v)   one element loaded as acc / stored from acc
//   VLOAD(W, i, p)           W elements at element offset W*i as accv(W) (any alignment)
//   VLOADA(W, i, p)          the same from a W-aligned vector (W > 1)
//   SCAL(x)                  alpha or beta as acc
//   MAC(c, a, b)             c += a * b (fused for floats; modulo 2^32 for i32)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// ---- storage of A, B and C
#if defined(KAFEL_STORE_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL_T double
typedef ulong raw;
#elif defined(KAFEL_STORE_I32)
#define REAL_T int
typedef uint raw;
#elif defined(KAFEL_STORE_F16)
#define REAL_T half  // without cl_khr_fp16 only through pointers and vload_half / vstore_half
typedef ushort raw;
#elif defined(KAFEL_STORE_BF16)
#define REAL_T ushort  // bfloat16: the top 16 bits of a float
typedef ushort raw;
#else
#define KAFEL_STORE_F32 1
#define REAL_T float
typedef uint raw;
#endif
typedef REAL_T real;

// ---- compute mode: accumulator and scalar types
#if defined(KAFEL_COMPUTE_F64)
#define ACC_T double
typedef double scal;
#define SCAL(x) (x)
#elif defined(KAFEL_COMPUTE_I32)
// Integer arithmetic in uint: wraps modulo 2^32 exactly like two's-complement int32.
#define ACC_T uint
typedef int scal;
#define SCAL(x) as_uint(x)
#elif defined(KAFEL_COMPUTE_F16)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define ACC_T half
typedef float scal;
#define SCAL(x) ((half)(x))
#else
#define KAFEL_COMPUTE_F32 1
#define ACC_T float
typedef float scal;
#define SCAL(x) (x)
#endif
typedef ACC_T acc;

// Vector types of acc: accv(4) = float4 / double4 / uint4 / half4.
#define accv(W) CAT(ACC_T, W)

#if defined(KAFEL_COMPUTE_I32)
#define MAC(c, a, b) ((c) += (a) * (b))
#else
#define MAC(c, a, b) ((c) = fma((a), (b), (c)))
#endif

// ---- loads and stores: storage -> acc
#if defined(KAFEL_STORE_F16) && defined(KAFEL_COMPUTE_F32)
// f16 storage, float arithmetic: vload_half / vstore_half convert (round to nearest even).
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half((v), (i), (p))
#define VLOAD(W, i, p) CAT(vload_half, W)((i), (p))
#define VLOADA(W, i, p) CAT(vloada_half, W)((i), (p))
#elif defined(KAFEL_STORE_BF16) && defined(KAFEL_COMPUTE_F32)
// bf16 storage, float arithmetic: widening is a shift; narrowing rounds to nearest even (as the
// host's float_to_bf16), NaN stays NaN.
inline float bf16_load(ushort h) {
  return as_float((uint)h << 16);
}
inline ushort bf16_store(float f) {
  const uint x = as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);
  return (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
#define BF16_WIDEN(W, v) CAT(as_float, W)(CAT(convert_uint, W)(v) << 16)
#define LD(p, i) bf16_load((p)[i])
#define ST(p, i, v) ((p)[i] = bf16_store(v))
#define VLOAD(W, i, p) BF16_WIDEN(W, CAT(vload, W)((i), (p)))
#define VLOADA(W, i, p) BF16_WIDEN(W, ((__global const CAT(ushort, W)*)(p))[i])
#elif defined(KAFEL_STORE_I32) && defined(KAFEL_COMPUTE_I32)
#define LD(p, i) as_uint((p)[i])
#define ST(p, i, v) ((p)[i] = as_int(v))
#define VLOAD(W, i, p) CAT(as_uint, W)(CAT(vload, W)((i), (p)))
#define VLOADA(W, i, p) CAT(as_uint, W)(((__global const CAT(REAL_T, W)*)(p))[i])
#else
// Storage and compute are the same type (f32, f64, native f16).
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define VLOAD(W, i, p) CAT(vload, W)((i), (p))
#define VLOADA(W, i, p) (((__global const CAT(REAL_T, W)*)(p))[i])
#endif

// C[idx] = alpha * v + beta * C[idx]; with beta == 0 C is not read (it may hold NaN).
inline void store_c(__global real* C, int idx, acc v, scal alpha, scal beta) {
  acc r = SCAL(alpha) * v;
  if (beta != 0) r += SCAL(beta) * LD(C, idx);
  ST(C, idx, r);
}
