// The communicator: MPI session, one device per rank, error agreement, quiet barriers and the
// polled, chunked collectives of comm_impl.hpp (each bounded by the communicator's timeout).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/thread_pool.hpp"
#include "dist/comm_impl.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

// ---- MPI plumbing ----------------------------------------------------------------------------

void check_mpi(int err, const char* call) {
  if (err == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(err, text, &len);
  throw Error(std::string("MPI error: ") + call + ": " + std::string(text, std::size_t(len)));
}

void abort_job(const Communicator::Impl& c, const std::string& why) {
  std::fprintf(stderr, "kafel: error: rank %d of %d: %s; aborting every rank\n", c.rank, c.size,
               why.c_str());
  std::fflush(stderr);
  MPI_Abort(c.world, 1);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

void wait_all(const Communicator::Impl& c, std::vector<MPI_Request>& reqs, const std::string& what,
              Poll poll) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (long tries = 0;; ++tries) {
    int done = 0;
    check_mpi(MPI_Testall(int(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (done) {
      reqs.clear();
      return;
    }
    if (tries < 1000) continue;
    if (poll == Poll::Idle || tries > 100000)
      std::this_thread::sleep_for(std::chrono::microseconds(poll == Poll::Idle ? 100 : 20));
    else
      std::this_thread::yield();
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (c.opt.timeout_s > 0 && waited > c.opt.timeout_s)
      abort_job(c, what + " did not complete within " + format_num("%g", c.opt.timeout_s) +
                       " s (a peer rank failed or stopped)");
  }
}

void wait(const Communicator::Impl& c, MPI_Request& req, const std::string& what, Poll poll) {
  std::vector<MPI_Request> reqs{req};
  wait_all(c, reqs, what, poll);
  req = MPI_REQUEST_NULL;
}

void start_bcast(void* data, std::size_t bytes, int root, MPI_Comm comm,
                 std::vector<MPI_Request>& reqs) {
  auto* p = static_cast<char*>(data);
  for (std::size_t off = 0; off < bytes; off += kChunkBytes) {
    const int n = int(std::min(kChunkBytes, bytes - off));
    reqs.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Ibcast(p + off, n, MPI_BYTE, root, comm, &reqs.back()), "MPI_Ibcast");
  }
}

void bcast_bytes(const Communicator::Impl& c, void* data, std::size_t bytes, int root,
                 MPI_Comm comm, const std::string& what) {
  std::vector<MPI_Request> reqs;
  start_bcast(data, bytes, root, comm, reqs);
  wait_all(c, reqs, what);
}

namespace {

template <class T>
void allreduce_chunks(const Communicator::Impl& c, T* data, std::int64_t count, MPI_Datatype type,
                      MPI_Comm comm, const std::string& what) {
  const std::int64_t per = std::int64_t(kChunkBytes / sizeof(T));
  std::vector<MPI_Request> reqs;
  for (std::int64_t off = 0; off < count; off += per) {
    reqs.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data + off, int(std::min(per, count - off)), type,
                             MPI_SUM, comm, &reqs.back()),
              "MPI_Iallreduce");
  }
  wait_all(c, reqs, what);
}

}  // namespace

void allreduce_sum(const Communicator::Impl& c, double* data, std::int64_t count, MPI_Comm comm,
                   const std::string& what) {
  allreduce_chunks(c, data, count, MPI_DOUBLE, comm, what);
}

void allreduce_sum(const Communicator::Impl& c, std::uint32_t* data, std::int64_t count,
                   MPI_Comm comm, const std::string& what) {
  allreduce_chunks(c, data, count, MPI_UINT32_T, comm, what);
}

void send_bytes(const Communicator::Impl& c, const void* data, std::size_t bytes, int dest, int tag,
                const std::string& what) {
  std::vector<MPI_Request> reqs;
  const auto* p = static_cast<const char*>(data);
  for (std::size_t off = 0; off < bytes; off += kChunkBytes) {
    reqs.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Isend(p + off, int(std::min(kChunkBytes, bytes - off)), MPI_BYTE, dest, tag,
                        c.world, &reqs.back()),
              "MPI_Isend");
  }
  wait_all(c, reqs, what);
}

void recv_bytes(const Communicator::Impl& c, void* data, std::size_t bytes, int source, int tag,
                const std::string& what) {
  std::vector<MPI_Request> reqs;
  auto* p = static_cast<char*>(data);
  for (std::size_t off = 0; off < bytes; off += kChunkBytes) {
    reqs.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Irecv(p + off, int(std::min(kChunkBytes, bytes - off)), MPI_BYTE, source, tag,
                        c.world, &reqs.back()),
              "MPI_Irecv");
  }
  wait_all(c, reqs, what);
}

// ---- session, grids ---------------------------------------------------------------------------

Session::Session() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  owns_ = true;
}

Session::~Session() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

std::string Grid::name() const {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

Grid Grid::parse(std::string_view text) {
  const auto x = text.find('x');
  auto number = [&](std::string_view s) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string_view::npos)
      return 0;
    return std::stoi(std::string(s));
  };
  Grid g;
  if (x != std::string_view::npos) {
    g.rows = number(text.substr(0, x));
    g.cols = number(text.substr(x + 1));
  }
  if (x == std::string_view::npos || g.rows < 1 || g.cols < 1)
    throw InvalidArgument("process grid '" + std::string(text) +
                          "' must be PxQ with P, Q >= 1 (e.g. 2x2)");
  return g;
}

Grid default_grid(int ranks) {
  int rows = int(std::sqrt(double(ranks)));
  while (rows > 1 && ranks % rows != 0) --rows;
  return {std::max(rows, 1), ranks / std::max(rows, 1)};
}

const GridComms& Communicator::Impl::grid(Grid g) {
  const auto key = std::make_pair(g.rows, g.cols);
  if (auto it = grids.find(key); it != grids.end()) return it->second;
  if (g.size() != size)
    throw InvalidArgument("process grid " + g.name() + " has " + std::to_string(g.size()) +
                          " processes but the job has " + std::to_string(size) + " ranks");
  GridComms gc;
  gc.prow = rank / g.cols;
  gc.pcol = rank % g.cols;
  check_mpi(MPI_Comm_split(world, gc.prow, gc.pcol, &gc.row), "MPI_Comm_split");
  check_mpi(MPI_Comm_split(world, gc.pcol, gc.prow, &gc.col), "MPI_Comm_split");
  if (nccl) nccl_grid(*this, gc);
  return grids.emplace(key, gc).first->second;
}

Communicator::Impl::~Impl() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (auto& [key, g] : grids) {
    if (nccl) nccl_release(g);
    if (!finalized && g.row != MPI_COMM_NULL) MPI_Comm_free(&g.row);
    if (!finalized && g.col != MPI_COMM_NULL) MPI_Comm_free(&g.col);
  }
  nccl.reset();
  if (finalized) return;
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  if (world != MPI_COMM_NULL) MPI_Comm_free(&world);
}

// ---- error agreement --------------------------------------------------------------------------

namespace {

struct AgreedMark {
  virtual ~AgreedMark() = default;
};

template <class Base>
class Agreed : public Base, public AgreedMark {
 public:
  explicit Agreed(const std::string& what) : Base(what) {}
};

enum class Kind : int { other = 1, invalid, io, unsupported, device, memory, verification };

// The failure's kind (kafel's exception types) and message.
std::pair<Kind, std::string> describe(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const InvalidArgument& e) {
    return {Kind::invalid, e.what()};
  } catch (const IoError& e) {
    return {Kind::io, e.what()};
  } catch (const Unsupported& e) {
    return {Kind::unsupported, e.what()};
  } catch (const DeviceError& e) {
    return {Kind::device, e.what()};
  } catch (const OutOfMemory& e) {
    return {Kind::memory, e.what()};
  } catch (const VerificationError& e) {
    return {Kind::verification, e.what()};
  } catch (const std::bad_alloc&) {
    return {Kind::memory, "out of host memory"};
  } catch (const std::exception& e) {
    return {Kind::other, e.what()};
  } catch (...) {
    return {Kind::other, "unknown error"};
  }
}

[[noreturn]] void throw_agreed(Kind kind, const std::string& what) {
  switch (kind) {
    case Kind::invalid:
      throw Agreed<InvalidArgument>(what);
    case Kind::io:
      throw Agreed<IoError>(what);
    case Kind::unsupported:
      throw Agreed<Unsupported>(what);
    case Kind::device:
      throw Agreed<DeviceError>(what);
    case Kind::memory:
      throw Agreed<OutOfMemory>(what);
    case Kind::verification:
      throw Agreed<VerificationError>(what);
    default:
      throw Agreed<Error>(what);
  }
}

bool agreed_failure(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return is_agreed(e);
  } catch (...) {
    return false;
  }
}

}  // namespace

bool is_agreed(const std::exception& e) {
  return dynamic_cast<const AgreedMark*>(&e) != nullptr;
}

void Communicator::agree(std::exception_ptr failure) const {
  const Impl& c = *impl_;
  int mine = failure ? c.rank : c.size, first = c.size;
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c.world, &req), "MPI_Iallreduce");
  wait(c, req, "error agreement", Poll::Idle);
  if (first == c.size) return;
  std::string message;
  int header[2] = {0, 0};
  if (c.rank == first) {
    auto [kind, what] = describe(failure);
    // An agreed error is the same on every rank already; a fresh one says where it happened.
    message = agreed_failure(failure) || c.size == 1
                  ? what
                  : "rank " + std::to_string(first) + ": " + what;
    header[0] = int(kind);
    header[1] = int(std::min<std::size_t>(message.size(), 4096));
  }
  bcast_bytes(c, header, sizeof header, first, c.world, "error agreement");
  message.resize(std::size_t(header[1]));
  bcast_bytes(c, message.data(), message.size(), first, c.world, "error agreement");
  throw_agreed(Kind(header[0]), message);
}

// ---- the communicator -------------------------------------------------------------------------

namespace {

int cuda_devices_present() {
  int n = 0;
  for (const Device& d : list_devices()) n += d.backend == "cuda";
  return n;
}

// "cuda" means one GPU per rank, numbered by the rank's place on its node.
Device pick_device(const CommOptions& opt, int local_rank, int local_size) {
  std::string spec = opt.device;
  if (spec.empty()) {
    const char* env = std::getenv("KAFEL_DEVICE");
    spec = env && *env ? env : "cpu";
  }
  if (spec != "cuda") return select_device(spec);
  const int gpus = cuda_devices_present();
  if (gpus == 0) throw Unsupported("device 'cuda': no CUDA GPU on this node");
  if (local_size > gpus)
    throw Unsupported(std::to_string(local_size) + " ranks on this node but " +
                      std::to_string(gpus) + " CUDA GPU" + (gpus == 1 ? "" : "s") +
                      ": start at most one rank per GPU");
  return select_device("cuda:" + std::to_string(local_rank));
}

// CPU ranks on one node share its cores instead of each taking all of them.
void share_cpus(const Device& device, const CommOptions& opt, int local_size) {
  if (device.backend != "cpu" || !opt.share_cpus || std::getenv("KAFEL_NUM_THREADS")) return;
  const int threads = std::max(1, hardware_threads() / std::max(local_size, 1));
  setenv("KAFEL_NUM_THREADS", std::to_string(threads).c_str(), 0);
}

// NCCL refuses two ranks on one GPU; say so in kafel's terms before it is asked.
void check_one_gpu_per_rank(const Communicator& comm) {
  const Communicator::Impl& c = comm.impl();
  std::vector<int> ordinals(std::size_t(c.local_size));
  int mine = c.device.index;
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&mine, 1, MPI_INT, ordinals.data(), 1, MPI_INT, c.node, &req),
            "MPI_Iallgather");
  wait(c, req, "all-gather of the GPU numbers", Poll::Idle);
  comm.collectively([&] {
    for (int r = 0; r < c.local_size; ++r)
      if (r != c.local_rank && ordinals[std::size_t(r)] == mine)
        throw InvalidArgument("local ranks " + std::to_string(std::min(r, c.local_rank)) + " and " +
                              std::to_string(std::max(r, c.local_rank)) + " both use " +
                              c.device.id + "; NCCL needs a GPU per rank (device 'cuda' gives " +
                              "each rank the GPU of its local rank)");
  });
}

void check_options(const CommOptions& opt) {
  if (!std::isfinite(opt.timeout_s) || opt.timeout_s < 0 || opt.timeout_s > 1e6)
    throw InvalidArgument("communicator timeout must be between 0 (none) and 1e6 s (got " +
                          format_num("%g", opt.timeout_s) + ")");
}

}  // namespace

Communicator::Communicator(MPI_Comm comm, const CommOptions& opt)
    : impl_(std::make_unique<Impl>()) {
  Impl& c = *impl_;
  c.opt = opt;
  check_mpi(MPI_Comm_dup(comm, &c.world), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(c.world, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Comm_rank(c.world, &c.rank);
  MPI_Comm_size(c.world, &c.size);
  check_mpi(MPI_Comm_split_type(c.world, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &c.node),
            "MPI_Comm_split_type");
  MPI_Comm_rank(c.node, &c.local_rank);
  MPI_Comm_size(c.node, &c.local_size);
  MPI_Query_thread(&c.thread_level);
  collectively([&] {
    check_options(opt);
    c.device = pick_device(opt, c.local_rank, c.local_size);
    share_cpus(c.device, opt, c.local_size);
  });
  // NCCL when every rank is on a CUDA GPU of its own; otherwise every rank stays on MPI.
  const double all_cuda = min(c.device.backend == "cuda" ? 1.0 : 0.0);
  if (all_cuda > 0 && opt.nccl && nccl_compiled()) {
    check_one_gpu_per_rank(*this);
    c.nccl = nccl_init(*this);
  }
}

Communicator::~Communicator() = default;

int Communicator::rank() const {
  return impl_->rank;
}
int Communicator::size() const {
  return impl_->size;
}
int Communicator::local_rank() const {
  return impl_->local_rank;
}
int Communicator::local_size() const {
  return impl_->local_size;
}
const Device& Communicator::device() const {
  return impl_->device;
}
std::string Communicator::transport() const {
  return impl_->nccl ? "nccl" : "mpi";
}
MPI_Comm Communicator::mpi() const {
  return impl_->world;
}
const CommOptions& Communicator::options() const {
  return impl_->opt;
}
bool Communicator::threads_ok() const {
  return impl_->thread_level >= MPI_THREAD_SERIALIZED;
}

void Communicator::barrier() const {
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(impl_->world, &req), "MPI_Ibarrier");
  wait(*impl_, req, "barrier", Poll::Idle);
}

namespace {

double reduce(const Communicator::Impl& c, double v, MPI_Op op) {
  double out = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&v, &out, 1, MPI_DOUBLE, op, c.world, &req), "MPI_Iallreduce");
  wait(c, req, "all-reduce of one value", Poll::Idle);
  return out;
}

}  // namespace

double Communicator::max(double v) const {
  return reduce(*impl_, v, MPI_MAX);
}
double Communicator::min(double v) const {
  return reduce(*impl_, v, MPI_MIN);
}
double Communicator::sum(double v) const {
  return reduce(*impl_, v, MPI_SUM);
}

std::vector<double> Communicator::all(double v) const {
  std::vector<double> out(std::size_t(impl_->size));
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, impl_->world, &req),
            "MPI_Iallgather");
  wait(*impl_, req, "all-gather of one value", Poll::Idle);
  return out;
}

// ---- shared checks and gathers ----------------------------------------------------------------

// Every rank must describe the same problem; a rank that does not is named.
void check_same_everywhere(const Communicator& comm, const std::vector<double>& mine,
                           const std::string& what) {
  const auto n = int(mine.size());
  std::vector<double> all(mine.size() * std::size_t(comm.size()));
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(mine.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, comm.mpi(), &req),
            "MPI_Iallgather");
  wait(comm.impl(), req, "all-gather of the problem", Poll::Idle);
  comm.collectively([&] {
    for (int r = 1; r < comm.size(); ++r)
      if (!std::equal(all.begin(), all.begin() + n, all.begin() + std::ptrdiff_t(r) * n))
        throw InvalidArgument("rank " + std::to_string(r) + "'s " + what +
                              " differs from rank 0's");
  });
}

std::vector<std::vector<double>> gather_vectors(const Communicator& comm,
                                                const std::vector<double>& mine, int root) {
  constexpr int kTag = 7103;
  const Communicator::Impl& c = comm.impl();
  std::vector<std::vector<double>> out;
  if (comm.rank() != root) {
    const double count = double(mine.size());
    send_bytes(c, &count, sizeof count, root, kTag, "gather of per-rank figures");
    send_bytes(c, mine.data(), mine.size() * sizeof(double), root, kTag,
               "gather of per-rank figures");
    return out;
  }
  out.resize(std::size_t(comm.size()));
  for (int r = 0; r < comm.size(); ++r) {
    if (r == root) {
      out[std::size_t(r)] = mine;
      continue;
    }
    double count = 0;
    recv_bytes(c, &count, sizeof count, r, kTag, "gather of per-rank figures");
    out[std::size_t(r)].resize(std::size_t(count));
    recv_bytes(c, out[std::size_t(r)].data(), std::size_t(count) * sizeof(double), r, kTag,
               "gather of per-rank figures");
  }
  return out;
}

// ---- without NCCL: the CUDA ranks stay on MPI ----------------------------------------------

#ifndef KAFEL_HAVE_NCCL
struct NcclState {};
bool nccl_compiled() {
  return false;
}
std::shared_ptr<NcclState> nccl_init(const Communicator&) {
  return nullptr;
}
void nccl_grid(Communicator::Impl&, GridComms&) {}
void nccl_release(GridComms&) {}
#endif

}  // namespace kafel::dist
