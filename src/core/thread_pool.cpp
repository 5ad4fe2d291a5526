// The persistent worker pool. Workers spin for ~100 us before sleeping, so back-to-back GEMM
// calls (benchmarks, loops) do not pay a futex wake-up; admission is closed when the caller is
// done, so a worker descheduled by another process never delays a GEMM it did not join.
#include "core/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sched.h>
#endif

#include "kafel/error.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kafel {

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until pred() holds or `budget` has passed; returns pred().
template <class Pred>
bool spin_until(Pred pred, std::chrono::microseconds budget) {
  const auto end = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() > end) return pred();
  }
}

constexpr std::chrono::microseconds kIdleSpin{100};

}  // namespace

void wait_until(const std::function<bool()>& pred) {
  for (int i = 0; i < 256; ++i) {
    if (pred()) return;
    cpu_relax();
  }
  while (!pred()) std::this_thread::yield();
}

ThreadPool& ThreadPool::instance() {
  static ThreadPool pool;
  return pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::ensure_workers(int count) {
  while (static_cast<int>(workers_.size()) < count) {
    const int index = static_cast<int>(workers_.size());
    workers_.emplace_back([this, index] { worker_loop(index); });
  }
}

void ThreadPool::run(int threads, const Job& job) {
  std::unique_lock owner(busy_, std::try_to_lock);
  if (threads <= 1 || !owner.owns_lock()) return job(0, 1);
  std::uint64_t gen;
  {
    std::lock_guard lock(mutex_);
    ensure_workers(threads - 1);
    job_ = &job;
    job_threads_ = threads;
    gen = generation_.load(std::memory_order_relaxed) + 1;
    admit_.store((gen << 32) | kOpen, std::memory_order_release);
    generation_.store(gen, std::memory_order_release);
  }
  wake_.notify_all();
  job(0, threads);
  // Close admission; wait only for the workers that got in.
  admit_.fetch_and(~kOpen, std::memory_order_acq_rel);
  wait_until([&] { return (admit_.load(std::memory_order_acquire) & kCount) == 0; });
}

void parallel_parts(int parts, int threads, const std::function<void(int, int)>& fn) {
  if (parts <= 0) return;
  std::atomic<int> next{0};
  ThreadPool::instance().run(std::clamp(threads, 1, parts), [&](int tid, int) {
    for (int p = next.fetch_add(1, std::memory_order_relaxed); p < parts;
         p = next.fetch_add(1, std::memory_order_relaxed))
      fn(p, tid);
  });
}

void ThreadPool::worker_loop(int index) {
  const int tid = index + 1;
  std::uint64_t seen = 0;
  for (;;) {
    const auto arrived = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(arrived, kIdleSpin)) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || arrived(); });
      if (stop_) return;
    }
    // Read the job under the lock: the caller may already be publishing the next one.
    const Job* job;
    int threads;
    {
      std::lock_guard lock(mutex_);
      seen = generation_.load(std::memory_order_acquire);
      job = job_;
      threads = job_threads_;
    }
    if (tid >= threads) continue;
    // Enter only while this generation's job is still open.
    std::uint64_t a = admit_.load(std::memory_order_acquire);
    bool entered = false;
    while ((a >> 32) == (seen & 0xffffffffu) && (a & kOpen) && !entered)
      entered = admit_.compare_exchange_weak(a, a + 1, std::memory_order_acq_rel);
    if (!entered) continue;
    (*job)(tid, threads);
    admit_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

// ---- the thread-count policy ----------------------------------------------------------------

const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> v;
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
      for (int i = 0; i < CPU_SETSIZE; ++i)
        if (CPU_ISSET(i, &set)) v.push_back(i);
#endif
    if (v.empty())
      for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
        v.push_back(static_cast<int>(i));
    return v;
  }();
  return cpus;
}

int hardware_threads() {
  return static_cast<int>(allowed_cpus().size());
}

int default_threads() {
  const char* env = std::getenv("KAFEL_NUM_THREADS");
  if (!env || !*env) return hardware_threads();
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 1 || v > kMaxThreads)
    throw InvalidArgument("KAFEL_NUM_THREADS='" + std::string(env) +
                          "' is not a thread count (1.." + std::to_string(kMaxThreads) + ")");
  return static_cast<int>(v);
}

void parallel_rows(std::int64_t n, std::int64_t min_chunk,
                   const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const std::int64_t cores = default_threads();
  const std::int64_t parts =
      std::clamp<std::int64_t>(n / std::max<std::int64_t>(min_chunk, 1), 1, cores);
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t step = (n + parts - 1) / parts;
  for (std::int64_t b = 0; b < n; b += step) pool.emplace_back(fn, b, std::min(n, b + step));
  for (auto& t : pool) t.join();
}

}  // namespace kafel
