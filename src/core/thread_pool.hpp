// Host threads: the persistent worker pool of every threaded CPU kernel (GEMM and covariance),
// the thread-count policy ($KAFEL_NUM_THREADS, affinity mask) and a simple row splitter.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kafel {

// Most threads any kafel kernel or parameter asks for.
inline constexpr int kMaxThreads = 1024;

// Logical CPUs the OS lets this process use (its affinity mask; at least 1), ascending.
const std::vector<int>& allowed_cpus();
int hardware_threads();
// Threads the CPU kernels use by default: $KAFEL_NUM_THREADS when set, else every usable CPU.
// A malformed or out-of-range $KAFEL_NUM_THREADS throws InvalidArgument (never ignored).
int default_threads();

// Splits [0, n) into chunks of at least min_chunk over default_threads() fresh threads and
// runs fn(begin, end) on each (the reference GEMM: independent of the pool's state).
void parallel_rows(std::int64_t n, std::int64_t min_chunk,
                   const std::function<void(std::int64_t, std::int64_t)>& fn);

// Waits until pred() holds: spins briefly, then yields the core on every check, so a thread
// waiting for work of a descheduled peer gives its core away instead of burning it.
void wait_until(const std::function<bool()>& pred);

// Policy against oversubscription: one job at a time owns the workers. A call that finds the
// pool busy (another user thread is inside a GEMM or a covariance) runs single-threaded on its
// own thread, so kafel never has more of its threads computing than the pool's size plus the
// callers' own.
class ThreadPool {
 public:
  // job(tid, nthreads): tid 0 is the caller. The job must hand out its work dynamically and
  // return on tid 0 only when all work is done: workers are not guaranteed to take part (one
  // that wakes after the caller has finished skips the job). Jobs must not throw.
  using Job = std::function<void(int tid, int nthreads)>;

  // The process-wide pool; workers are created on first use and live until exit.
  static ThreadPool& instance();
  ~ThreadPool();

  // Runs `job` on up to `threads` threads (1 when the pool is busy); returns when the caller's
  // part has returned and no worker is still inside the job.
  void run(int threads, const Job& job);

 private:
  ThreadPool() = default;
  void ensure_workers(int count);  // grows the pool; called with mutex_ held
  void worker_loop(int index);

  // admit_: generation (high 32 bits) | open flag (bit 31) | workers inside the job (low bits).
  static constexpr std::uint64_t kOpen = 1ull << 31, kCount = kOpen - 1;

  std::mutex busy_;  // held by the call that owns the workers
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint64_t> admit_{0};
  const Job* job_ = nullptr;
  int job_threads_ = 0;
  bool stop_ = false;
};

// Runs fn(part, tid) once for every part in [0, parts) on up to `threads` pool threads (tid <
// threads, so per-thread scratch can be indexed by it). Parts are claimed, not assigned: a
// late worker or a busy pool only means the others take more parts, so a result must depend
// on the part, never on the tid. fn must not throw.
void parallel_parts(int parts, int threads, const std::function<void(int part, int tid)>& fn);

}  // namespace kafel
