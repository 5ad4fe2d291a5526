// The collectives benchmark (nccl-tests' conventions): broadcast, all-reduce and all-gather of
// float buffers at each size, the slowest rank's time per run, median, algbw and busbw. Host
// buffers over MPI here; CUDA ranks on NCCL run nccl/bench_nccl.cpp with device buffers.
#include <chrono>
#include <cmath>

#include "dist/comm_impl.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel::dist {

#ifdef KAFEL_HAVE_NCCL
std::vector<CollectiveRecord> nccl_bench_collectives(const Communicator& comm,
                                                     const std::vector<double>& sizes, int reps);
#endif

double bus_factor(const std::string& op, int ranks) {
  if (op == "allreduce") return 2.0 * (ranks - 1) / ranks;
  if (op == "allgather") return double(ranks - 1) / ranks;
  return 1.0;
}

namespace {

using Clock = std::chrono::steady_clock;

// One run of `op` on host buffers; returns this rank's time in microseconds.
double run_host(const Communicator::Impl& c, const std::string& op, std::vector<float>& buf,
                std::int64_t count) {
  const auto t0 = Clock::now();
  MPI_Request req = MPI_REQUEST_NULL;
  if (op == "broadcast")
    check_mpi(MPI_Ibcast(buf.data(), int(count), MPI_FLOAT, 0, c.world, &req), "MPI_Ibcast");
  else if (op == "allreduce")
    check_mpi(
        MPI_Iallreduce(MPI_IN_PLACE, buf.data(), int(count), MPI_FLOAT, MPI_SUM, c.world, &req),
        "MPI_Iallreduce");
  else
    check_mpi(MPI_Iallgather(MPI_IN_PLACE, int(count / c.size), MPI_FLOAT, buf.data(),
                             int(count / c.size), MPI_FLOAT, c.world, &req),
              "MPI_Iallgather");
  wait(c, req, op + " benchmark");
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

std::vector<CollectiveRecord> host_bench(const Communicator& comm, const std::vector<double>& sizes,
                                         int reps) {
  std::vector<CollectiveRecord> out;
  for (const std::string op : {"broadcast", "allreduce", "allgather"}) {
    for (double bytes : sizes) {
      // Whole floats, and for the all-gather a whole share per rank.
      std::int64_t count = std::int64_t(bytes / 4);
      if (op == "allgather") count = count / comm.size() * comm.size();
      if (count < 1) continue;
      std::vector<float> buf(std::size_t(count), 1.0f);
      std::vector<double> times;
      for (int rep = -2; rep < reps; ++rep) {
        comm.barrier();
        const double us = comm.max(run_host(comm.impl(), op, buf, count));
        if (rep >= 0) times.push_back(us);
      }
      CollectiveRecord r{op, "mpi", double(count) * 4, median(times), 0, 0};
      r.algbw_gbs = r.time_us > 0 ? r.bytes / (r.time_us * 1e3) : 0;
      r.busbw_gbs = r.algbw_gbs * bus_factor(op, comm.size());
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

std::vector<CollectiveRecord> bench_collectives(const Communicator& comm,
                                                const std::vector<double>& sizes, int reps) {
  comm.collectively([&] {
    if (reps < 1 || reps > 1000000)
      throw InvalidArgument("collective benchmark repetitions must be between 1 and 1000000 (got " +
                            std::to_string(reps) + ")");
    for (double b : sizes)
      if (!std::isfinite(b) || b < 4 || b > double(kChunkBytes))
        throw InvalidArgument("collective benchmark sizes must be between 4 bytes and 1 GiB (got " +
                              format_num("%g", b) + ")");
    double largest = 0;
    for (double b : sizes) largest = std::max(largest, b);
    check_host_memory(largest, "the collective benchmark's buffer");
  });
#ifdef KAFEL_HAVE_NCCL
  if (comm.transport() == "nccl") return nccl_bench_collectives(comm, sizes, reps);
#endif
  return host_bench(comm, sizes, reps);
}

}  // namespace kafel::dist
