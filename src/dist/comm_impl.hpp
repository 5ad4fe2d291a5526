// The communicator's state and the collectives every part of kafel::dist is built on: non-blocking
// MPI calls polled under the communicator's timeout (no rank waits for ever), chunked for sizes
// beyond MPI's int counts, plus the row/column communicators of a process grid.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kafel/dist.hpp"

namespace kafel::dist {

struct NcclState;  // nccl/nccl_comm.cpp; absent when CUDA ranks do not talk through NCCL

// The row and column communicators of one process grid: `row` holds the ranks of this rank's
// process row ordered by process column (its rank there is pcol), `col` the process column.
struct GridComms {
  MPI_Comm row = MPI_COMM_NULL, col = MPI_COMM_NULL;
  int prow = 0, pcol = 0;
  void* nccl_row = nullptr;  // ncclComm_t of the same ranks on NCCL communicators
  void* nccl_col = nullptr;
};

struct Communicator::Impl {
  MPI_Comm world = MPI_COMM_NULL;  // the caller's communicator, duplicated
  MPI_Comm node = MPI_COMM_NULL;   // the ranks of this node
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  int thread_level = MPI_THREAD_SINGLE;
  Device device;
  CommOptions opt;
  std::map<std::pair<int, int>, GridComms> grids;
  std::shared_ptr<NcclState> nccl;

  ~Impl();
  // The grid's row and column communicators, created on first use (collective over world).
  const GridComms& grid(Grid g);
};

// How a rank waits: Busy keeps asking MPI (data in flight: polling drives its progress), Idle
// sleeps between checks (barriers, agreement: the core goes to whoever computes).
enum class Poll { Busy, Idle };

// Throws kafel::Error naming `call` and MPI's error string unless err == MPI_SUCCESS.
void check_mpi(int err, const char* call);
// Waits for the requests; past the communicator's timeout, aborts the job naming `what`.
void wait_all(const Communicator::Impl& c, std::vector<MPI_Request>& reqs, const std::string& what,
              Poll poll = Poll::Busy);
void wait(const Communicator::Impl& c, MPI_Request& req, const std::string& what,
          Poll poll = Poll::Busy);
// Prints "kafel: error: rank R of P: <why>" and aborts every rank (MPI_Abort).
[[noreturn]] void abort_job(const Communicator::Impl& c, const std::string& why);

// MPI counts are ints: larger buffers move in chunks of kChunkBytes.
inline constexpr std::size_t kChunkBytes = std::size_t(1) << 30;

// Starts a broadcast of `bytes` bytes from `root` of `comm`, appending its requests.
void start_bcast(void* data, std::size_t bytes, int root, MPI_Comm comm,
                 std::vector<MPI_Request>& reqs);
void bcast_bytes(const Communicator::Impl& c, void* data, std::size_t bytes, int root,
                 MPI_Comm comm, const std::string& what);
// Element-wise sums over `comm` in place (float64 / unsigned 32-bit wrap-around).
void allreduce_sum(const Communicator::Impl& c, double* data, std::int64_t count, MPI_Comm comm,
                   const std::string& what);
void allreduce_sum(const Communicator::Impl& c, std::uint32_t* data, std::int64_t count,
                   MPI_Comm comm, const std::string& what);
// Point to point over world (chunked), completed on return.
void send_bytes(const Communicator::Impl& c, const void* data, std::size_t bytes, int dest, int tag,
                const std::string& what);
void recv_bytes(const Communicator::Impl& c, void* data, std::size_t bytes, int source, int tag,
                const std::string& what);

// Throws InvalidArgument on every rank (agreed) naming the first rank whose `mine` differs from
// rank 0's: every rank must describe the same problem. Collective.
void check_same_everywhere(const Communicator& comm, const std::vector<double>& mine,
                           const std::string& what);
// Every rank's vector (any lengths) on `root`, in rank order; empty elsewhere. Collective.
std::vector<std::vector<double>> gather_vectors(const Communicator& comm,
                                                const std::vector<double>& mine, int root);

// nccl-tests' bus-bandwidth factor: 1 for a broadcast, 2(P-1)/P all-reduce, (P-1)/P all-gather.
double bus_factor(const std::string& op, int ranks);

// ---- the NCCL side (nccl/*.cpp when built with NCCL; stubs otherwise) ------------------------

bool nccl_compiled();
// The world NCCL communicator for CUDA ranks (unique id broadcast over MPI). Collective.
std::shared_ptr<NcclState> nccl_init(const Communicator& comm);
// NCCL communicators of the grid's rows and columns (ncclCommSplit). Collective.
void nccl_grid(Communicator::Impl& c, GridComms& g);
void nccl_release(GridComms& g);

}  // namespace kafel::dist
