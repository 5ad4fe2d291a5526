// Rung ocl.image (kernels/image.cl) and its variants ocl.image_buf (B stays a buffer) and
// ocl.image_fma (k unrolled by two texels, explicit fma): operands as image2d objects, as on
// Adreno/Mali GPUs, 4x4 outputs per work-item. Needs image support; no f64 or bf16 channels.
#include "core/registry.hpp"
#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {
namespace {

using S = std::size_t;

enum class Variant { both, a_only, fma };

const char* rung_name(Variant v) {
  return v == Variant::both ? "image" : v == Variant::a_only ? "image_buf" : "image_fma";
}

ParamSpace image_space() {
  ParamSpace s;
  s.params = {param("WGX", 8, {4, 8, 16, 32}, 1, 1024, "work-group size along n (4 columns each)"),
              param("WGY", 8, {1, 2, 4, 8, 16}, 1, 1024, "work-group size along m (4 rows each)")};
  s.constraint = [](const Params& p) { return limit_work_group(p.at("WGX") * p.at("WGY")); };
  return s;
}

std::vector<S> image_work_group(const Params& p) {
  return {S(p.at("WGX")), S(p.at("WGY"))};
}

// The padded operand sizes: m and n to 4 x the work-group, k to whole texels (fma: pairs).
struct Padded {
  std::int64_t mp, np, kp;
};

Padded padded(const Params& p, Variant v, const GemmDesc& g) {
  return {round_up(g.m, 4 * p.at("WGY")), round_up(g.n, 4 * p.at("WGX")),
          round_up(g.k, v == Variant::fma ? 8 : 4)};
}

// The images' texel extents (A: kp/4 x mp; B: np/4 x kp) against the device's image2d limits.
std::string fits_images(const Device& d, const Padded& s, Variant v) {
  const Context& ctx = Context::get(d);
  const auto too_big = [&](std::int64_t w, std::int64_t h, const char* what) -> std::string {
    if (S(w) <= ctx.image2d_max_width() && S(h) <= ctx.image2d_max_height()) return "";
    return std::string(what) + " image of " + std::to_string(w) + " x " + std::to_string(h) +
           " texels exceeds the device's image2d limit of " +
           std::to_string(ctx.image2d_max_width()) + " x " +
           std::to_string(ctx.image2d_max_height());
  };
  if (std::string why = too_big(s.kp / 4, s.mp, "the A"); !why.empty()) return why;
  return v == Variant::a_only ? "" : too_big(s.np / 4, s.kp, "the B");
}

class ImagePlan final : public OclPlan {
 public:
  ImagePlan(const Device& d, const GemmDesc& g, const Params& p, Variant v)
      : OclPlan(d, g, p), variant_(v) {
    const DType t = g.types.a;
    if (t != DType::f32 && t != DType::f16 && t != DType::i32)
      throw Unsupported("image rungs: OpenCL has no image channel type for " +
                        std::string(to_string(t)));
    if (!ctx_.image_support())
      throw Unsupported(ctx_.name() + " has no image support (CL_DEVICE_IMAGE_SUPPORT is false)");
  }

 protected:
  void prepare() override {
    const std::string name = std::string("ocl.") + rung_name(variant_);
    const std::vector<S> local = image_work_group(params_);
    check_limits(local, 0, name);
    const Padded s = padded(params_, variant_, desc_);
    mp_ = int(s.mp);
    np_ = int(s.np);
    kp_ = int(s.kp);
    const DType t = desc_.types.a;
    const cl_channel_type ct = t == DType::f32   ? CL_FLOAT
                               : t == DType::f16 ? CL_HALF_FLOAT
                                                 : CL_SIGNED_INT32;
    aimg_ = make_image2d(ctx_, S(kp_ / 4), S(mp_), ct);  // texel (kq, i)
    apad_ = scratch(std::int64_t(mp_) * kp_);
    bpad_ = scratch(std::int64_t(kp_) * np_);
    if (variant_ != Variant::a_only) bimg_ = make_image2d(ctx_, S(np_ / 4), S(kp_), ct);
    program_ = build({"image.cl"});
    kernel_ =
        checked_kernel(program_, ("gemm_" + std::string(rung_name(variant_))).c_str(), local, name);
  }

  std::vector<Event> enqueue(Operands& s) override {
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
    ev.push_back(launch(ctx_, kernel_, {S(np_ / 4), S(mp_ / 4)}, image_work_group(params_)));
    return ev;
  }

 private:
  Event to_image(Buffer& src, Buffer& image, S width, S height) {
    const S origin[3] = {0, 0, 0};
    const S region[3] = {width, height, 1};
    cl_event e = nullptr;
    check(clEnqueueCopyBufferToImage(ctx_.queue(), src.handle(), image.handle(), 0, origin, region,
                                     0, nullptr, &e),
          "clEnqueueCopyBufferToImage");
    return Event(e);
  }

  Variant variant_;
  int mp_ = 0, np_ = 0, kp_ = 0;
  Buffer apad_, bpad_, aimg_, bimg_;
  Program program_;
  Kernel kernel_;
};

GemmKernel image_kernel(Variant v, std::string summary) {
  return ocl_kernel(
      rung_name(v), std::move(summary), 7, image_types(), image_space(),
      [v](const Device& d, const GemmDesc& g, const Params& p) -> std::unique_ptr<GemmPlan> {
        return std::make_unique<ImagePlan>(d, g, p, v);
      },
      [v](const Device& d, const GemmDesc& g, const Params& p) {
        if (std::string why = fits_device(d, image_work_group(p), 0); !why.empty()) return why;
        return fits_images(d, padded(p, v, g), v);
      });
}

const Register registered{std::vector<GemmKernel>{
    image_kernel(Variant::both, "image2d operands (A and B images), 4x4 per work-item"),
    image_kernel(Variant::a_only, "A as image2d, B as buffer, 4x4 per work-item"),
    image_kernel(Variant::fma, "image2d operands, k unrolled by 2 texels, explicit fma"),
}};

}  // namespace
}  // namespace kafel::ocl
