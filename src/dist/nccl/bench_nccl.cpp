// The collectives benchmark on CUDA ranks: NCCL broadcast, all-reduce and all-gather of float
// buffers in device memory, timed with CUDA events around each call (nccl-tests' conventions).
#include <memory>

#include "cuda/runtime.hpp"
#include "dist/nccl/nccl_comm.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

std::vector<CollectiveRecord> nccl_bench_collectives(const Communicator& comm,
                                                     const std::vector<double>& sizes, int reps) {
  const Communicator::Impl& c = comm.impl();
  const ncclComm_t world = c.nccl->world;
  cuda::DeviceGuard guard(c.device.index);
  double largest = 0;
  for (double b : sizes) largest = std::max(largest, b);
  cuda::DeviceBuffer buf;
  std::unique_ptr<cuda::Stream> stream;
  std::unique_ptr<cuda::EventTimer> timer;
  comm.collectively([&] {
    buf = cuda::DeviceBuffer(std::size_t(largest), "collective benchmark buffer");
    buf.fill_bytes(0);
    stream = std::make_unique<cuda::Stream>();
    timer = std::make_unique<cuda::EventTimer>();
  });
  auto* data = buf.as<float>();
  std::vector<CollectiveRecord> out;
  for (const std::string op : {"broadcast", "allreduce", "allgather"}) {
    for (double bytes : sizes) {
      std::int64_t count = std::int64_t(bytes / 4);
      if (op == "allgather") count = count / c.size * c.size;
      if (count < 1) continue;
      const auto n = std::size_t(count);
      std::vector<double> times;
      for (int rep = -2; rep < reps; ++rep) {
        comm.barrier();
        timer->start(*stream);
        if (op == "broadcast")
          check_nccl(ncclBroadcast(data, data, n, ncclFloat, 0, world, *stream), "ncclBroadcast");
        else if (op == "allreduce")
          check_nccl(ncclAllReduce(data, data, n, ncclFloat, ncclSum, world, *stream),
                     "ncclAllReduce");
        else
          check_nccl(ncclAllGather(data + std::size_t(c.rank) * (n / std::size_t(c.size)), data,
                                   n / std::size_t(c.size), ncclFloat, world, *stream),
                     "ncclAllGather");
        timer->stop(*stream);
        wait_stream(c, *stream, {world}, op + " benchmark");
        const double us = comm.max(timer->ms() * 1e3);
        if (rep >= 0) times.push_back(us);
      }
      CollectiveRecord r{op, "nccl", double(count) * 4, median(times), 0, 0};
      r.algbw_gbs = r.time_us > 0 ? r.bytes / (r.time_us * 1e3) : 0;
      r.busbw_gbs = r.algbw_gbs * bus_factor(op, c.size);
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace kafel::dist
