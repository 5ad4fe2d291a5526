// Element types, storage layouts and transpose flags shared by every kafel interface.
// Also the IEEE half-precision conversions used for f16 storage on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kafel {

// Element type of a matrix. f16 is storage only on the host: arithmetic happens in float.
enum class DType { f32, f64, i32, f16 };

// Row-major: element (i, j) at i*ld + j. Column-major: at j*ld + i.
enum class Layout { RowMajor, ColMajor };

// op(X) = X (N) or X transposed (T).
enum class Op { N, T };

std::string_view to_string(DType t);
std::string_view to_string(Layout l);
std::string_view to_string(Op op);

// Layout of a block of samples of several channels (covariance, raw sample files).
// Planar: channel c, sample n at c*stride + n (C x N). Interleaved: at n*stride + c (N x C).
enum class SampleLayout { Planar, Interleaved };

std::string_view to_string(SampleLayout l);
// "planar" (or channel-major), "interleaved" (or sample-major); throws InvalidArgument.
SampleLayout parse_sample_layout(std::string_view s);

// Parse "f32"/"float"/"s", "f64"/"double"/"d", "i32"/"int", "f16"/"half"/"h"; throws
// InvalidArgument.
DType parse_dtype(std::string_view s);
// Parse "row"/"row-major"/"C", "col"/"column-major"/"F"; throws InvalidArgument.
Layout parse_layout(std::string_view s);
// Parse "n"/"N"/"t"/"T"; throws InvalidArgument.
Op parse_op(std::string_view s);

std::size_t dtype_size(DType t);
bool is_floating(DType t);
// Unit roundoff of the type's storage (0 for integers): 2^-24 for f32, 2^-53 f64, 2^-11 f16.
double unit_roundoff(DType t);

// IEEE 754 binary16 <-> binary32, round to nearest even; NaN and infinities are kept.
std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);

// Element of type `t` at `p`, widened to double (f16 and i32 included).
double load_as_double(DType t, const void* p);
// Stores `v` at `p` converted to `t` (round to nearest; integers wrap modulo 2^32).
void store_from_double(DType t, void* p, double v);

}  // namespace kafel
