// The persistent worker pool. Workers spin for ~100 us before sleeping, so back-to-back GEMM
// calls (benchmarks, loops) do not pay a futex wake-up; admission is closed when the caller is
// done, so a worker descheduled by another process never delays a GEMM it did not join.
#include "cpu/thread_pool.hpp"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kafel::cpu {

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

}  // namespace kafel::cpu
