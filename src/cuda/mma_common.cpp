// What the three tensor-core rungs share on the host: the element roles they implement, the
// mapping of roles to a compute mode, their limits, and the registration of a fixed-table rung.
#include <string>
#include <utility>
#include <vector>

#include "cuda/mma_rungs.hpp"
#include "cuda/plan.hpp"
#include "kafel/error.hpp"

namespace kafel::cuda::tc {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::f16:
      return "f16";
    case Mode::bf16:
      return "bf16";
    case Mode::tf32:
      return "tf32";
    case Mode::tf32x3:
      return "3xtf32";
    case Mode::i8:
      return "i8";
    case Mode::f64:
      return "f64";
  }
  return "?";
}

std::string Shape::name() const {
  return "m" + std::to_string(bm) + "n" + std::to_string(bn) + "k" + std::to_string(bk) + "w" +
         std::to_string(wm) + "x" + std::to_string(wn) + "s" + std::to_string(stages) +
         (xfrag ? "x" : "");
}

std::vector<TypeSupport> tensor_types() {
  const Caps mma = Cap::mma_sm80;
  std::vector<TypeSupport> v;
  for (DType t : {DType::f16, DType::bf16}) {
    GemmTypes to_f32 = GemmTypes::of(t);
    to_f32.c = DType::f32;
    v.push_back({GemmTypes::of(t), mma});
    v.push_back({to_f32, mma});
  }
  v.push_back({GemmTypes::of(DType::f32, Compute::tf32), mma});
  v.push_back({GemmTypes::of(DType::f32, Compute::tf32x3), mma});
  v.push_back({GemmTypes::of(DType::i8), mma});
  v.push_back({GemmTypes::of(DType::f64), mma});
  return v;
}

Mode mode_of(const GemmTypes& t) {
  if (t.a == t.b) {
    if ((t.a == DType::f16 || t.a == DType::bf16) && t.compute == Compute::f32 &&
        (t.c == t.a || t.c == DType::f32))
      return t.a == DType::f16 ? Mode::f16 : Mode::bf16;
    if (t.a == DType::f32 && t.c == DType::f32 && t.compute == Compute::tf32) return Mode::tf32;
    if (t.a == DType::f32 && t.c == DType::f32 && t.compute == Compute::tf32x3) return Mode::tf32x3;
    if (t == GemmTypes::of(DType::i8)) return Mode::i8;
    if (t == GemmTypes::of(DType::f64)) return Mode::f64;
  }
  throw Unsupported("tensor-core rungs: no mode for element roles " + t.name());
}

Problem problem_of(const DeviceGemm& g) {
  const GemmTypes& t = g.desc.types;
  const Out out = t.c == DType::f16 ? Out::f16 : t.c == DType::bf16 ? Out::bf16 : Out::acc;
  return {mode_of(t),
          out,
          g.a,
          g.lda,
          g.b,
          g.ldb,
          g.c,
          g.ldc,
          static_cast<int>(g.desc.m),
          static_cast<int>(g.desc.n),
          static_cast<int>(g.desc.k),
          g.desc.alpha,
          g.desc.beta};
}

const Compiled* find(const std::vector<Compiled>& table, const GemmTypes& t, const Shape* shape) {
  Mode m;
  try {
    m = mode_of(t);
  } catch (const Unsupported&) {
    return nullptr;
  }
  for (const Compiled& c : table)
    if (c.mode == m && (!shape || c.shape == *shape)) return &c;
  return nullptr;
}

std::string limits(const Compiled& c, const Device& dev, const GemmDesc& d) {
  if (std::string why = dims_fit(d); !why.empty()) return why;
  const long long tiles =
      ((d.m + c.shape.bm - 1) / c.shape.bm) * ((d.n + c.shape.bn - 1) / c.shape.bn);
  if (tiles > 0x7fffffffLL)
    return d.shape() + " needs " + std::to_string(tiles) + " tiles of " +
           std::to_string(c.shape.bm) + "x" + std::to_string(c.shape.bn) +
           ", more than CUDA's grid limit of 2^31 - 1 blocks";
  if (c.smem > dev.local_memory)
    return "tile " + c.shape.name() + " needs " + std::to_string(c.smem / 1024) +
           " KiB of shared memory per block for " + d.types.name() + ", " + dev.id + " allows " +
           std::to_string(dev.local_memory / 1024) + " KiB";
  if (c.mode == Mode::f64 && dev.sm_version < 90)
    return "f64 on the tensor cores needs compute capability 9.0 (mma.m16n8k8.f64), " + dev.id +
           " has " + std::to_string(dev.sm_version / 10) + "." +
           std::to_string(dev.sm_version % 10);
  return "";
}

GemmKernel fixed_rung(std::string name, std::string summary, int rung,
                      const std::vector<Compiled>& (*table)()) {
  GemmKernel k;
  k.name = name;
  k.summary = std::move(summary);
  k.rung = rung;
  k.types = tensor_types();
  // Op-T operands are transposed on the device first (inside the timed region): the kernels
  // read A k-contiguous and B n-contiguous.
  const PlanTraits traits{OperandForm::ops_n, {}, {}};
  k.make_plan = [table, name, traits](const Device& d, const GemmDesc& desc, const Params& p) {
    Launcher launch = [table, name](const DeviceGemm& g, const Params&, cudaStream_t s) {
      const Compiled* c = find(table(), g.desc.types);
      if (!c) throw Unsupported(name + ": " + g.desc.types.name() + " is not compiled");
      c->launch(problem_of(g), s);
    };
    return make_cuda_plan(d, desc, p, std::move(launch), traits);
  };
  k.can_implement = [table, name](const Device& d, const GemmDesc& desc,
                                  const Params&) -> std::string {
    const Compiled* c = find(table(), desc.types);
    if (!c) return name + " is not compiled for " + desc.types.name();
    return limits(*c, d, desc);
  };
  return k;
}

}  // namespace kafel::cuda::tc
