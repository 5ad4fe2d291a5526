// Host side of the OpenCL GEMM ladder: ND-range geometry, pre-passes and parameter spaces of
// each rung. Kernels: src/opencl/kernels/NN_<rung>.cl.
#include "opencl/ladder.hpp"

#include <string>

namespace kafel::ocl {
namespace {

using S = std::size_t;

S groups(std::int64_t extent, std::int64_t tile) {
  return S((extent + tile - 1) / tile);
}

// Bytes of one acc element, an upper bound (native half arithmetic takes 2).
std::size_t acc_size(DType t) {
  return t == DType::f64 ? 8 : 4;
}

ParamDesc param(std::string name, std::int64_t def, std::vector<std::int64_t> cands,
                std::string help) {
  return ParamDesc{std::move(name), def, std::move(cands), std::move(help)};
}

std::string limit_wg(std::int64_t threads) {
  return threads > 1024 ? "work-group of " + std::to_string(threads) + " exceeds 1024" : "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Strided rungs: ND-ranges as the kernels index them (x along n); local_elements counts the
// __local arrays each kernel file declares (As and Bs tiles).

const StridedRung naive_rung{
    .name = "ocl.naive",
    .file = "01_naive.cl",
    .kernel = "gemm_naive",
    .range =
        [](const Params& p, int m, int n) {
          return NdRange{{S(n), S(m)}, {S(p.at("WGX")), S(p.at("WGY"))}};
        },
};

const StridedRung row_rung{
    .name = "ocl.row",
    .file = "02_row.cl",
    .kernel = "gemm_row",
    .range =
        [](const Params& p, int m, int) {
          return NdRange{{S(m)}, {S(p.at("WG"))}};
        },
};

const StridedRung tiled_rung{
    .name = "ocl.tiled",
    .file = "03_tiled.cl",
    .kernel = "gemm_tiled",
    .range =
        [](const Params& p, int m, int n) {
          return NdRange{{S(n), S(m)}, {S(p.at("TS")), S(p.at("TS"))}};
        },
    .local_elements = [](const Params& p) { return 2 * p.at("TS") * p.at("TS"); },
};

const StridedRung wpt_rung{
    .name = "ocl.wpt",
    .file = "04_wpt.cl",
    .kernel = "gemm_wpt",
    .range =
        [](const Params& p, int m, int n) {
          const S ts = S(p.at("TS")), rts = S(p.at("TS") / p.at("WPT"));
          return NdRange{{groups(n, ts) * ts, groups(m, ts) * rts}, {ts, rts}};
        },
    .local_elements = [](const Params& p) { return 2 * p.at("TS") * p.at("TS"); },
};

const StridedRung direct_rung{
    .name = "ocl.direct",
    .file = "08_direct.cl",
    .kernel = "gemm_direct",
    .range =
        [](const Params& p, int m, int n) {
          const S ts = S(p.at("TS")), rt = S(p.at("TS") / p.at("WPT"));
          return NdRange{{groups(n, ts) * rt, groups(m, ts) * rt}, {rt, rt}};
        },
    .local_elements = [](const Params& p) { return 2 * p.at("TK") * (p.at("TS") + 1); },
};

void StridedPlan::prepare() {
  range_ = rung_.range(params_, m_, n_);
  const std::int64_t elements = rung_.local_elements ? rung_.local_elements(params_) : 0;
  check_limits(range_.local, std::uint64_t(elements) * acc_size(desc_.dtype), rung_.name);
  program_ = build({rung_.file});
  kernel_ = checked_kernel(program_, rung_.kernel, range_.local, rung_.name);
}

std::vector<Event> StridedPlan::enqueue(Operands& s) {
  kernel_.args(m_, n_, k_);
  set_alpha_beta(kernel_, 3);
  kernel_.arg(5, s.a);
  kernel_.arg(6, sa_.rs);
  kernel_.arg(7, sa_.cs);
  kernel_.arg(8, s.b);
  kernel_.arg(9, sb_.rs);
  kernel_.arg(10, sb_.cs);
  kernel_.arg(11, s.c);
  kernel_.arg(12, ldc_);
  std::vector<Event> ev;
  ev.push_back(launch(ctx_, kernel_, range_.global, range_.local));
  return ev;
}

// ---------------------------------------------------------------------------------------------
// Rung 5: vec4

void Vec4Plan::prepare() {
  const int wgx = int(params_.at("WGX")), wgy = int(params_.at("WGY"));
  check_limits({S(wgx), S(wgy)}, 0, "ocl.vec4");
  mp_ = int(round_up(m_, 4 * wgy));
  np_ = int(round_up(n_, 4 * wgx));
  at_ = scratch(std::int64_t(k_) * mp_);
  bp_ = scratch(std::int64_t(k_) * np_);
  program_ = build({"05_vec4.cl"});
  kernel_ = checked_kernel(program_, "gemm_vec4", {S(wgx), S(wgy)}, "ocl.vec4");
}

std::vector<Event> Vec4Plan::enqueue(Operands& s) {
  std::vector<Event> ev;
  ev.push_back(pack_a(s, at_, true, k_, mp_));
  ev.push_back(pack_b(s, bp_, true, k_, np_));
  kernel_.args(m_, n_, k_);
  set_alpha_beta(kernel_, 3);
  kernel_.arg(5, at_);
  kernel_.arg(6, mp_);
  kernel_.arg(7, bp_);
  kernel_.arg(8, np_);
  kernel_.arg(9, s.c);
  kernel_.arg(10, ldc_);
  const S wgx = S(params_.at("WGX")), wgy = S(params_.at("WGY"));
  ev.push_back(launch(ctx_, kernel_, {S(np_ / 4), S(mp_ / 4)}, {wgx, wgy}));
  return ev;
}

// ---------------------------------------------------------------------------------------------
// Rungs 6 and 9: register blocking over packed operands

void RegBlockPlan::prepare() {
  const auto& q = params_;
  const std::int64_t mwg = q.at("MWG"), nwg = q.at("NWG"), kwg = q.at("KWG");
  const std::vector<S> local{S(q.at("NDIMC")), S(q.at("MDIMC"))};
  check_limits(local, local_bytes(), name_);
  mp_ = int(round_up(m_, mwg));
  np_ = int(round_up(n_, nwg));
  kp_ = int(round_up(k_, kwg));
  // No pre-pass for an operand already k-major with tile-multiple sizes (e.g. B in NN), unless
  // it has to be rearranged into panels.
  const bool pk = panels();
  pack_a_ = pk || !(mp_ == m_ && kp_ == k_ && sa_.rs == 1 && sa_.cs == m_);
  pack_b_ = pk || !(np_ == n_ && kp_ == k_ && sb_.cs == 1 && sb_.rs == n_);
  panel_a_ = pk ? int(mwg) : 0;
  panel_b_ = pk ? int(nwg) : 0;
  if (pack_a_) at_ = scratch(std::int64_t(kp_) * mp_);
  if (pack_b_) bp_ = scratch(std::int64_t(kp_) * np_);
  program_ = build({"reg_common.cl", file_});  // the two rungs' shared macros first
  kernel_ = checked_kernel(program_, kernel_name_, local, name_);
  range_ = {{S(np_ / nwg) * local[0], S(mp_ / mwg) * local[1]}, local};
}

std::vector<Event> RegBlockPlan::enqueue(Operands& s) {
  std::vector<Event> ev;
  if (pack_a_) ev.push_back(pack_a(s, at_, true, kp_, mp_, panel_a_));
  if (pack_b_) ev.push_back(pack_b(s, bp_, true, kp_, np_, panel_b_));
  kernel_.args(m_, n_, kp_);
  set_alpha_beta(kernel_, 3);
  kernel_.arg(5, pack_a_ ? at_ : s.a);
  kernel_.arg(6, mp_);
  kernel_.arg(7, pack_b_ ? bp_ : s.b);
  kernel_.arg(8, np_);
  kernel_.arg(9, s.c);
  kernel_.arg(10, ldc_);
  ev.push_back(launch(ctx_, kernel_, range_.global, range_.local));
  return ev;
}

// SA / SB select which operand's KWG slice is staged.
std::uint64_t RegPlan::local_bytes() const {
  const auto& q = params_;
  const std::int64_t kwg = q.at("KWG");
  return (q.at("SA") * kwg * q.at("MWG") + q.at("SB") * kwg * q.at("NWG")) * acc_size(desc_.dtype);
}

// Two buffers of each operand's KWG slice.
std::uint64_t RegDbPlan::local_bytes() const {
  const auto& q = params_;
  return 2 * (q.at("MWG") + q.at("NWG")) * q.at("KWG") * acc_size(desc_.dtype);
}

// ---------------------------------------------------------------------------------------------
// Rung 7: images

ImagePlan::ImagePlan(const Device& d, const GemmDesc& g, const Params& p, Variant v)
    : OclPlan(d, g, p), variant_(v) {
  if (g.dtype == DType::f64)
    throw Unsupported("image rungs: OpenCL has no 64-bit image channel type, f64 is not available");
  if (!ctx_.image_support())
    throw Unsupported(ctx_.name() + " has no image support (CL_DEVICE_IMAGE_SUPPORT is false)");
}

void ImagePlan::prepare() {
  const int wgx = int(params_.at("WGX")), wgy = int(params_.at("WGY"));
  const char* rung = variant_ == Variant::both     ? "ocl.image"
                     : variant_ == Variant::a_only ? "ocl.image_buf"
                                                   : "ocl.image_fma";
  check_limits({S(wgx), S(wgy)}, 0, rung);
  mp_ = int(round_up(m_, 4 * wgy));
  np_ = int(round_up(n_, 4 * wgx));
  kp_ = int(round_up(k_, variant_ == Variant::fma ? 8 : 4));
  cl_channel_type ct = desc_.dtype == DType::f32   ? CL_FLOAT
                       : desc_.dtype == DType::f16 ? CL_HALF_FLOAT
                                                   : CL_SIGNED_INT32;
  aimg_ = make_image2d(ctx_, S(kp_ / 4), S(mp_), ct);  // texel (kq, i)
  apad_ = scratch(std::int64_t(mp_) * kp_);
  bpad_ = scratch(std::int64_t(kp_) * np_);
  if (variant_ != Variant::a_only) bimg_ = make_image2d(ctx_, S(np_ / 4), S(kp_), ct);
  program_ = build({"07_image.cl"});
  kernel_ = checked_kernel(program_,
                           variant_ == Variant::both     ? "gemm_image"
                           : variant_ == Variant::a_only ? "gemm_image_buf"
                                                         : "gemm_image_fma",
                           {S(wgx), S(wgy)}, rung);
}

Event ImagePlan::to_image(Buffer& src, Buffer& image, S width, S height) {
  const S origin[3] = {0, 0, 0};
  const S region[3] = {width, height, 1};
  cl_event e = nullptr;
  check(clEnqueueCopyBufferToImage(ctx_.queue(), src.handle(), image.handle(), 0, origin, region, 0,
                                   nullptr, &e),
        "clEnqueueCopyBufferToImage");
  return Event(e);
}

std::vector<Event> ImagePlan::enqueue(Operands& s) {
  std::vector<Event> ev;
  ev.push_back(pack_a(s, apad_, false, mp_, kp_));
  ev.push_back(to_image(apad_, aimg_, S(kp_ / 4), S(mp_)));
  ev.push_back(pack_b(s, bpad_, true, kp_, np_));
  if (variant_ != Variant::a_only) ev.push_back(to_image(bpad_, bimg_, S(np_ / 4), S(kp_)));
  kernel_.args(m_, n_, kp_ / 4);
  set_alpha_beta(kernel_, 3);
  kernel_.arg(5, aimg_);
  cl_uint i = 6;
  if (variant_ == Variant::a_only) {
    kernel_.arg(i++, bpad_);
    kernel_.arg(i++, np_);
  } else {
    kernel_.arg(i++, bimg_);
  }
  kernel_.arg(i++, s.c);
  kernel_.arg(i++, ldc_);
  const S wgx = S(params_.at("WGX")), wgy = S(params_.at("WGY"));
  ev.push_back(launch(ctx_, kernel_, {S(np_ / 4), S(mp_ / 4)}, {wgx, wgy}));
  return ev;
}

// ---------------------------------------------------------------------------------------------
// Parameter spaces

ParamSpace naive_space() {
  ParamSpace s;
  s.params = {param("WGX", 16, {8, 16, 32, 64}, "work-group size along n"),
              param("WGY", 8, {1, 2, 4, 8, 16}, "work-group size along m")};
  s.constraint = [](const Params& p) { return limit_wg(p.at("WGX") * p.at("WGY")); };
  return s;
}

ParamSpace row_space() {
  ParamSpace s;
  s.params = {param("KCH", 256, {64, 128, 256, 512, 1024}, "A-row chunk held in private memory"),
              param("WG", 64, {16, 32, 64, 128, 256}, "work-group size (rows)")};
  s.constraint = [](const Params& p) { return limit_wg(p.at("WG")); };
  return s;
}

ParamSpace tiled_space() {
  ParamSpace s;
  s.params = {param("TS", 16, {8, 16, 32}, "tile edge (work-group TS x TS)")};
  s.constraint = [](const Params& p) { return limit_wg(p.at("TS") * p.at("TS")); };
  return s;
}

ParamSpace wpt_space() {
  ParamSpace s;
  s.params = {param("TS", 32, {16, 32, 64}, "tile edge"),
              param("WPT", 8, {1, 2, 4, 8, 16}, "C elements per work-item (along m)")};
  s.constraint = [](const Params& p) -> std::string {
    if (p.at("TS") % p.at("WPT") != 0) return "TS must be a multiple of WPT";
    return limit_wg(p.at("TS") * p.at("TS") / p.at("WPT"));
  };
  return s;
}

ParamSpace vec4_space() {
  ParamSpace s;
  s.params = {param("WGX", 8, {4, 8, 16, 32}, "work-group size along n (4 columns each)"),
              param("WGY", 8, {1, 2, 4, 8, 16}, "work-group size along m (4 rows each)")};
  s.constraint = [](const Params& p) { return limit_wg(p.at("WGX") * p.at("WGY")); };
  return s;
}

ParamSpace reg_space() {
  ParamSpace s;
  s.params = {param("MWG", 64, {16, 32, 64, 128}, "C tile rows per work-group"),
              param("NWG", 64, {16, 32, 64, 128}, "C tile columns per work-group"),
              param("KWG", 16, {8, 16, 32}, "k depth of one local-memory slice"),
              param("MDIMC", 16, {2, 4, 8, 16, 32}, "work-items along m"),
              param("NDIMC", 16, {2, 4, 8, 16, 32}, "work-items along n"),
              param("VWM", 4, {1, 2, 4, 8}, "vector width of A loads (along m)"),
              param("VWN", 4, {1, 2, 4, 8, 16}, "vector width of B loads and C accumulators"),
              param("SA", 1, {0, 1}, "stage A slices in local memory"),
              param("SB", 1, {0, 1}, "stage B slices in local memory"),
              param("PK", 0, {0, 1}, "pack operands as contiguous per-tile panels (CPU caches)")};
  s.constraint = [](const Params& p) -> std::string {
    const auto mwg = p.at("MWG"), nwg = p.at("NWG"), mdimc = p.at("MDIMC"), ndimc = p.at("NDIMC");
    if (mwg % (mdimc * p.at("VWM")) != 0) return "MWG must be a multiple of MDIMC*VWM";
    if (nwg % (ndimc * p.at("VWN")) != 0) return "NWG must be a multiple of NDIMC*VWN";
    const auto regs = (mwg / mdimc) * (nwg / ndimc);
    if (regs > 256) return "more than 256 accumulators per work-item";
    if (mdimc * ndimc < 4) return "fewer than 4 work-items per work-group";
    if ((p.at("SA") * mwg + p.at("SB") * nwg) * p.at("KWG") * 4 > 48 * 1024)
      return "local memory above 48 KiB";
    return limit_wg(mdimc * ndimc);
  };
  return s;
}

ParamSpace image_space() {
  ParamSpace s;
  s.params = {param("WGX", 8, {4, 8, 16, 32}, "work-group size along n (4 columns each)"),
              param("WGY", 8, {1, 2, 4, 8, 16}, "work-group size along m (4 rows each)")};
  s.constraint = [](const Params& p) { return limit_wg(p.at("WGX") * p.at("WGY")); };
  return s;
}

ParamSpace direct_space() {
  ParamSpace s;
  s.params = {param("TS", 32, {16, 32, 64}, "C tile edge per work-group"),
              param("TK", 8, {4, 8, 16, 32}, "k depth of one local-memory slice"),
              param("WPT", 2, {1, 2, 4, 8}, "C block edge per work-item (WPT x WPT)")};
  s.constraint = [](const Params& p) -> std::string {
    if (p.at("TS") % p.at("WPT") != 0) return "TS must be a multiple of WPT";
    const auto rt = p.at("TS") / p.at("WPT");
    if (rt < 2) return "fewer than 4 work-items per work-group";
    return limit_wg(rt * rt);
  };
  return s;
}

// Defaults for a Hopper GPU: 128 x 128 tiles, 256 work-items with 8 x 8 outputs each (two
// float4 fragments of A and of B per k step), KWG = 16 -> 32 KiB of local memory for the two
// buffers, about 128 registers per work-item so two work-groups share an SM.
ParamSpace reg_db_space() {
  ParamSpace s;
  s.params = {param("MWG", 128, {32, 64, 128, 256}, "C tile rows per work-group"),
              param("NWG", 128, {32, 64, 128, 256}, "C tile columns per work-group"),
              param("KWG", 16, {8, 16, 32}, "k depth of one local-memory buffer"),
              param("MDIMC", 16, {4, 8, 16, 32}, "work-items along m"),
              param("NDIMC", 16, {4, 8, 16, 32}, "work-items along n"),
              param("VWM", 4, {1, 2, 4, 8}, "vector width of A loads (global and local)"),
              param("VWN", 4, {1, 2, 4, 8}, "vector width of B loads and C accumulators")};
  s.constraint = [](const Params& p) -> std::string {
    const auto mwg = p.at("MWG"), nwg = p.at("NWG"), kwg = p.at("KWG");
    const auto mdimc = p.at("MDIMC"), ndimc = p.at("NDIMC"), nt = mdimc * ndimc;
    if (mwg % (mdimc * p.at("VWM")) != 0) return "MWG must be a multiple of MDIMC*VWM";
    if (nwg % (ndimc * p.at("VWN")) != 0) return "NWG must be a multiple of NDIMC*VWN";
    if ((kwg * mwg / p.at("VWM")) % nt != 0) return "A tile vectors must split evenly over items";
    if ((kwg * nwg / p.at("VWN")) % nt != 0) return "B tile vectors must split evenly over items";
    if ((mwg / mdimc) * (nwg / ndimc) > 128) return "more than 128 accumulators per work-item";
    if (2 * (mwg + nwg) * kwg * 4 > 48 * 1024) return "two local buffers above 48 KiB";
    return limit_wg(nt);
  };
  return s;
}

}  // namespace kafel::ocl
