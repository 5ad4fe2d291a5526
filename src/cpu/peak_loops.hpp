// The inner loops of the peak probe (peak.cpp): independent multiply-add chains per ISA and
// element kind, and a streaming read, each in the file compiled for its instruction set.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kafel::cpu {

// Runs `iters` rounds of kPeakChains independent multiply-add chains and returns the
// operations done (2 per multiply-add). *sink receives a value that depends on every chain,
// so the compiler must run them all.
using PeakLoop = double (*)(std::int64_t iters, double* sink);
inline constexpr int kPeakChains = 12;  // > FMA latency x pipes on every core kafel knows

// What one ISA offers; a null entry is not measured there. i8 is the instruction the i8
// micro-kernel of that ISA uses (AVX2: vpmaddwd on sign-extended pairs, AVX-512: vpdpbusd).
struct PeakLoops {
  PeakLoop f32 = nullptr, f64 = nullptr, bf16 = nullptr, i8 = nullptr;
};
PeakLoops peak_loops_generic();
PeakLoops peak_loops_avx2();       // all null when the build has no AVX2 kernels
PeakLoops peak_loops_avx512();     // f32, f64 only
PeakLoop peak_loop_avx512_bf16();  // vdpbf16ps, nullptr when not built
PeakLoop peak_loop_avx512_vnni();  // vpdpbusd, nullptr when not built
PeakLoop peak_loop_amx_bf16();     // tdpbf16ps on four tiles, nullptr when not built
PeakLoop peak_loop_amx_i8();       // tdpbssd on four tiles, nullptr when not built

// Reads [p, p + bytes) once (bytes a multiple of 128, p 64-byte aligned) and returns a value
// that depends on every byte.
std::uint64_t read_stream_generic(const void* p, std::size_t bytes);
std::uint64_t read_stream_avx2(const void* p, std::size_t bytes);

}  // namespace kafel::cpu
