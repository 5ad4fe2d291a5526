// The OpenCL backend's registry: its devices and one line per GEMM kernel of the ladder.
// Adding a rung = its kernels/NN_<rung>.cl file, a plan (or a StridedRung) in ladder.cpp and one
// line here.
#include "core/backend.hpp"
#include "opencl/clblast_baseline.hpp"
#include "opencl/ladder.hpp"

namespace kafel {

namespace {

using ocl::ImagePlan;
using ocl::make;
using ocl::make_image;
using ocl::make_strided;

std::vector<GemmKernel> opencl_kernels() {
  const std::vector<DType> all{DType::f32, DType::f64, DType::i32, DType::f16};
  const std::vector<DType> no64{DType::f32, DType::i32, DType::f16};
  std::vector<GemmKernel> k = {
      {"ocl.naive", "naive 2D NDRange, one C element per work-item", all, ocl::naive_space(),
       make_strided<ocl::naive_rung>},
      {"ocl.row", "one C row per work-item, A row chunk in private memory", all, ocl::row_space(),
       make_strided<ocl::row_rung>},
      {"ocl.tiled", "TS x TS local-memory tiles", all, ocl::tiled_space(),
       make_strided<ocl::tiled_rung>},
      {"ocl.wpt", "local-memory tiles + WPT outputs per work-item", all, ocl::wpt_space(),
       make_strided<ocl::wpt_rung>},
      {"ocl.vec4", "4x4 outputs per work-item, vload4, transposed A", all, ocl::vec4_space(),
       make<ocl::Vec4Plan>},
      {"ocl.reg", "2D register blocking, local memory, vector loads, packed operands", all,
       ocl::reg_space(), make<ocl::RegPlan>},
      {"ocl.reg2", "register blocking, double-buffered local memory, register prefetch", all,
       ocl::reg_db_space(), make<ocl::RegDbPlan>},
      {"ocl.image", "image2d operands (A and B images), 4x4 per work-item", no64,
       ocl::image_space(), make_image<ImagePlan::Variant::both>},
      {"ocl.image_buf", "A as image2d, B as buffer, 4x4 per work-item", no64, ocl::image_space(),
       make_image<ImagePlan::Variant::a_only>},
      {"ocl.image_fma", "image2d operands, k unrolled by 2 texels, explicit fma", no64,
       ocl::image_space(), make_image<ImagePlan::Variant::fma>},
      {"ocl.direct", "small/odd sizes: guarded tiles, no padding or copies", all,
       ocl::direct_space(), make_strided<ocl::direct_rung>},
  };
  if (ocl::have_clblast())
    k.push_back({"ocl.clblast",
                 "CLBlast GEMM (baseline)",
                 {DType::f32, DType::f64, DType::f16},
                 {},
                 ocl::make_clblast,
                 0,
                 true});
  return k;
}

}  // namespace

Backend opencl_backend() {
  Backend b;
  b.name = "opencl";
  b.devices = [] { return ocl::discover(); };
  b.gemm_kernels = opencl_kernels;
  // GPUs: the double-buffered rung; CPU devices (PoCL): the barrier-free tuned ocl.reg.
  b.default_gemm_kernel = [](const Device& d, DType) {
    return std::string(d.is_gpu ? "ocl.reg2" : "ocl.reg");
  };
  return b;
}

}  // namespace kafel
