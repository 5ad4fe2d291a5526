// The shared part of every OpenCL GEMM rung (see gemm_plan.hpp): element roles, the checks made
// before a plan (32-bit indices, device limits), upload, pre-pass and timing.
#include "opencl/gemm_plan.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace kafel::ocl {
namespace {

constexpr std::int64_t kIndexLimit = std::numeric_limits<std::int32_t>::max();

std::int64_t span_of(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

void check_index(std::int64_t elements, const char* what) {
  if (elements > kIndexLimit)
    throw Unsupported(std::string("OpenCL kernels index with 32-bit integers: ") + what +
                      " spans " + std::to_string(elements) + " elements (limit 2^31-1)");
}

std::size_t work_items(const std::vector<std::size_t>& local) {
  std::size_t total = 1;
  for (std::size_t l : local) total *= l;
  return total;
}

}  // namespace

std::vector<TypeSupport> buffer_types() {
  std::vector<TypeSupport> out = natural_types({DType::f32, DType::i32, DType::f16, DType::bf16});
  out.push_back({GemmTypes::of(DType::f64), Cap::fp64});
  out.push_back({GemmTypes::of(DType::f16, Compute::f16), Cap::fp16});
  return out;
}

std::vector<TypeSupport> image_types() {
  std::vector<TypeSupport> out = natural_types({DType::f32, DType::i32, DType::f16}, Cap::images);
  out.push_back({GemmTypes::of(DType::f16, Compute::f16), Cap::images | Cap::fp16});
  return out;
}

std::string type_options(const Context& ctx, const GemmTypes& t) {
  const auto refuse = [&](const std::string& why) -> std::string {
    throw Unsupported("OpenCL GEMM " + t.name() + " on " + ctx.name() + ": " + why);
  };
  if (t.a != t.b || t.a != t.c) refuse("the kernels take one storage type for A, B and C");
  const char* storage = t.a == DType::f32    ? "F32"
                        : t.a == DType::f64  ? "F64"
                        : t.a == DType::i32  ? "I32"
                        : t.a == DType::f16  ? "F16"
                        : t.a == DType::bf16 ? "BF16"
                                             : nullptr;
  const char* compute = t.compute == Compute::f32   ? "F32"
                        : t.compute == Compute::f64 ? "F64"
                        : t.compute == Compute::i32 ? "I32"
                        : t.compute == Compute::f16 ? "F16"
                                                    : nullptr;
  if (!storage || !compute) refuse("the kernels do not implement these element roles");
  if (t.compute == Compute::f64 && !ctx.fp64()) refuse("the device has no cl_khr_fp64");
  if (t.compute == Compute::f16 && !ctx.fp16()) refuse("the device has no cl_khr_fp16");
  return std::string("-DKAFEL_STORE_") + storage + " -DKAFEL_COMPUTE_" + compute;
}

std::size_t acc_bytes(const GemmTypes& t) {
  return dtype_size(compute_info(t.compute).accumulator);
}

Defines defines_of(const Params& p) {
  Defines out;
  for (const auto& [name, value] : p)
    if (name != "SPLITK") out.emplace_back(name, value);
  return out;
}

std::string fits_limits(const std::vector<std::size_t>& local, std::size_t max_work_group,
                        std::uint64_t local_bytes, std::uint64_t local_memory) {
  const std::size_t items = work_items(local);
  if (items > max_work_group)
    return "a work-group of " + std::to_string(items) +
           " work-items exceeds the device's limit of " + std::to_string(max_work_group) +
           " (CL_DEVICE_MAX_WORK_GROUP_SIZE)";
  if (local_bytes > local_memory)
    return "needs " + std::to_string(local_bytes) + " bytes of local memory, the device has " +
           std::to_string(local_memory) + " (CL_DEVICE_LOCAL_MEM_SIZE)";
  return "";
}

std::string fits_device(const Device& device, const std::vector<std::size_t>& local,
                        std::uint64_t local_bytes) {
  return fits_limits(local, Context::get(device).max_work_group_size(), local_bytes,
                     device.local_memory);
}

std::string fits_index(const GemmDesc& desc) {
  for (auto [v, what] : {std::pair{desc.m, "m"}, {desc.n, "n"}, {desc.k, "k"}})
    if (v > kIndexLimit)
      return std::string("the kernels index with 32-bit integers: ") + what + " = " +
             std::to_string(v) + " exceeds 2^31-1";
  return "";
}

std::string limit_work_group(std::int64_t threads) {
  return threads > 1024 ? "work-group of " + std::to_string(threads) + " exceeds 1024" : "";
}

std::string vector_width(const char* name, std::int64_t v) {
  for (std::int64_t w : {1, 2, 4, 8, 16})
    if (v == w) return "";
  return std::string(name) + "=" + std::to_string(v) + " is not a vector width (1, 2, 4, 8, 16)";
}

GemmKernel ocl_kernel(const std::string& rung_name, std::string summary, int rung,
                      std::vector<TypeSupport> types, ParamSpace params, PlanFactory make_plan,
                      Limits limits) {
  GemmKernel k;
  k.name = "ocl." + rung_name;
  k.summary = std::move(summary);
  k.rung = rung;
  k.types = std::move(types);
  k.params = std::move(params);
  k.make_plan = std::move(make_plan);
  k.can_implement = [limits = std::move(limits)](const Device& d, const GemmDesc& g,
                                                 const Params& p) -> std::string {
    if (std::string why = fits_index(g); !why.empty()) return why;
    return limits ? limits(d, g, p) : "";
  };
  return k;
}

OclPlan::OclPlan(const Device& device, const GemmDesc& desc, const Params& params)
    : ctx_(Context::get(device)), desc_(desc), params_(params) {
  desc.validate();
  type_options(ctx_, desc.types);  // throws early for roles the device cannot run
  if (const std::string why = fits_index(desc); !why.empty()) throw Unsupported("OpenCL " + why);
  m_ = int(desc.m);
  n_ = int(desc.n);
  k_ = int(desc.k);
  batch_ = int(std::max<std::int64_t>(1, desc.batch));
  cpu_device_ = !device.is_gpu;
}

Program OclPlan::build(const std::vector<std::string>& files, Defines extra) const {
  std::vector<std::string> all{"common.cl"};
  all.insert(all.end(), files.begin(), files.end());
  Defines defs = defines_of(params_);
  defs.insert(defs.end(), extra.begin(), extra.end());
  if (cpu_device_) defs.emplace_back("CPU_DEVICE", 1);  // code shaped for CPU compilers
  return ocl::build(ctx_, all, defs, type_options(ctx_, desc_.types));
}

void OclPlan::unsupported(const std::string& rung, const std::string& what) const {
  const std::string config = params_.empty() ? "" : " " + format_params(params_);
  throw Unsupported(rung + config + " (" + desc_.types.name() + ") on " + ctx_.name() + ": " +
                    what);
}

void OclPlan::check_limits(const std::vector<std::size_t>& local, std::uint64_t local_bytes,
                           const std::string& rung) const {
  const std::string why =
      fits_limits(local, ctx_.max_work_group_size(), local_bytes, ctx_.local_memory());
  if (!why.empty()) unsupported(rung, why);
}

Kernel OclPlan::checked_kernel(const Program& program, const char* name,
                               const std::vector<std::size_t>& local,
                               const std::string& rung) const {
  Kernel k = program.kernel(name);
  std::size_t max_items = 0;
  cl_ulong local_bytes = 0;
  check(clGetKernelWorkGroupInfo(k.handle(), ctx_.device(), CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof max_items, &max_items, nullptr),
        std::string("clGetKernelWorkGroupInfo(") + name + ", CL_KERNEL_WORK_GROUP_SIZE)");
  check(clGetKernelWorkGroupInfo(k.handle(), ctx_.device(), CL_KERNEL_LOCAL_MEM_SIZE,
                                 sizeof local_bytes, &local_bytes, nullptr),
        std::string("clGetKernelWorkGroupInfo(") + name + ", CL_KERNEL_LOCAL_MEM_SIZE)");
  const std::size_t items = work_items(local);
  if (items > max_items)
    unsupported(rung, "a work-group of " + std::to_string(items) + " work-items exceeds the " +
                          std::to_string(max_items) + " that the built kernel " + name +
                          " allows (CL_KERNEL_WORK_GROUP_SIZE)");
  if (local_bytes > ctx_.local_memory())
    unsupported(rung, "the built kernel " + std::string(name) + " uses " +
                          std::to_string(local_bytes) + " bytes of local memory, the device has " +
                          std::to_string(ctx_.local_memory()) +
                          " (CL_KERNEL_LOCAL_MEM_SIZE > CL_DEVICE_LOCAL_MEM_SIZE)");
  return k;
}

Buffer OclPlan::scratch(std::int64_t elements, int count) const {
  check_index(elements, "a padded operand");
  return Buffer(ctx_, std::size_t(elements) * std::size_t(count) * dtype_size(desc_.types.c));
}

void OclPlan::load(const GemmArgs& args, int slots) {
  if (slots < 1) throw InvalidArgument("GemmPlan::load: slots must be >= 1");
  args_ = args;
  const std::size_t es = dtype_size(desc_.types.c);  // A, B and C share one storage type
  const auto& d = desc_;
  std::int64_t a_span = d.op_a == Op::N ? span_of(d.m, d.k, args.lda) : span_of(d.k, d.m, args.lda);
  std::int64_t b_span = d.op_b == Op::N ? span_of(d.k, d.n, args.ldb) : span_of(d.n, d.k, args.ldb);
  std::int64_t c_span = span_of(d.m, d.n, args.ldc);
  check_index(a_span, "A");
  check_index(b_span, "B");
  check_index(c_span, "C");
  sa_ = d.op_a == Op::N ? Strides{int(args.lda), 1} : Strides{1, int(args.lda)};
  sb_ = d.op_b == Op::N ? Strides{int(args.ldb), 1} : Strides{1, int(args.ldb)};
  ldc_ = int(args.ldc);
  // A batch lies matrix after matrix on the device; kernels add z * stride with 64-bit offsets.
  stride_a_ = a_span;
  stride_b_ = b_span;
  stride_c_ = c_span;
  slots_.clear();
  for (int s = 0; s < slots; ++s) {
    Operands o;
    o.a = Buffer(ctx_, std::size_t(a_span * batch_) * es);
    o.b = Buffer(ctx_, std::size_t(b_span * batch_) * es);
    o.c = Buffer(ctx_, std::size_t(c_span * batch_) * es);
    for (int i = 0; i < batch_; ++i) {
      o.a.write(ctx_, args.a_of(i), std::size_t(a_span) * es, std::size_t(i * a_span) * es);
      o.b.write(ctx_, args.b_of(i), std::size_t(b_span) * es, std::size_t(i * b_span) * es);
      o.c.write(ctx_, args.c_of(i), std::size_t(c_span) * es, std::size_t(i * c_span) * es);
    }
    slots_.push_back(std::move(o));
  }
  if (m_ == 0 || n_ == 0) return;
  prepass_ = build({"prepass.cl"});
  pack_k_ = prepass_.kernel("pack");
  pack_blocks_k_ = prepass_.kernel("pack_blocks");
  scale_k_ = prepass_.kernel("scale_c");
  reduce_k_ = prepass_.kernel("splitk_reduce");
  // prepare() decides from the operands' layout (what to pack, how the kernel reads A): a
  // reload with other leading dimensions prepares again.
  const auto layout = std::make_tuple(sa_.rs, sa_.cs, sb_.rs, sb_.cs, stride_a_, stride_b_);
  if (k_ > 0 && (!prepared_ || layout != prepared_layout_)) {
    prepare();
    prepared_ = true;
    prepared_layout_ = layout;
  }
}

double OclPlan::run(int slot) {
  if (slot < 0 || slot >= int(slots_.size()))
    throw InvalidArgument("GemmPlan::run: slot " + std::to_string(slot) + " was not loaded");
  if (m_ == 0 || n_ == 0) return 0;
  Operands& s = slots_[slot];
  std::vector<Event> events;
  if (k_ == 0) {
    scale_k_.arg(0, m_);
    scale_k_.arg(1, n_);
    set_scalar(scale_k_, 2, desc_.beta);
    scale_k_.arg(3, s.c);
    scale_k_.arg(4, ldc_);
    scale_k_.arg(5, cl_long(stride_c_));
    events.push_back(launch(ctx_, scale_k_, {std::size_t(n_), std::size_t(m_), std::size_t(batch_)},
                            {16, 16, 1}));
  } else {
    events = enqueue(s);
  }
  return span_ms(events);
}

void OclPlan::fetch() {
  if (slots_.empty()) throw InvalidArgument("GemmPlan::fetch before load");
  const std::size_t bytes = std::size_t(stride_c_) * dtype_size(desc_.types.c);
  for (int i = 0; i < batch_; ++i) slots_[0].c.read(ctx_, args_.c_of(i), bytes, i * bytes);
}

void OclPlan::set_scalar(Kernel& k, cl_uint i, double v) const {
  switch (desc_.types.compute) {
    case Compute::f64:
      k.arg(i, v);
      break;
    case Compute::i32:  // GemmDesc::validate has made sure v is an int32 value
      k.arg(i, static_cast<cl_int>(std::llround(v)));
      break;
    default:
      k.arg(i, static_cast<cl_float>(v));
  }
}

void OclPlan::set_alpha_beta(Kernel& k, cl_uint i) const {
  set_scalar(k, i, desc_.alpha);
  set_scalar(k, i + 1, desc_.beta);
}

Event OclPlan::pack(Buffer& src, Strides st, int rows, int cols, std::int64_t src_stride,
                    Buffer& dst, int rows_p, int cols_p, int panel) {
  Kernel& k = cpu_device_ ? pack_blocks_k_ : pack_k_;
  k.args(rows, cols, src, st.rs, st.cs, dst, cols_p, rows_p, cols_p, panel, cl_long(src_stride),
         cl_long(std::int64_t(rows_p) * cols_p));
  if (cpu_device_)
    return launch(
        ctx_, k,
        {std::size_t((cols_p + 15) / 16), std::size_t((rows_p + 15) / 16), std::size_t(batch_)},
        {});
  return launch(ctx_, k, {std::size_t(cols_p), std::size_t(rows_p), std::size_t(batch_)},
                {16, 16, 1});
}

Event OclPlan::pack_a(Operands& s, Buffer& dst, bool kmajor, int rows_p, int cols_p, int panel) {
  if (kmajor) return pack(s.a, {sa_.cs, sa_.rs}, k_, m_, stride_a_, dst, rows_p, cols_p, panel);
  return pack(s.a, sa_, m_, k_, stride_a_, dst, rows_p, cols_p, panel);
}

Event OclPlan::pack_b(Operands& s, Buffer& dst, bool kmajor, int rows_p, int cols_p, int panel) {
  if (kmajor) return pack(s.b, sb_, k_, n_, stride_b_, dst, rows_p, cols_p, panel);
  return pack(s.b, {sb_.cs, sb_.rs}, n_, k_, stride_b_, dst, rows_p, cols_p, panel);
}

Event OclPlan::reduce_splits(Operands& s, Buffer& partials, int splits) {
  reduce_k_.args(m_, n_, splits, batch_, partials);
  set_alpha_beta(reduce_k_, 5);
  reduce_k_.arg(7, s.c);
  reduce_k_.arg(8, ldc_);
  reduce_k_.arg(9, cl_long(stride_c_));
  return launch(ctx_, reduce_k_, {std::size_t(n_), std::size_t(m_), std::size_t(batch_)},
                {16, 16, 1});
}

}  // namespace kafel::ocl
