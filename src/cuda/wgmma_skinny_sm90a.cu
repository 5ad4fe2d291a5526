// The sm_90a translation unit of the skinny tiles, both consumer warpgroups on one tile: 128 x
// 64 for outputs at most 64 columns wide, 64 x 128 (64 columns each) for outputs at most 64 rows
// tall. Their own unit so that it compiles beside the rest.
#include "cuda/wgmma_gemm_sm90a.cuh"

namespace kafel::cuda::sm90 {
namespace {

// 128 x 64, or 64 x 128 split by columns.
template <class Tag, bool B_MN>
using Skinny = Cfg<Tag, 128, 64, false, B_MN>;
template <class Tag, bool B_MN>
using Short = Cfg<Tag, 64, 128, false, B_MN, false, false, true>;

template <template <class, bool> class Shape>
std::string launch_shape(Input in, const Problem& p, const Options& o, cudaStream_t stream) {
  switch (in) {
    case Input::bf16:
      return p.b_t ? launch_config<Shape<Bf16, false>, 1>(p, o, stream)
                   : launch_config<Shape<Bf16, true>, 1>(p, o, stream);
    case Input::f16:
      return p.b_t ? launch_config<Shape<F16, false>, 1>(p, o, stream)
                   : launch_config<Shape<F16, true>, 1>(p, o, stream);
    case Input::tf32:
      return launch_config<Shape<Tf32, false>, 1>(p, o, stream);
    case Input::e4m3:
      return launch_config<Shape<E4m3, false>, 1>(p, o, stream);
    case Input::e5m2:
      return launch_config<Shape<E5m2, false>, 1>(p, o, stream);
    case Input::i8:
      return launch_config<Shape<S8, false>, 1>(p, o, stream);
    default:
      return "the skinny tiles are not compiled for split operands";
  }
}

}  // namespace

// A is K-major here (check_options refuses a transposed A with these tiles); B either way for
// 16-bit inputs (MN-major when stored k x n), K-major for the others.
std::string launch_skinny(Input in, const Problem& p, const Options& o, cudaStream_t stream) {
  return o.bm == 64 ? launch_shape<Short>(in, p, o, stream)
                    : launch_shape<Skinny>(in, p, o, stream);
}

}  // namespace kafel::cuda::sm90
