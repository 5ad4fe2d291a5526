// The CUDA ranks' distributed GEMM: operands resident in device memory, SUMMA's panels broadcast
// by NCCL on a stream of their own while the previous panel's GEMM (kafel's CUDA kernel, run
// bound to the device buffers in place) runs on another; events order the two.
#include <chrono>
#include <map>
#include <memory>
#include <tuple>

#include "core/backend.hpp"
#include "cuda/plan.hpp"
#include "cuda/runtime.hpp"
#include "dist/gemm_impl.hpp"
#include "dist/nccl/nccl_comm.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

namespace {

using Clock = std::chrono::steady_clock;
using cuda::DeviceBuffer;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class Event {
 public:
  explicit Event(bool timing = false) {
    KAFEL_CUDA_CHECK(
        cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { KAFEL_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void wait_on(cudaStream_t s) { KAFEL_CUDA_CHECK(cudaStreamWaitEvent(s, e_, 0)); }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

double elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  KAFEL_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

// A row-major matrix on the device, rows padded to 16 bytes as kafel's CUDA kernels expect.
struct DevMatrix {
  DType type = DType::f32;
  std::int64_t rows = 0, cols = 0, ld = 1;
  DeviceBuffer buf;

  DevMatrix() = default;
  DevMatrix(DType t, std::int64_t r, std::int64_t c, const char* what)
      : type(t),
        rows(r),
        cols(c),
        ld(cuda::padded_ld(c, t)),
        buf(std::size_t(std::max<std::int64_t>(r, 1) * ld) * dtype_size(t), what) {}
  std::size_t es() const { return dtype_size(type); }
  void* at(std::int64_t i, std::int64_t j) const {
    return static_cast<char*>(buf.get()) + std::size_t(i * ld + j) * es();
  }
  void upload(const Matrix& host, cudaStream_t s) {
    if (rows == 0 || cols == 0) return;
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(buf.get(), std::size_t(ld) * es(), host.data(),
                                       std::size_t(host.ld()) * es(), std::size_t(cols) * es(),
                                       std::size_t(rows), cudaMemcpyHostToDevice, s));
  }
  void download(Matrix& host, cudaStream_t s) const {
    if (rows == 0 || cols == 0) return;
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(host.data(), std::size_t(host.ld()) * es(), buf.get(),
                                       std::size_t(ld) * es(), std::size_t(cols) * es(),
                                       std::size_t(rows), cudaMemcpyDeviceToHost, s));
  }
};

// Device-resident local GEMMs through the chosen kernel's plans (one per shape and beta), bound
// to the panels in place (GemmPlan::bind) and enqueued on the caller's stream.
class ResidentGemm {
 public:
  ResidentGemm(const Device& dev, const GemmSetup& s) : dev_(dev), s_(s) {}

  // Makes the plans of every shape up front (their failures are agreed before any broadcast).
  void prepare(std::int64_t m, std::int64_t n, const std::vector<std::int64_t>& widths,
               const std::vector<double>& betas) {
    if (m == 0 || n == 0) return;
    for (std::int64_t w : widths)
      for (double beta : betas) plan_for(panel_desc(s_, m, n, w, beta));
  }
  void run(const GemmDesc& d, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
           void* c, std::int64_t ldc, cudaStream_t stream) {
    if (d.m == 0 || d.n == 0) return;
    GemmPlan& plan = plan_for(d);
    plan.bind(GemmArgs{d, a, lda, b, ldb, c, ldc}, stream);
    plan.run(0);
  }

 private:
  GemmPlan& plan_for(const GemmDesc& d) {
    const auto key = std::make_tuple(d.m, d.n, d.k, d.beta);
    auto it = plans_.find(key);
    if (it == plans_.end())
      it = plans_
               .emplace(
                   key,
                   find_gemm_kernel(dev_, s_.choice.kernel).make_plan(dev_, d, s_.choice.params))
               .first;
    return *it->second;
  }

  const Device& dev_;
  const GemmSetup& s_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, double>, std::unique_ptr<GemmPlan>>
      plans_;
};

void finish_on_host(const Matrix& acc, double beta, Matrix& c) {
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j)
      c.set(i, j, acc.get(i, j) + (beta != 0 ? beta * c.get(i, j) : 0.0));
}

ncclComm_t as_nccl(void* p) {
  return static_cast<ncclComm_t>(p);
}

}  // namespace

DistGemmReport cuda_summa(const Communicator& comm, const GemmSetup& s, const DistMatrix& A,
                          const DistMatrix& B, DistMatrix& C) {
  Communicator::Impl& c = comm.impl();
  const GridComms& g = c.grid(A.layout().grid);
  const ncclComm_t row = as_nccl(g.nccl_row), col = as_nccl(g.nccl_col);
  cuda::DeviceGuard guard(c.device.index);
  const std::int64_t m = C.local().rows(), n = C.local().cols(), kb = A.layout().nb;
  const std::int64_t panels = panel_count(s, kb), first = std::min(kb, s.k);
  DevMatrix a, b, cm, acc, ap[2], bp[2];
  ResidentGemm gemm(comm.device(), s);
  std::unique_ptr<cuda::Stream> compute, mover;
  comm.collectively([&] {
    a = DevMatrix(s.types.a, A.local().rows(), A.local().cols(), "A (local blocks)");
    b = DevMatrix(s.types.b, B.local().rows(), B.local().cols(), "B (local blocks)");
    cm = DevMatrix(s.types.c, m, n, "C (local blocks)");
    if (s.widened) acc = DevMatrix(s.panel.c, m, n, "C accumulator");
    for (int i = 0; i < 2; ++i) {
      ap[i] = DevMatrix(s.types.a, m, first, "A panel");
      bp[i] = DevMatrix(s.types.b, first, n, "B panel");
    }
    compute = std::make_unique<cuda::Stream>();
    mover = std::make_unique<cuda::Stream>();
    if (panels > 0)
      gemm.prepare(m, n, {first, s.k - (panels - 1) * kb}, {1.0, s.widened ? 0.0 : s.beta});
  });
  DistGemmReport r;
  auto t0 = Clock::now();
  a.upload(A.local(), *compute);
  b.upload(B.local(), *compute);
  cm.upload(C.local(), *compute);
  wait_stream(c, *compute, {}, "upload of the local blocks");
  r.upload_ms = ms_since(t0);

  std::vector<std::unique_ptr<Event>> comm_t0, comm_t1, gemm_t0, gemm_t1;
  for (std::int64_t t = 0; t < panels; ++t)
    for (auto* v : {&comm_t0, &comm_t1, &gemm_t0, &gemm_t1})
      v->push_back(std::make_unique<Event>(true));
  Event panel_ready[2], slot_free[2];
  const void* b_panel[2] = {nullptr, nullptr};
  const std::size_t ea = dtype_size(s.types.a), eb = dtype_size(s.types.b);
  int row_size = 1, col_size = 1;
  check_nccl(ncclCommCount(row, &row_size), "ncclCommCount");
  check_nccl(ncclCommCount(col, &col_size), "ncclCommCount");

  // Panel t into slot t % 2 on the mover stream, once the GEMM that last read that slot is done.
  auto fetch = [&](std::int64_t t) {
    const int slot = int(t % 2);
    const Panel p = panel_of(A.layout(), B.layout(), t);
    if (t >= 2) slot_free[slot].wait_on(*mover);
    comm_t0[std::size_t(t)]->record(*mover);
    DevMatrix& pa = ap[slot];
    if (g.pcol == p.a_owner && m > 0)
      KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(pa.buf.get(), std::size_t(pa.ld) * ea, a.at(0, p.a_col),
                                         std::size_t(a.ld) * ea, std::size_t(p.width) * ea,
                                         std::size_t(m), cudaMemcpyDeviceToDevice, *mover));
    const std::size_t a_bytes = std::size_t(m * pa.ld) * ea;
    if (a_bytes)
      check_nccl(
          ncclBroadcast(pa.buf.get(), pa.buf.get(), a_bytes, ncclUint8, p.a_owner, row, *mover),
          "ncclBroadcast (A panel)");
    void* dst = g.prow == p.b_owner ? b.at(p.b_row, 0) : bp[slot].buf.get();
    const std::int64_t b_ld = g.prow == p.b_owner ? b.ld : bp[slot].ld;
    const std::size_t b_bytes = std::size_t(p.width * b_ld) * eb;
    if (b_bytes && n > 0)
      check_nccl(ncclBroadcast(dst, dst, b_bytes, ncclUint8, p.b_owner, col, *mover),
                 "ncclBroadcast (B panel)");
    b_panel[slot] = dst;
    comm_t1[std::size_t(t)]->record(*mover);
    panel_ready[slot].record(*mover);
    r.bytes += double(row_size > 1 ? a_bytes : 0) + double(col_size > 1 && n > 0 ? b_bytes : 0);
  };
  DevMatrix& target = s.widened ? acc : cm;
  auto multiply = [&](std::int64_t t) {
    const int slot = int(t % 2);
    const Panel p = panel_of(A.layout(), B.layout(), t);
    panel_ready[slot].wait_on(*compute);
    gemm_t0[std::size_t(t)]->record(*compute);
    const double beta = t > 0 ? 1.0 : s.widened ? 0.0 : s.beta;
    const std::int64_t b_ld = g.prow == p.b_owner ? b.ld : bp[slot].ld;
    gemm.run(panel_desc(s, m, n, p.width, beta), ap[slot].buf.get(), ap[slot].ld, b_panel[slot],
             b_ld, target.buf.get(), target.ld, *compute);
    gemm_t1[std::size_t(t)]->record(*compute);
    slot_free[slot].record(*compute);
  };

  t0 = Clock::now();
  if (panels > 0) fetch(0);
  for (std::int64_t t = 0; t < panels; ++t) {
    if (t + 1 < panels && s.overlap) fetch(t + 1);
    multiply(t);
    if (t + 1 < panels && !s.overlap) {
      slot_free[t % 2].wait_on(*mover);  // serial: the next broadcast waits for this GEMM
      fetch(t + 1);
    }
  }
  wait_stream(c, *mover, {row, col}, "SUMMA broadcasts");
  wait_stream(c, *compute, {row, col}, "SUMMA local GEMMs");
  r.wall_ms = ms_since(t0);
  for (std::int64_t t = 0; t < panels; ++t) {
    const auto i = std::size_t(t);
    r.comm_ms += elapsed_ms(*comm_t0[i], *comm_t1[i]);
    r.compute_ms += elapsed_ms(*gemm_t0[i], *gemm_t1[i]);
  }
  t0 = Clock::now();
  if (s.widened || panels == 0) {
    Matrix sum(s.panel.c, m, n);
    if (panels > 0) acc.download(sum, *compute);
    wait_stream(c, *compute, {}, "download of C");
    finish_on_host(sum, s.beta, C.local());
  } else {
    cm.download(C.local(), *compute);
    wait_stream(c, *compute, {}, "download of C");
  }
  r.download_ms = ms_since(t0);
  r.panels = panels;
  return r;
}

DistGemmReport cuda_rows(const Communicator& comm, const GemmSetup& s, const DistMatrix& A,
                         const DistMatrix& B, DistMatrix& C) {
  Communicator::Impl& c = comm.impl();
  const ncclComm_t world = c.nccl->world;
  cuda::DeviceGuard guard(c.device.index);
  const BlockLayout& bl = B.layout();
  DevMatrix a, whole, cm;
  ResidentGemm gemm(comm.device(), s);
  std::unique_ptr<cuda::Stream> stream;
  comm.collectively([&] {
    a = DevMatrix(s.types.a, A.local().rows(), A.local().cols(), "A (local rows)");
    whole = DevMatrix(s.types.b, s.k, s.n, "B (whole)");
    cm = DevMatrix(s.types.c, C.local().rows(), s.n, "C (local rows)");
    stream = std::make_unique<cuda::Stream>();
    if (s.k > 0) gemm.prepare(C.local().rows(), s.n, {s.k}, {s.beta});
  });
  DistGemmReport r;
  auto t0 = Clock::now();
  a.upload(A.local(), *stream);
  cm.upload(C.local(), *stream);
  const std::int64_t mine = bl.local_rows(comm.rank());
  if (mine > 0 && s.n > 0)
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(whole.at(comm.rank() * bl.mb, 0),
                                       std::size_t(whole.ld) * whole.es(), B.local().data(),
                                       std::size_t(s.n) * whole.es(), std::size_t(s.n) * whole.es(),
                                       std::size_t(mine), cudaMemcpyHostToDevice, *stream));
  wait_stream(c, *stream, {}, "upload of the local blocks");
  r.upload_ms = ms_since(t0);

  Event comm0(true), comm1(true), gemm0(true), gemm1(true);
  t0 = Clock::now();
  comm0.record(*stream);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int rank = 0; rank < comm.size(); ++rank) {
    const std::int64_t rows = bl.local_rows(rank);
    if (rows == 0 || s.n == 0) continue;
    void* p = whole.at(rank * bl.mb, 0);
    const std::size_t bytes = std::size_t(rows * whole.ld) * whole.es();
    check_nccl(ncclBroadcast(p, p, bytes, ncclUint8, rank, world, *stream), "ncclBroadcast (B)");
    if (comm.size() > 1) r.bytes += double(bytes);
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  comm1.record(*stream);
  gemm0.record(*stream);
  if (s.k > 0)
    gemm.run(panel_desc(s, C.local().rows(), s.n, s.k, s.beta), a.buf.get(), a.ld, whole.buf.get(),
             whole.ld, cm.buf.get(), cm.ld, *stream);
  gemm1.record(*stream);
  wait_stream(c, *stream, {world}, "all-gather of B and the local GEMM");
  r.wall_ms = ms_since(t0);
  r.comm_ms = elapsed_ms(comm0, comm1);
  r.compute_ms = elapsed_ms(gemm0, gemm1);
  t0 = Clock::now();
  if (s.k > 0) {
    cm.download(C.local(), *stream);
    wait_stream(c, *stream, {}, "download of C");
  } else {
    Matrix zero(s.types.c, C.local().rows(), s.n);
    finish_on_host(zero, s.beta, C.local());
  }
  r.download_ms = ms_since(t0);
  r.panels = 1;
  return r;
}

}  // namespace kafel::dist
