// kafel::dist: GEMM and covariance over MPI ranks (one device per rank; NCCL between CUDA GPUs,
// MPI collectives otherwise): communicator, block-cyclic matrices, SUMMA, the covariance merge.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kafel/cov.hpp"
#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/matrix.hpp"
#include "kafel/params.hpp"

namespace kafel::dist {

// ---- MPI and the communicator ----------------------------------------------------------------

// MPI for the life of a program. Initialises MPI with MPI_THREAD_SERIALIZED (the host SUMMA
// broadcasts the next panel from a second thread) unless the program did already; finalises it
// only when it initialised it.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

 private:
  bool owns_ = false;
};

struct CommOptions {
  // This rank's device: "cpu", "cuda" (GPU number local rank on this node), "cuda:N",
  // "opencl:P:D", a name substring; "" = $KAFEL_DEVICE, else cpu.
  std::string device;
  // > 0: a rank that waits longer than this in one collective prints which one and aborts the
  // whole job (MPI_Abort), so a peer that died or stopped never leaves the others hanging.
  double timeout_s = 0;
  // CUDA ranks talk through NCCL when kafel was built with it (else through MPI, staged on
  // the host).
  bool nccl = true;
  // CPU ranks: unless $KAFEL_NUM_THREADS is set, each rank's kernels use the CPUs it may run on
  // divided by the ranks on its node (never fewer than 1), so P ranks do not oversubscribe.
  bool share_cpus = true;
};

// A process grid: rows x cols processes, numbered row-major (rank = prow * cols + pcol), as
// ScaLAPACK's default BLACS grid.
struct Grid {
  int rows = 1, cols = 1;
  int size() const { return rows * cols; }
  std::string name() const;  // "2x2"
  // "PxQ" with P, Q >= 1; throws InvalidArgument.
  static Grid parse(std::string_view text);
};
// The most square grid of `ranks` processes with rows <= cols (4 -> 2x2, 6 -> 2x3, 2 -> 1x2).
Grid default_grid(int ranks);

class Communicator {
 public:
  // Collective over `comm` (duplicated, so kafel's messages never meet the caller's). Picks and
  // opens this rank's device, and on CUDA devices creates the NCCL communicator from a unique
  // id broadcast over MPI. Errors on any rank (no such device, more ranks than GPUs on a node)
  // are thrown on every rank (see agree).
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, const CommOptions& opt = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  int local_rank() const;  // among the ranks on this node
  int local_size() const;
  const Device& device() const;
  // "nccl" when this rank's collectives on device data go through NCCL, else "mpi".
  std::string transport() const;
  MPI_Comm mpi() const;
  const CommOptions& options() const;
  // Whether a second thread may call MPI while this one computes (MPI_THREAD_SERIALIZED or
  // better): the host SUMMA overlaps communication with compute only then.
  bool threads_ok() const;

  // Collective error agreement: every rank passes its own failure (nullptr: none). If any rank
  // failed, every rank throws the error of the lowest failing rank: same kafel type, message
  // "rank R: <its message>", marked so is_agreed() is true. Returns normally when none failed.
  void agree(std::exception_ptr failure) const;
  // Runs fn() on every rank and agrees on its errors (fn must not communicate).
  template <class F>
  auto collectively(F&& fn) const {
    std::exception_ptr failure;
    using R = decltype(fn());
    if constexpr (std::is_void_v<R>) {
      try {
        fn();
      } catch (...) {
        failure = std::current_exception();
      }
      agree(failure);
    } else {
      std::optional<R> out;
      try {
        out.emplace(fn());
      } catch (...) {
        failure = std::current_exception();
      }
      agree(failure);
      return std::move(*out);
    }
  }

  // Waits for every rank without spinning (a rank that waits gives its core to the others).
  void barrier() const;
  double max(double v) const;
  double min(double v) const;
  double sum(double v) const;
  // Every rank's value, on every rank, in rank order.
  std::vector<double> all(double v) const;

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// True for the exceptions Communicator::agree throws (every rank throws the same one), false
// for an error raised on this rank alone, in the middle of communication: a program that gets
// one of those should abort the job (MPI_Abort), as the other ranks cannot learn of it.
bool is_agreed(const std::exception& e);

// ---- block-cyclic matrices ----------------------------------------------------------------

// ScaLAPACK's 2-D block-cyclic distribution of a rows x cols matrix: block (I, J) of mb x nb
// elements lives on process (I mod grid.rows, J mod grid.cols). With mb = ceil(rows /
// grid.rows) and nb = ceil(cols / grid.cols) it is a plain block distribution. Each process keeps
// its blocks as one row-major matrix (local_rows x local_cols, blocks in order).
struct BlockLayout {
  std::int64_t rows = 0, cols = 0;
  std::int64_t mb = 1, nb = 1;
  Grid grid;

  std::int64_t local_rows(int prow) const;
  std::int64_t local_cols(int pcol) const;
  int row_owner(std::int64_t i) const { return int((i / mb) % grid.rows); }
  int col_owner(std::int64_t j) const { return int((j / nb) % grid.cols); }
  // Index of global row i / column j within its owner's local matrix.
  std::int64_t local_row(std::int64_t i) const { return (i / mb) / grid.rows * mb + i % mb; }
  std::int64_t local_col(std::int64_t j) const { return (j / nb) / grid.cols * nb + j % nb; }
  // Global index of local row li of process row prow (column lj of process column pcol).
  std::int64_t global_row(int prow, std::int64_t li) const;
  std::int64_t global_col(int pcol, std::int64_t lj) const;
  // Throws InvalidArgument naming `what` for negative sizes, blocks < 1 or an empty grid.
  void validate(const char* what) const;
  std::string describe() const;  // "2000x1700 in 256x256 blocks on 1x2"
};

class DistMatrix {
 public:
  DistMatrix() = default;
  // This rank's part of a matrix distributed by `layout` over comm (layout.grid.size() must be
  // comm.size()), zeroed.
  DistMatrix(const Communicator& comm, const BlockLayout& layout, DType dtype);

  const BlockLayout& layout() const { return layout_; }
  DType dtype() const { return local_.dtype(); }
  int prow() const { return prow_; }
  int pcol() const { return pcol_; }
  const Matrix& local() const { return local_; }
  Matrix& local() { return local_; }
  DistMatrix clone() const;

 private:
  BlockLayout layout_;
  int prow_ = 0, pcol_ = 0;
  Matrix local_;
};

// Sets element (i, j) of the global matrix to a value depending only on (seed, i, j): uniform in
// [-1, 1) for floating types, an integer in [-4, 4] for integer types. The same global matrix on
// any grid and block size, generated by each rank for its own blocks only.
void fill_pattern(DistMatrix& m, std::uint64_t seed);
// The same values for a whole (undistributed) matrix.
void fill_pattern(const MatrixView& m, std::uint64_t seed);

// File helpers: the root's global matrix dealt out to the ranks' local blocks (`global` is read
// on the root only; its shape must match out.layout()), and the blocks collected on the root
// (an empty Matrix elsewhere). Collective.
void scatter(const Communicator& comm, const MatrixView* global, DistMatrix& out, int root = 0);
Matrix gather(const Communicator& comm, const DistMatrix& in, int root = 0);

// ---- GEMM -------------------------------------------------------------------------------------

enum class DistAlgorithm {
  // 2-D SUMMA: for each block column t of A / block row t of B, the owners broadcast it along
  // their process row / column; every rank adds the product of the two panels to its C blocks
  // with kafel's local kernel, while the next panels are already on their way.
  Summa,
  // 1-D rung for comparison: A and C in contiguous row blocks, B gathered whole on every rank
  // (one all-gather), one local GEMM each. Needs a grid of P x 1.
  Rows,
};
std::string_view to_string(DistAlgorithm a);
DistAlgorithm parse_dist_algorithm(std::string_view s);  // "summa", "rows"

struct DistGemmLayouts {
  BlockLayout a, b, c;
};
// Layouts for C = A B of m x n x k. Summa: A, B and C in block x block blocks on `grid`.
// Rows: grid must be P x 1; A and C split by rows, B by rows of k (each in one block per rank).
DistGemmLayouts dist_gemm_layouts(DistAlgorithm algorithm, Grid grid, std::int64_t m,
                                  std::int64_t n, std::int64_t k, std::int64_t block);

struct DistGemmOptions {
  DistAlgorithm algorithm = DistAlgorithm::Summa;
  std::string kernel;  // the local GEMM kernel ("" = choose_gemm's choice for the panel shape)
  Params params;       // its parameter overrides
  std::optional<Compute> compute;  // default: the natural mode of A's type
  // Broadcast panel t+1 while panel t's GEMM runs (SUMMA); off: broadcast, then compute.
  bool overlap = true;
};

// One rank's figures of one distributed GEMM (milliseconds), plus what every rank shares.
struct DistGemmReport {
  std::string algorithm, grid, kernel, config, transport;
  std::int64_t panels = 0;
  bool overlap = false;
  double wall_ms = 0;     // first broadcast started to last local GEMM done, operands resident
  double compute_ms = 0;  // local GEMMs (device events on GPUs)
  double comm_ms = 0;     // broadcasts / all-gathers in flight
  double upload_ms = 0, download_ms = 0;  // host <-> device of this rank's blocks (GPU ranks)
  double bytes = 0;                       // bytes this rank received or sent in broadcasts
  // Job-wide (the same on every rank): the slowest rank's wall time and the rate it gives.
  double job_wall_ms = 0;
  double job_gflops = 0;
  // Communication not hidden behind compute on this rank: wall - compute (>= 0).
  double exposed_ms() const { return wall_ms > compute_ms ? wall_ms - compute_ms : 0.0; }
  // Achieved broadcast bandwidth of this rank: bytes / comm_ms (GB/s; nccl-tests' busbw for a
  // broadcast equals its algbw).
  double bus_gbs() const { return comm_ms > 0 ? bytes / (comm_ms * 1e6) : 0.0; }
};

// C = alpha A B + beta C on distributed matrices (op N, N). A is m x k, B k x n, C m x n, all
// on comm's grid with compatible layouts (Summa: A's column blocks = B's row blocks, A's row
// blocks = C's, B's column blocks = C's; Rows: dist_gemm_layouts' Rows layouts). Any element
// roles the local kernel supports; a C narrower than the accumulator (bf16, f16) is accumulated
// in the accumulator's type across panels and rounded once. Collective; bad layouts, types or
// kernels throw on every rank (agreed).
DistGemmReport dist_gemm(const Communicator& comm, double alpha, const DistMatrix& A,
                         const DistMatrix& B, double beta, DistMatrix& C,
                         const DistGemmOptions& opt = {});

// Freivalds' check of C = alpha A B + beta C0 on the distributed matrices: two random vectors,
// every product in float64 on the ranks' own blocks, sums over MPI; the per-row tolerance of
// verify_gemm for desc.types (exact modulo 2^32 for integer compute). Collective: the same
// verdict on every rank. desc gives m, n, k, alpha, beta and the roles.
VerifyResult dist_verify_gemm(const Communicator& comm, const GemmDesc& desc, const DistMatrix& A,
                              const DistMatrix& B, const DistMatrix& C0, const DistMatrix& C,
                              std::uint64_t seed = 12345);

// ---- covariance -------------------------------------------------------------------------------

struct DistCovReport {
  CovResult result;  // the covariance of every rank's samples together (on every rank)
  std::int64_t local_samples = 0;
  double compute_ms = 0;  // this rank's moments (kernel and transfers)
  double comm_ms = 0;     // the merge's two all-reduces
  double total_ms = 0;
  double bytes = 0;  // bytes this rank contributed to the all-reduces
};

// Covariance of samples split across ranks: each rank passes its own block (channels and layout
// equal on every rank, any number of samples, 0 included; the total must exceed ddof). Each rank
// computes its channel means and centred co-moments (n_r, mu_r, M_r) with choose_cov's kernel;
// the merge is Chan's formula for P parts done with sums only: one all-reduce of (n_r, n_r mu_r)
// gives the global mean mu, a second one sums M_r + n_r (mu_r - mu)(mu_r - mu)^T, all in
// float64. Collective; the result is on every rank.
DistCovReport dist_covariance(const Communicator& comm, const SamplesView& local,
                              const CovOptions& opt = {});

struct DistCovStreamStats {
  // On rank 0: every block's latency (on the rank that ran it) in block order; blocks, wall,
  // blocks_per_s (all blocks over the slowest rank's wall) and missed deadlines of the job.
  CovStreamStats job;
  std::vector<std::int64_t> rank_blocks;  // rank 0: blocks each rank ran
  std::vector<double> rank_blocks_per_s;  // rank 0: each rank's own rate
  CovStreamStats local;                   // this rank's own stream
};

// Called on rank 0, in block order, with every block's covariance after the stream.
using CovRootHook = std::function<void(std::int64_t block, const CovResult& result)>;

// A stream dealt round-robin: block b runs on rank b mod P, each rank streaming its share
// through run_cov_stream (its own buffers, depth and device) at rate / P when a rate is given.
// source.fill is called on the rank that runs the block, with the global block number; `hook`
// there too (as in run_cov_stream: with the block's data), `root_hook` on rank 0 afterwards.
// Collective.
DistCovStreamStats dist_cov_stream(const Communicator& comm, const CovChoice& choice,
                                   const CovDesc& desc, const CovBlockSource& source,
                                   std::int64_t max_blocks, const CovStreamOptions& opt,
                                   const CovResultHook& hook = {},
                                   const CovRootHook& root_hook = {});

// ---- collectives benchmark --------------------------------------------------------------------

// One collective at one size, timed like nccl-tests: algbw = bytes / time; busbw = algbw for a
// broadcast, x 2(P-1)/P for an all-reduce, x (P-1)/P for an all-gather (bytes = its output).
struct CollectiveRecord {
  std::string op;         // "broadcast", "allreduce", "allgather"
  std::string transport;  // "nccl" (device buffers) or "mpi" (host buffers)
  double bytes = 0;
  double time_us = 0;  // median over repetitions of the slowest rank
  double algbw_gbs = 0, busbw_gbs = 0;
};

// Each op at each size (bytes, rounded down to whole floats), `reps` timed runs after a warm-up,
// on device buffers through NCCL on CUDA ranks, on host buffers through MPI otherwise.
std::vector<CollectiveRecord> bench_collectives(const Communicator& comm,
                                                const std::vector<double>& sizes, int reps = 20);

}  // namespace kafel::dist
