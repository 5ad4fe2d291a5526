// The sm_90a translation unit of the skinny tiles: 128 x 64, both consumer warpgroups on one
// tile, for outputs at most 64 columns wide. Its own unit so that it compiles beside the rest.
#include "cuda/wgmma_gemm_sm90a.cuh"

namespace kafel::cuda::sm90 {

// A is K-major here (check_options refuses a transposed A with this tile); B either way for
// 16-bit inputs (MN-major when stored k x n), K-major for the others.
std::string launch_skinny(Input in, const Problem& p, const Options& o, cudaStream_t stream) {
  switch (in) {
    case Input::bf16:
      return p.b_t ? launch_config<Cfg<Bf16, 128, 64, false, false>, 1>(p, o, stream)
                   : launch_config<Cfg<Bf16, 128, 64, false, true>, 1>(p, o, stream);
    case Input::f16:
      return p.b_t ? launch_config<Cfg<F16, 128, 64, false, false>, 1>(p, o, stream)
                   : launch_config<Cfg<F16, 128, 64, false, true>, 1>(p, o, stream);
    case Input::tf32:
      return launch_config<Cfg<Tf32, 128, 64, false, false>, 1>(p, o, stream);
    case Input::e4m3:
      return launch_config<Cfg<E4m3, 128, 64, false, false>, 1>(p, o, stream);
    case Input::e5m2:
      return launch_config<Cfg<E5m2, 128, 64, false, false>, 1>(p, o, stream);
    case Input::i8:
      return launch_config<Cfg<S8, 128, 64, false, false>, 1>(p, o, stream);
    default:
      return "the 128 x 64 tile is not compiled for split operands";
  }
}

}  // namespace kafel::cuda::sm90
