// Element-type macros shared by every kafel OpenCL kernel; the host picks one type with
// -DKAFEL_F32 / KAFEL_F64 / KAFEL_I32 / KAFEL_F16 (plus KAFEL_NATIVE_HALF where cl_khr_fp16 exists).
//
//   real  storage type of A, B, C          acc   arithmetic type (f16 -> float, i32 -> uint)
//   scal  type of the alpha/beta arguments LD(p, i) / ST(p, i, v) load as acc / store from acc
//   raw   same-size unsigned type for bit copies (pre-pass kernels)
//   MAC(c, a, b)  c += a * b (fused for floats; modulo 2^32 for i32)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if defined(KAFEL_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL_T double
#define ACC_T double
typedef double real;
typedef double acc;
typedef double scal;
typedef ulong raw;
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define SCAL(x) (x)
#define MAC(c, a, b) ((c) = fma((a), (b), (c)))
#define VLOAD(W, i, p) CAT(vload, W)(i, p)
#elif defined(KAFEL_I32)
// Integer arithmetic in uint: wraps modulo 2^32 exactly like two's-complement int32.
#define REAL_T int
#define ACC_T uint
typedef int real;
typedef uint acc;
typedef int scal;
typedef uint raw;
#define LD(p, i) as_uint((p)[i])
#define ST(p, i, v) ((p)[i] = as_int(v))
#define SCAL(x) as_uint(x)
#define MAC(c, a, b) ((c) += (a) * (b))
#define VLOAD(W, i, p) CAT(as_uint, W)(CAT(vload, W)(i, p))
#elif defined(KAFEL_F16)
#define REAL_T half
typedef half real;
typedef float scal;
typedef ushort raw;
#if defined(KAFEL_NATIVE_HALF)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define ACC_T half
typedef half acc;
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define SCAL(x) ((half)(x))
#define VLOAD(W, i, p) CAT(vload, W)(i, p)
#else
// Storage only: vload_half / vstore_half convert, arithmetic happens in float.
#define ACC_T float
typedef float acc;
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half((v), (i), (p))
#define SCAL(x) (x)
#define VLOAD(W, i, p) CAT(vload_half, W)(i, p)
#endif
#define MAC(c, a, b) ((c) = fma((a), (b), (c)))
#else
#define KAFEL_F32 1
#define REAL_T float
#define ACC_T float
typedef float real;
typedef float acc;
typedef float scal;
typedef uint raw;
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define SCAL(x) (x)
#define MAC(c, a, b) ((c) = fma((a), (b), (c)))
#define VLOAD(W, i, p) CAT(vload, W)(i, p)
#endif

// Vector types of acc: accv(4) = float4 / double4 / uint4.
#define accv(W) CAT(ACC_T, W)

// C[idx] = alpha * v + beta * C[idx]; with beta == 0 C is not read (it may hold NaN).
inline void store_c(__global real* C, int idx, acc v, scal alpha, scal beta) {
  acc r = SCAL(alpha) * v;
  if (beta != 0) r += SCAL(beta) * LD(C, idx);
  ST(C, idx, r);
}
