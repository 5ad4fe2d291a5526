// Block-cyclic layouts (ScaLAPACK's NUMROC arithmetic), distributed matrices, the seeded pattern
// that gives the same global matrix on any grid, and scatter/gather to and from one root.
#include <algorithm>
#include <cstring>

#include "core/thread_pool.hpp"
#include "dist/comm_impl.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

namespace {

// Elements a process at distance `dist` from the first owner gets of n split in blocks of nb
// over `procs` processes (ScaLAPACK's NUMROC with the source process 0).
std::int64_t numroc(std::int64_t n, std::int64_t nb, int dist, int procs) {
  const std::int64_t blocks = n / nb;
  std::int64_t count = blocks / procs * nb;
  const std::int64_t extra = blocks % procs;
  if (dist < extra)
    count += nb;
  else if (dist == extra)
    count += n % nb;
  return count;
}

std::string dims(std::int64_t r, std::int64_t c) {
  return std::to_string(r) + "x" + std::to_string(c);
}

}  // namespace

std::int64_t BlockLayout::local_rows(int prow) const {
  return numroc(rows, mb, prow, grid.rows);
}

std::int64_t BlockLayout::local_cols(int pcol) const {
  return numroc(cols, nb, pcol, grid.cols);
}

std::int64_t BlockLayout::global_row(int prow, std::int64_t li) const {
  return ((li / mb) * grid.rows + prow) * mb + li % mb;
}

std::int64_t BlockLayout::global_col(int pcol, std::int64_t lj) const {
  return ((lj / nb) * grid.cols + pcol) * nb + lj % nb;
}

void BlockLayout::validate(const char* what) const {
  if (rows < 0 || cols < 0)
    throw InvalidArgument(std::string(what) + ": sizes must not be negative (" + dims(rows, cols) +
                          ")");
  if (mb < 1 || nb < 1)
    throw InvalidArgument(std::string(what) + ": blocks must be at least 1x1 (got " + dims(mb, nb) +
                          ")");
  if (grid.rows < 1 || grid.cols < 1)
    throw InvalidArgument(std::string(what) + ": process grid " + grid.name() +
                          " must be at least 1x1");
}

std::string BlockLayout::describe() const {
  return dims(rows, cols) + " in " + dims(mb, nb) + " blocks on " + grid.name();
}

DistMatrix::DistMatrix(const Communicator& comm, const BlockLayout& layout, DType dtype)
    : layout_(layout) {
  layout.validate("distributed matrix");
  if (layout.grid.size() != comm.size())
    throw InvalidArgument("distributed matrix: process grid " + layout.grid.name() + " has " +
                          std::to_string(layout.grid.size()) + " processes but the job has " +
                          std::to_string(comm.size()) + " ranks");
  prow_ = comm.rank() / layout.grid.cols;
  pcol_ = comm.rank() % layout.grid.cols;
  local_ = Matrix(dtype, layout.local_rows(prow_), layout.local_cols(pcol_));
}

DistMatrix DistMatrix::clone() const {
  DistMatrix out;
  out.layout_ = layout_;
  out.prow_ = prow_;
  out.pcol_ = pcol_;
  out.local_ = local_.clone();
  return out;
}

// ---- the seeded pattern -----------------------------------------------------------------------

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double pattern_value(DType t, std::uint64_t seed, std::int64_t i, std::int64_t j) {
  const std::uint64_t h = mix(mix(seed ^ std::uint64_t(i) * 0xD1B54A32D192ED03ull) ^
                              std::uint64_t(j) * 0x8CB92BA72F3D8DD7ull);
  if (is_integer(t)) return double(std::int64_t(h % 9) - 4);
  return double(h >> 11) * 0x1.0p-52 - 1.0;  // uniform in [-1, 1)
}

// Fills rows [0, rows) of `m` with the values of global rows row_of(i), columns col_of(j).
template <class RowOf, class ColOf>
void fill_rows(const MatrixView& m, std::uint64_t seed, RowOf row_of, ColOf col_of) {
  if (is_complex(m.dtype))
    throw InvalidArgument("fill_pattern: complex matrices are not supported (" +
                          std::string(to_string(m.dtype)) + ")");
  parallel_rows(m.rows, 16, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0; i < r1; ++i)
      for (std::int64_t j = 0; j < m.cols; ++j)
        m.set(i, j, pattern_value(m.dtype, seed, row_of(i), col_of(j)));
  });
}

}  // namespace

void fill_pattern(DistMatrix& m, std::uint64_t seed) {
  const BlockLayout& l = m.layout();
  const int prow = m.prow(), pcol = m.pcol();
  fill_rows(
      m.local().view(), seed, [&](std::int64_t i) { return l.global_row(prow, i); },
      [&](std::int64_t j) { return l.global_col(pcol, j); });
}

void fill_pattern(const MatrixView& m, std::uint64_t seed) {
  fill_rows(
      m, seed, [](std::int64_t i) { return i; }, [](std::int64_t j) { return j; });
}

// ---- scatter / gather ------------------------------------------------------------------------

namespace {

constexpr int kScatterTag = 7101, kGatherTag = 7102;

// Copies between the global matrix and process (prow, pcol)'s local block, element by element
// through double (exact for every real type) or row segments when types and layout agree.
void copy_local(const BlockLayout& l, int prow, int pcol, const MatrixView& global,
                const MatrixView& local, bool to_local) {
  const bool same = global.dtype == local.dtype && global.layout == Layout::RowMajor;
  const std::size_t es = dtype_size(local.dtype);
  for (std::int64_t li = 0; li < local.rows; ++li) {
    const std::int64_t gi = l.global_row(prow, li);
    for (std::int64_t lj = 0; lj < local.cols;) {
      const std::int64_t gj = l.global_col(pcol, lj);
      const std::int64_t run = std::min(l.nb - lj % l.nb, local.cols - lj);
      if (same) {
        void* g = global.address(gi, gj);
        void* p = local.address(li, lj);
        std::memcpy(to_local ? p : g, to_local ? g : p, std::size_t(run) * es);
      } else {
        for (std::int64_t x = 0; x < run; ++x) {
          if (to_local)
            local.set(li, lj + x, global.get(gi, gj + x));
          else
            global.set(gi, gj + x, local.get(li, lj + x));
        }
      }
      lj += run;
    }
  }
}

std::size_t local_bytes(const Matrix& m) {
  return std::size_t(m.rows() * m.cols()) * dtype_size(m.dtype());
}

}  // namespace

void scatter(const Communicator& comm, const MatrixView* global, DistMatrix& out, int root) {
  const BlockLayout& l = out.layout();
  comm.collectively([&] {
    if (root < 0 || root >= comm.size())
      throw InvalidArgument("scatter: root " + std::to_string(root) + " is not a rank (0.." +
                            std::to_string(comm.size() - 1) + ")");
    if (comm.rank() != root) return;
    if (!global) throw InvalidArgument("scatter: the root has no matrix to scatter");
    global->validate("scattered matrix");
    if (global->rows != l.rows || global->cols != l.cols)
      throw InvalidArgument("scatter: the matrix is " + dims(global->rows, global->cols) +
                            " but the distribution is for " + dims(l.rows, l.cols));
  });
  const Communicator::Impl& c = comm.impl();
  if (comm.rank() != root) {
    recv_bytes(c, out.local().data(), local_bytes(out.local()), root, kScatterTag,
               "scatter from rank " + std::to_string(root));
    return;
  }
  for (int r = 0; r < comm.size(); ++r) {
    const int prow = r / l.grid.cols, pcol = r % l.grid.cols;
    if (r == root) {
      copy_local(l, prow, pcol, *global, out.local().view(), true);
      continue;
    }
    Matrix part(out.dtype(), l.local_rows(prow), l.local_cols(pcol));
    copy_local(l, prow, pcol, *global, part.view(), true);
    send_bytes(c, part.data(), local_bytes(part), r, kScatterTag,
               "scatter to rank " + std::to_string(r));
  }
}

Matrix gather(const Communicator& comm, const DistMatrix& in, int root) {
  const BlockLayout& l = in.layout();
  comm.collectively([&] {
    if (root < 0 || root >= comm.size())
      throw InvalidArgument("gather: root " + std::to_string(root) + " is not a rank (0.." +
                            std::to_string(comm.size() - 1) + ")");
  });
  const Communicator::Impl& c = comm.impl();
  if (comm.rank() != root) {
    send_bytes(c, in.local().data(), local_bytes(in.local()), root, kGatherTag,
               "gather to rank " + std::to_string(root));
    return Matrix();
  }
  Matrix global(in.dtype(), l.rows, l.cols);
  for (int r = 0; r < comm.size(); ++r) {
    const int prow = r / l.grid.cols, pcol = r % l.grid.cols;
    if (r == root) {
      copy_local(l, prow, pcol, global.view(), in.local().view(), false);
      continue;
    }
    Matrix part(in.dtype(), l.local_rows(prow), l.local_cols(pcol));
    recv_bytes(c, part.data(), local_bytes(part), r, kGatherTag,
               "gather from rank " + std::to_string(r));
    copy_local(l, prow, pcol, global.view(), part.view(), false);
  }
  return global;
}

}  // namespace kafel::dist
