// The shape suite of issue 18, shared by the cpu, opencl and gpu suites: sizes of 1, 2, 3 and
// primes, k far beyond m*n, every split count, exact split reductions, determinism, batches.
#pragma once

#include <optional>

#include "common/ladder.hpp"
#include "kafel/device.hpp"

namespace kafel::test {

// m, n or k in {1, 2, 3, primes} and k far larger than m*n, against the reference. Sizes a
// kernel refuses (one block's thread limit) are skipped; others must verify.
void shapes_edge_sizes(const std::optional<Device>& device, const LadderCase& c);
// Kernels with a SPLITK parameter: every point of their space (each tile with each split
// candidate) and odd split counts (3, 5, 7, 33, 256: more than k has tiles) on long-k shapes with
// edge tiles, against the reference. Skipped for kernels without SPLITK.
void shapes_split_counts(const std::optional<Device>& device, const LadderCase& c);
// Integer-valued inputs with k split into 1, 2, 3, 7 and 16 slices: the result equals the
// reference exactly, so the reduction loses nothing. Skipped for kernels without SPLITK.
void shapes_split_exact(const std::optional<Device>& device, const LadderCase& c);
// The same problem run twice gives the same bits (each split count of a SPLITK kernel; the
// chosen parameters otherwise). Our kernels only: baselines are not ours to promise.
void shapes_deterministic(const std::optional<Device>& device, const LadderCase& c);
// Batches of 1 and 3 odd-sized matrices, strided with gaps (left untouched) and as a shuffled
// pointer array, column-major C included; kernels with `batches` also a batch of 1000.
void shapes_batched(const std::optional<Device>& device, const LadderCase& c);
// A batch of 1000 through the default choice (no kernel named) for each natural type the
// device's kernels implement.
void shapes_batched_default(const std::optional<Device>& device);
// Output matrices that overlap (stride 0, a stride under the span, a repeated pointer),
// negative strides, lists of different lengths or forms: InvalidArgument naming the problem,
// before any kernel runs. Side-by-side matrices that interleave without sharing are accepted.
void shapes_batch_refusals(const std::optional<Device>& device);

}  // namespace kafel::test
