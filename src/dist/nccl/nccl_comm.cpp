// NCCL communicators of the CUDA ranks: the world one from a unique id that rank 0 makes and MPI
// broadcasts, the grid's rows and columns split from it, and the polled stream waits.
#include "dist/nccl/nccl_comm.hpp"

#include <chrono>
#include <thread>

#include "cuda/runtime.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

NcclState::~NcclState() {
  if (world) ncclCommDestroy(world);
}

void check_nccl(ncclResult_t res, const char* call) {
  if (res == ncclSuccess || res == ncclInProgress) return;
  const char* last = ncclGetLastError(nullptr);
  throw DeviceError(std::string("NCCL error: ") + call + ": " + ncclGetErrorString(res) +
                    (last && *last ? std::string(" (") + last + ")" : std::string()));
}

bool nccl_compiled() {
  return true;
}

std::shared_ptr<NcclState> nccl_init(const Communicator& comm) {
  const Communicator::Impl& c = comm.impl();
  auto st = std::make_shared<NcclState>();
  st->ordinal = c.device.index;
  ncclUniqueId id{};
  comm.collectively([&] {
    KAFEL_CUDA_CHECK(cudaSetDevice(st->ordinal));
    if (c.rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  });
  bcast_bytes(c, &id, sizeof id, 0, c.world, "broadcast of the NCCL unique id");
  const ncclResult_t res = ncclCommInitRank(&st->world, c.size, id, c.rank);
  comm.collectively([&] { check_nccl(res, "ncclCommInitRank"); });
  return st;
}

void nccl_grid(Communicator::Impl& c, GridComms& g) {
  cuda::DeviceGuard guard(c.nccl->ordinal);
  ncclComm_t row = nullptr, col = nullptr;
  check_nccl(ncclCommSplit(c.nccl->world, g.prow, g.pcol, &row, nullptr), "ncclCommSplit (rows)");
  check_nccl(ncclCommSplit(c.nccl->world, g.pcol, g.prow, &col, nullptr),
             "ncclCommSplit (columns)");
  g.nccl_row = row;
  g.nccl_col = col;
}

void nccl_release(GridComms& g) {
  if (g.nccl_row) ncclCommDestroy(static_cast<ncclComm_t>(g.nccl_row));
  if (g.nccl_col) ncclCommDestroy(static_cast<ncclComm_t>(g.nccl_col));
  g.nccl_row = g.nccl_col = nullptr;
}

void wait_stream(const Communicator::Impl& c, cudaStream_t stream,
                 const std::vector<ncclComm_t>& comms, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (long tries = 0;; ++tries) {
    const cudaError_t st = cudaStreamQuery(stream);
    if (st == cudaSuccess) return;
    if (st != cudaErrorNotReady) KAFEL_CUDA_CHECK(st);
    for (ncclComm_t comm : comms) {
      ncclResult_t async = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError");
      check_nccl(async, what.c_str());
    }
    if (tries > 1000) std::this_thread::sleep_for(std::chrono::microseconds(20));
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (c.opt.timeout_s > 0 && waited > c.opt.timeout_s) {
      for (ncclComm_t comm : comms) ncclCommAbort(comm);
      abort_job(c, what + " did not complete within " + format_num("%g", c.opt.timeout_s) +
                       " s (a peer rank failed or stopped)");
    }
  }
}

}  // namespace kafel::dist
