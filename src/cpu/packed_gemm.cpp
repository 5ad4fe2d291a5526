// The packed GEMM driver: packing of A and B panels, the five loops around the micro-kernel,
// edge tiles, alpha/beta, and the split of the work over the threads of the pool.
#include "cpu/packed_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/thread_pool.hpp"
#include "cpu/blocking.hpp"
#include "cpu/element.hpp"
#include "cpu/packed_pack.hpp"
#include "cpu/ukernel.hpp"
#include "kafel/error.hpp"

namespace kafel::cpu {
namespace {

// Grow-only 64-byte aligned scratch memory, kept per calling thread so repeated calls do not
// pay for fresh pages (for a 256^3 GEMM the page faults would cost more than the packing).
class Scratch {
 public:
  void* get(std::size_t bytes) {
    bytes = (bytes + 63) / 64 * 64;
    if (bytes > size_) {
      void* p = std::aligned_alloc(64, bytes);
      if (!p) throw OutOfMemory("packed GEMM: cannot allocate " + std::to_string(bytes) + " bytes");
      mem_.reset(p);
      size_ = bytes;
    }
    return mem_.get();
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> mem_;
  std::size_t size_ = 0;
};

struct Workspace {
  Scratch a[2];            // packed A blocks, double-buffered (see run_job)
  std::vector<Scratch> b;  // one packed B block per thread
  Scratch c;               // full-width copy of a narrower C (f16, bf16)
};

Workspace& workspace() {
  thread_local Workspace ws;
  return ws;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// [begin, end) of part `i` when `count` items are split into `parts` near-equal parts.
std::pair<std::int64_t, std::int64_t> share(std::int64_t count, int parts, int i) {
  return {count * i / parts, count * (i + 1) / parts};
}

// How one (MC block, KC block) stage is cut into tasks: column chunks of C (each packs its own
// B block, so B is packed once) and, when n is too thin to give every thread work, row groups.
struct TaskGrid {
  std::int64_t width = 0;   // columns per chunk, a multiple of NR, at most NC
  std::int64_t chunks = 1;  // column chunks
  std::int64_t groups = 1;  // row groups of MR panels
  std::int64_t tasks() const { return chunks * groups; }
};

// About `per_thread` column chunks per thread (4 for the vector kernels), so a thread that is
// descheduled (the machine is shared) or slower leaves its share to the others instead of
// holding everybody at a barrier. AMX asks for 1: a chunk as wide as NC allows reuses each A
// panel over more calls (1024^3 bf16: 16 calls per panel instead of 4).
TaskGrid make_grid(std::int64_t n, std::int64_t m_panels, const Blocking& blk, int threads,
                   int per_thread) {
  TaskGrid g;
  const std::int64_t want = std::int64_t(per_thread) * threads;
  g.width = std::clamp(ceil_div(ceil_div(n, want), blk.nr) * blk.nr, std::int64_t(blk.nr), blk.nc);
  g.chunks = ceil_div(n, g.width);
  if (threads > 1 && g.chunks < 2 * threads)
    g.groups = std::clamp(ceil_div(2 * threads, g.chunks), std::int64_t(1), m_panels);
  return g;
}

// Everything one GEMM needs, fixed before the threads start. D: storage type of A and B,
// F: the packed format (its compute type T is also C's type here; a narrower C goes through a
// T copy, see dispatch).
template <DType D, Format F>
struct Job {
  using S = typename Storage<D>::T;
  using P = typename FormatTypes<F>::P;
  using T = typename FormatTypes<F>::T;
  using Packer = Pack<D, F>;
  std::int64_t m, n, k;
  const S* a;
  std::int64_t lda;
  bool a_trans;
  const S* b;
  std::int64_t ldb;
  bool b_trans;
  T* c;
  std::int64_t ldc;
  T alpha, beta;
  Blocking blk;
  Ukernel<P, T> uk;
  bool a_in_place;  // full panels of A are read where they are (see PackedOptions::pack_a)
  Prefetch pf;
  P* abuf[2];
  std::vector<P*> bbuf;
};

// One (MC block, KC block) stage: its geometry, fixed before the threads start, and its
// progress, where threads claim A panels and tasks with fetch_add.
struct Stage {
  std::int64_t ic = 0, pc = 0, mc = 0, kc = 0, m_panels = 0;
  TaskGrid grid;
  std::atomic<std::int64_t> a_next{0}, t_next{0}, t_done{0};
  std::unique_ptr<std::atomic<bool>[]> a_ready;    // per A panel: it is packed
  std::unique_ptr<std::atomic<bool>[]> task_done;  // per task: its C tiles are written
  bool finished() const { return t_done.load(std::memory_order_acquire) == grid.tasks(); }
};

constexpr int kMaxTile = 1024;  // elements of the largest register tile (edge-tile buffer)

// One tile of C that is cut by the matrix edge: the micro-kernel (kernel(tmp, ldtmp)) writes a
// full tile into a buffer with beta 0, the valid rows x cols are merged into C.
template <class T, class Kernel>
void edge_tile(int nr, T* c, std::int64_t ldc, int rows, int cols, T beta, Kernel kernel) {
  alignas(64) T tmp[kMaxTile];
  kernel(tmp, std::int64_t(nr));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      T& dst = c[i * ldc + j];
      dst = beta == T(0) ? tmp[i * nr + j] : tmp[i * nr + j] + beta * dst;
    }
}

// Packs B[pc:pc+kc, j0:j1) (NC at a time) and multiplies A-block panels [r0, r1) with it.
template <DType D, Format F, class T = typename FormatTypes<F>::T,
          class P = typename FormatTypes<F>::P>
void compute_part(const Job<D, F>& J, const P* abuf, const std::atomic<bool>* a_ready,
                  std::int64_t ic, std::int64_t mc, std::int64_t r0, std::int64_t r1,
                  std::int64_t j0, std::int64_t j1, std::int64_t pc, std::int64_t kc, T beta,
                  P* bbuf) {
  using Packer = Pack<D, F>;
  const int mr = J.blk.mr, nr = J.blk.nr;
  const std::int64_t a_panel = Packer::a_panel(mr, kc), b_panel = Packer::b_panel(nr, kc);
  for (std::int64_t jc = j0; jc < j1; jc += J.blk.nc) {
    const std::int64_t nc = std::min(J.blk.nc, j1 - jc);
    Packer::b_block(J.b, J.ldb, J.b_trans, pc, kc, jc, nc, nr, bbuf);
    for (std::int64_t ir = r0; ir < r1; ++ir) {
      wait_until([&] { return a_ready[ir].load(std::memory_order_acquire); });
      const int rows = int(std::min<std::int64_t>(mr, mc - ir * mr));
      const P* ap = abuf + ir * a_panel;
      T* crow = J.c + (ic + ir * mr) * J.ldc + jc;
      // A full panel of A read in place has the packed panel's bits (a_in_place is set only
      // where the packing would copy A's values unchanged).
      const bool in_place = J.a_in_place && rows == mr;
      const P* arow =
          in_place ? reinterpret_cast<const P*>(J.a + (ic + ir * mr) * J.lda + pc) : nullptr;
      auto tile = [&](const P* bp, T* dst, std::int64_t ld, T b) {
        if (in_place)
          J.uk.rows(kc, arow, J.lda, bp, dst, ld, J.alpha, b, J.pf);
        else
          J.uk.fn(kc, ap, bp, dst, ld, J.alpha, b, J.pf);
      };
      for (std::int64_t jr = 0; jr < nc; jr += nr) {
        const int cols = int(std::min<std::int64_t>(nr, nc - jr));
        const P* bp = bbuf + jr / nr * b_panel;
        if (rows == mr && cols == nr)
          tile(bp, crow + jr, J.ldc, beta);
        else
          edge_tile(nr, crow + jr, J.ldc, rows, cols, beta,
                    [&](T* tmp, std::int64_t ld) { tile(bp, tmp, ld, T(0)); });
      }
    }
  }
}

// The body every thread runs; work is claimed, never assigned, so the GEMM finishes even if
// some thread never shows up. Per stage (MC block ic, KC block pc): claim and pack A panels;
// claim and run tasks, each waiting for the task of the previous stage that updated the same
// C tiles and, panel by panel, for the A panels it reads (a whole-block wait stalled every
// stage on a thread descheduled in the middle of one panel: f32 2048^3 at a load average of
// 20 ran at 75 % of the cycles' peak against OpenBLAS's 86 %). A is double-buffered: a thread packs
// stage s+1 while others finish stage s, which is safe because stage s started only after stage
// s-1, the last user of that buffer, had finished.
template <DType D, Format F>
void run_job(const Job<D, F>& J, std::vector<Stage>& stages, int tid) {
  using T = typename FormatTypes<F>::T;
  using Packer = Pack<D, F>;
  const int mr = J.blk.mr;
  if (J.uk.start) J.uk.start();
  for (std::size_t s = 0; s < stages.size(); ++s) {
    Stage& st = stages[s];
    auto* abuf = J.abuf[s & 1];
    const std::int64_t a_panel = Packer::a_panel(mr, st.kc);
    // The buffer was last read by stage s-2.
    if (s >= 2) wait_until([&] { return stages[s - 2].finished(); });
    for (std::int64_t ir; (ir = st.a_next.fetch_add(1)) < st.m_panels;) {
      const int rows = int(std::min<std::int64_t>(mr, st.mc - ir * mr));
      if (!J.a_in_place || rows < mr)
        Packer::a(J.a, J.lda, J.a_trans, st.ic + ir * mr, rows, st.pc, st.kc, mr,
                  abuf + ir * a_panel);
      st.a_ready[ir].store(true, std::memory_order_release);
    }
    // Task t of the previous KC block of the same MC block wrote the same C tiles first.
    const Stage* prev = s > 0 && stages[s - 1].ic == st.ic ? &stages[s - 1] : nullptr;
    const T beta = st.pc == 0 ? J.beta : T(1);
    const TaskGrid& g = st.grid;
    for (std::int64_t t; (t = st.t_next.fetch_add(1)) < g.tasks(); st.t_done.fetch_add(1)) {
      if (prev) wait_until([&] { return prev->task_done[t].load(std::memory_order_acquire); });
      const std::int64_t j0 = t % g.chunks * g.width, j1 = std::min(J.n, j0 + g.width);
      const auto [r0, r1] = share(st.m_panels, int(g.groups), int(t / g.chunks));
      compute_part(J, abuf, st.a_ready.get(), st.ic, st.mc, r0, r1, j0, j1, st.pc, st.kc, beta,
                   J.bbuf[tid]);
      st.task_done[t].store(true, std::memory_order_release);
    }
  }
  if (J.uk.done) J.uk.done();
  // The caller returns only when every task of every stage is done.
  if (tid == 0)
    for (const Stage& st : stages) wait_until([&] { return st.finished(); });
}

// C = beta * C (k == 0 or alpha == 0: A and B are not read, as in BLAS).
template <class T>
void scale_c(T* c, std::int64_t ldc, std::int64_t m, std::int64_t n, T beta) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}

int threads_for(const PackedOptions& opt, const GemmDesc& d) {
  if (opt.threads > 0) return opt.threads;
  // Below ~2^18 multiply-adds per thread the wake-up and barrier cost more than they save.
  const double per_thread = 262144.0;
  const double useful = double(d.m) * double(d.n) * double(d.k) / per_thread;
  return int(std::clamp<double>(useful, 1.0, double(default_threads())));
}

template <DType D, Format F, class T = typename FormatTypes<F>::T, class S = typename Storage<D>::T>
void run_packed(const GemmDesc& d, const S* a, std::int64_t lda, const S* b, std::int64_t ldb, T* c,
                std::int64_t ldc, T alpha, T beta, const UkernelSet& set, const Blocking& blk,
                Prefetch pf, bool pack_a, int threads, Workspace& ws) {
  using P = typename FormatTypes<F>::P;
  using Packer = Pack<D, F>;
  if (d.k == 0 || alpha == T(0)) return scale_c(c, ldc, d.m, d.n, beta);
  const Ukernel<P, T> uk = pick_ukernel<F>(set);
  // A in place: the packing would copy A's values unchanged (f32, f64; i32 as uint32) from a
  // row-major op(A), and the micro-kernel set reads rows. Saves the A pass over memory (~3 % of
  // a 1024^3 f32 GEMM on 2 cores).
  constexpr bool kSameBits = (D == DType::f32 && F == Format::f32) ||
                             (D == DType::f64 && F == Format::f64) ||
                             (D == DType::i32 && F == Format::u32);
  const bool a_in_place = kSameBits && !pack_a && d.op_a == Op::N && uk.rows != nullptr;
  Job<D, F> J{
      d.m,  d.n, d.k, a,          lda, d.op_a == Op::T,    b, ldb, d.op_b == Op::T, c, ldc, alpha,
      beta, blk, uk,  a_in_place, pf,  {nullptr, nullptr}, {}};
  // Even blocks: k = 1024 with KC = 336 runs as 4 x 256, not 3 x 336 + a 16-deep block that
  // would rewrite all of C for little work (measured: f64 1024^3 went from 0.85x to ~parity).
  // Grouped formats need whole groups (AMX whole tile steps) in every block but the last.
  constexpr int G = format_kstep(F);
  J.blk.kc = ceil_div(ceil_div(d.k, ceil_div(d.k, blk.kc)), G) * G;
  J.blk.mc = ceil_div(ceil_div(d.m, ceil_div(d.m, blk.mc)), blk.mr) * blk.mr;
  J.blk.nc = std::min(blk.nc, ceil_div(d.n, blk.nr) * blk.nr);
  const std::size_t a_bytes =
      sizeof(P) * std::size_t(J.blk.mc / blk.mr * Packer::a_panel(blk.mr, J.blk.kc));
  const std::size_t b_bytes =
      sizeof(P) * std::size_t(J.blk.nc / blk.nr * Packer::b_panel(blk.nr, J.blk.kc));
  for (int i = 0; i < 2; ++i) J.abuf[i] = static_cast<P*>(ws.a[i].get(a_bytes));
  if (static_cast<int>(ws.b.size()) < threads) ws.b.resize(threads);
  for (int t = 0; t < threads; ++t) J.bbuf.push_back(static_cast<P*>(ws.b[t].get(b_bytes)));
  const std::int64_t k_blocks = ceil_div(d.k, J.blk.kc);
  std::vector<Stage> stages(std::size_t(ceil_div(d.m, J.blk.mc) * k_blocks));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    Stage& st = stages[s];
    st.ic = std::int64_t(s) / k_blocks * J.blk.mc;
    st.pc = std::int64_t(s) % k_blocks * J.blk.kc;
    st.mc = std::min(J.blk.mc, d.m - st.ic);
    st.kc = std::min(J.blk.kc, d.k - st.pc);
    st.m_panels = ceil_div(st.mc, blk.mr);
    st.grid = make_grid(d.n, st.m_panels, J.blk, threads, format_is_amx(F) ? 1 : 4);
    st.task_done = std::make_unique<std::atomic<bool>[]>(std::size_t(st.grid.tasks()));
    st.a_ready = std::make_unique<std::atomic<bool>[]>(std::size_t(st.m_panels));
  }
  ThreadPool::instance().run(threads, [&](int tid, int) { run_job(J, stages, tid); });
}

// C's storage SC from the compute type T: directly when they are the same (i32 C is computed
// as uint32: same bits, wraps), else through a T copy so every k block accumulates at full
// width and C is rounded once (f16, bf16 C).
template <DType SA, DType SC, Format F>
void run_format(const GemmArgs& args, const UkernelSet& set, Isa isa, const PackedOptions& opt,
                int threads) {
  using S = typename Storage<SA>::T;
  using T = typename FormatTypes<F>::T;
  const Blocking blk = blocking_for(isa, F, cache_sizes(), opt.kc, opt.mc, opt.nc);
  const Prefetch auto_pf = prefetch_for(isa, F);
  const Prefetch pf{opt.prefetch_a < 0 ? auto_pf.a : opt.prefetch_a,
                    opt.prefetch_b < 0 ? auto_pf.b : opt.prefetch_b};
  if (blk.mr * blk.nr > kMaxTile || blk.mr > kMaxPackRows || blk.nr > Pack<SA, F>::kMaxPackCols)
    throw InvalidArgument("packed GEMM: register tile too large");
  const auto* a = static_cast<const S*>(args.a);
  const auto* b = static_cast<const S*>(args.b);
  Workspace& ws = workspace();
  const GemmDesc& d = args.desc;
  const T alpha = scalar<T>(d.alpha), beta = scalar<T>(d.beta);
  if constexpr (std::is_same_v<typename Storage<SC>::T, T> ||
                (SC == DType::i32 && std::is_same_v<T, std::uint32_t>)) {
    T* c = reinterpret_cast<T*>(args.c);
    run_packed<SA, F>(d, a, args.lda, b, args.ldb, c, args.ldc, alpha, beta, set, blk, pf,
                      opt.pack_a, threads, ws);
  } else {
    using SCT = typename Storage<SC>::T;
    auto* cn = static_cast<SCT*>(args.c);
    auto* ct = static_cast<T*>(ws.c.get(sizeof(T) * std::size_t(d.m * d.n)));
    if (d.beta != 0)  // with beta == 0 the first k block does not read C
      for (std::int64_t i = 0; i < d.m; ++i)
        for (std::int64_t j = 0; j < d.n; ++j) ct[i * d.n + j] = load<T, SC>(cn[i * args.ldc + j]);
    run_packed<SA, F>(d, a, args.lda, b, args.ldb, ct, d.n, alpha, beta, set, blk, pf, opt.pack_a,
                      threads, ws);
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) cn[i * args.ldc + j] = store<SC>(ct[i * d.n + j]);
  }
}

// Dispatch on the element roles (SA: what A and B hold, SC: what C holds) to a packed format:
// bf16 and i8 use the dot-product micro-kernels where this ISA's set has them (bf16 pairs,
// i8 quads or int16 pairs), everything else is widened to its compute type (AccOf<SA>).
template <DType SA, DType SC>
void dispatch(const GemmArgs& args, const UkernelSet& set, Isa isa, const PackedOptions& opt,
              int threads) {
  const Format f = packed_format(isa, SA, opt.bf16, opt.amx);
  if constexpr (SA == DType::bf16) {
    if (f == Format::amx_bf16)
      return run_format<SA, SC, Format::amx_bf16>(args, set, isa, opt, threads);
    if (f == Format::bf16x2)
      return run_format<SA, SC, Format::bf16x2>(args, set, isa, opt, threads);
  }
  if constexpr (SA == DType::i8) {
    if (f == Format::amx_i8)
      return run_format<SA, SC, Format::amx_i8>(args, set, isa, opt, threads);
    if (f == Format::u8s8x4)
      return run_format<SA, SC, Format::u8s8x4>(args, set, isa, opt, threads);
    if (f == Format::i16x2) return run_format<SA, SC, Format::i16x2>(args, set, isa, opt, threads);
  }
  using T = AccOf<SA>;
  constexpr Format plain = std::is_same_v<T, double>  ? Format::f64
                           : std::is_same_v<T, float> ? Format::f32
                                                      : Format::u32;
  run_format<SA, SC, plain>(args, set, isa, opt, threads);
}

}  // namespace

std::string bf16_path_refusal(Isa isa, Bf16Path path) {
  if (path != Bf16Path::dot || ukernels_for(isa).bf16x2.fn) return "";
  return "BF16=dot: the " + std::string(to_string(isa)) +
         " micro-kernels of this CPU have no bf16-pair (vdpbf16ps) kernel";
}

std::string amx_refusal(Isa isa, AmxUse amx, Bf16Path bf16) {
  if (amx != AmxUse::on) return "";
  if (!ukernels_for(isa).amx_bf16.fn)
    return "AMX=on: the " + std::string(to_string(isa)) +
           " micro-kernels of this CPU have no AMX tile kernels (the CPU, the OS or the build "
           "lacks them)";
  if (bf16 != Bf16Path::automatic) return "AMX=on runs bf16 on the tiles; BF16 asks otherwise";
  return "";
}

Format packed_format(Isa isa, DType storage, Bf16Path bf16, AmxUse amx) {
  const UkernelSet& set = ukernels_for(isa);
  // AMX=on concerns bf16 and i8 alone, and BF16 only bf16.
  const bool dot_type = storage == DType::bf16 || storage == DType::i8;
  const Bf16Path own_bf16 = storage == DType::bf16 ? bf16 : Bf16Path::automatic;
  if (std::string why = amx_refusal(isa, amx, own_bf16); dot_type && !why.empty())
    throw Unsupported("cpu.packed: " + why);
  // AMX tiles out-run every vector path for bf16 and i8 (16x the vdpbf16ps rate per core on a
  // Xeon with them, docs/cpu.md); an explicit BF16 path keeps bf16 off them.
  const bool tiles = amx != AmxUse::off && set.amx_bf16.fn;
  if (storage == DType::bf16 && tiles && bf16 == Bf16Path::automatic) return Format::amx_bf16;
  if (storage == DType::i8 && tiles && set.amx_i8.fn) return Format::amx_i8;
  if (storage == DType::bf16) {
    if (std::string why = bf16_path_refusal(isa, bf16); !why.empty())
      throw Unsupported("cpu.packed: " + why);
    // The generic set's pairs are an emulation kept so that their packing is tested anywhere;
    // on AVX-512 the pairs run only where vdpbf16ps out-runs the f32 FMA.
    const bool pairs = bf16 == Bf16Path::dot || (bf16 == Bf16Path::automatic && set.bf16x2.fn &&
                                                 (isa != Isa::avx512 || cpu_bf16_dot_pays()));
    if (pairs) return Format::bf16x2;
  }
  if (storage == DType::i8 && set.u8s8x4.fn) return Format::u8s8x4;
  if (storage == DType::i8 && set.i16x2.fn) return Format::i16x2;
  if (storage == DType::f64) return Format::f64;
  if (storage == DType::i32 || storage == DType::i8) return Format::u32;
  return Format::f32;
}

void packed_gemm(const GemmArgs& args, const PackedOptions& opt) {
  const GemmDesc& d = args.desc;
  if (d.m == 0 || d.n == 0) return;
  const Isa isa = resolve_isa(opt.isa);
  const UkernelSet& set = ukernels_for(isa);
  const int threads = threads_for(opt, d);
  dispatch_roles(d.types,
                 [&]<DType SA, DType SC>() { dispatch<SA, SC>(args, set, isa, opt, threads); });
}

}  // namespace kafel::cpu
