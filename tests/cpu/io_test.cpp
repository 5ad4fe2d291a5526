// File formats: matmul.dat, .npy and raw sample round trips, and every bad-input case
// (truncation, size mismatches, absurd sizes, unsupported dtypes) failing with a clear error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <filesystem>

#include "io/file_util.hpp"
#include "io_test_util.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/io.hpp"

namespace kafel {
namespace {

using test::as_bytes;
using test::expect_error;
using test::read_bytes;
using test::ScratchDir;
using test::write_bytes;

// Element-wise equality of two matrices of the same shape (any layouts).
void expect_same(const MatrixView& a, const MatrixView& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  ASSERT_EQ(a.dtype, b.dtype);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j) ASSERT_EQ(a.get(i, j), b.get(i, j)) << i << "," << j;
}

Matrix random_matrix(DType t, std::int64_t r, std::int64_t c, Layout l = Layout::RowMajor,
                     std::int64_t ld = 0) {
  Matrix m(t, r, c, l, ld);
  std::mt19937_64 rng(7);
  fill_random_normal(m, rng);
  return m;
}

// A matmul.dat with a given header and `floats` data values.
std::string matmul_bytes(std::int32_t m, std::int32_t p, std::int32_t n, std::size_t floats) {
  std::vector<std::int32_t> hdr{m, p, n};
  return as_bytes(hdr) + as_bytes(std::vector<float>(floats, 1.0f));
}

// ---- matmul.dat ------------------------------------------------------------------------------

TEST(MatmulDat, RoundTripKeepsEveryByteAndCIsTheProduct) {
  ScratchDir dir("io");
  MatmulData d = make_matmul_data(13, 24, 35, 3);
  const std::string f = dir.file("m.dat");
  write_matmul_dat(f, d.a, d.b, d.c);
  EXPECT_EQ(read_bytes(f).size(), 12u + 4u * (13 * 24 + 24 * 35 + 13 * 35));
  MatmulData r = read_matmul_dat(f);
  expect_same(r.a, d.a);
  expect_same(r.b, d.b);
  expect_same(r.c, d.c);
  Matrix want(DType::f32, 13, 35);
  reference_gemm(Op::N, Op::N, 1.0, r.a, r.b, 0.0, want);
  expect_same(r.c, want);
}

TEST(MatmulDat, WritesAnyLayoutAsRowMajor) {
  ScratchDir dir("io");
  Matrix a = random_matrix(DType::f32, 5, 3, Layout::ColMajor, 7);
  Matrix b = random_matrix(DType::f32, 3, 4, Layout::RowMajor, 9);
  Matrix c(DType::f32, 5, 4);
  reference_gemm(Op::N, Op::N, 1.0, a, b, 0.0, c);
  write_matmul_dat(dir.file("m.dat"), a, b, c);
  MatmulData r = read_matmul_dat(dir.file("m.dat"));
  expect_same(r.a, a);
  expect_same(r.b, b);
}

TEST(MatmulDat, HeaderAndHeaderOnlyValues) {
  ScratchDir dir("io");
  write_bytes(dir.file("one.dat"), matmul_bytes(1, 1, 1, 3));
  MatmulData r = read_matmul_dat(dir.file("one.dat"));
  EXPECT_EQ(r.a.rows(), 1);
  EXPECT_EQ(r.c.get(0, 0), 1.0);
}

TEST(MatmulDat, TruncatedFileIsRejected) {
  ScratchDir dir("io");
  MatmulData d = make_matmul_data(4, 5, 6, 1);
  const std::string f = dir.file("t.dat");
  write_matmul_dat(f, d.a, d.b, d.c);
  std::string bytes = read_bytes(f);
  write_bytes(f, bytes.substr(0, bytes.size() - 4));
  expect_error<IoError>([&] { read_matmul_dat(f); }, "truncated");
  expect_error<IoError>([&] { read_matmul_dat(f); }, f);
  write_bytes(f, bytes.substr(0, 7));
  expect_error<IoError>([&] { read_matmul_dat(f); }, "header alone needs 12");
  write_bytes(f, "");
  expect_error<IoError>([&] { read_matmul_dat(f); }, "truncated");
}

TEST(MatmulDat, TrailingBytesAreRejected) {
  ScratchDir dir("io");
  write_bytes(dir.file("x.dat"), matmul_bytes(2, 2, 2, 12) + "junk");
  expect_error<IoError>([&] { read_matmul_dat(dir.file("x.dat")); }, "4 trailing bytes");
}

TEST(MatmulDat, HeaderDisagreeingWithLengthNamesBothCounts) {
  ScratchDir dir("io");
  write_bytes(dir.file("x.dat"), matmul_bytes(3, 2, 2, 12));  // needs 6+4+6 = 16 floats
  expect_error<IoError>([&] { read_matmul_dat(dir.file("x.dat")); },
                        "need 76 bytes but the file has 60");
}

TEST(MatmulDat, NegativeAndZeroSizesAreRejected) {
  ScratchDir dir("io");
  write_bytes(dir.file("neg.dat"), matmul_bytes(-3, 2, 2, 12));
  expect_error<IoError>([&] { read_matmul_dat(dir.file("neg.dat")); }, "must be positive");
  write_bytes(dir.file("zero.dat"), matmul_bytes(0, 2, 2, 4));
  expect_error<IoError>([&] { read_matmul_dat(dir.file("zero.dat")); }, "m=0");
}

TEST(MatmulDat, AbsurdSizesAreRejectedBeforeAllocating) {
  ScratchDir dir("io");
  write_bytes(dir.file("huge.dat"), matmul_bytes(INT32_MAX, INT32_MAX, INT32_MAX, 4));
  expect_error<IoError>([&] { read_matmul_dat(dir.file("huge.dat")); }, "absurd");
  write_bytes(dir.file("big.dat"), matmul_bytes(100000, 100000, 100000, 4));
  expect_error<IoError>([&] { read_matmul_dat(dir.file("big.dat")); }, "120000000012 bytes");
}

TEST(MatmulDat, MissingFileAndWrongShapes) {
  ScratchDir dir("io");
  expect_error<IoError>([&] { read_matmul_dat(dir.file("none.dat")); }, "cannot open");
  Matrix a(DType::f32, 2, 3), b(DType::f32, 4, 2), c(DType::f32, 2, 2);
  expect_error<InvalidArgument>([&] { write_matmul_dat(dir.file("w.dat"), a, b, c); }, "disagree");
  Matrix d(DType::f64, 2, 3);
  expect_error<InvalidArgument>([&] { write_matmul_dat(dir.file("w.dat"), d, b, c); }, "float32");
}

TEST(MatmulDat, GeneratorRefusesMoreThanTheHostHas) {
  expect_error<OutOfMemory>([] { make_matmul_data(1 << 30, 1 << 30, 1 << 30, 1); }, "host memory");
  expect_error<InvalidArgument>([] { make_matmul_data(0, 3, 3, 1); }, "positive");
  expect_error<OutOfMemory>([] { check_host_memory(1e30, "test"); }, "test needs");
  EXPECT_GT(host_memory_available(), 0u);
}

// ---- .npy ----------------------------------------------------------------------------------

class NpyRoundTrip : public ::testing::TestWithParam<std::tuple<DType, Layout>> {};

TEST_P(NpyRoundTrip, KeepsTypeShapeOrderAndValues) {
  auto [type, layout] = GetParam();
  ScratchDir dir("io");
  Matrix m = random_matrix(type, 7, 5, layout, layout == Layout::RowMajor ? 9 : 11);
  write_npy(dir.file("m.npy"), m);
  EXPECT_EQ(read_bytes(dir.file("m.npy")).size() % 64, (7 * 5 * dtype_size(type)) % 64);
  NpyHeader h;
  Matrix r = read_npy(dir.file("m.npy"), &h);
  EXPECT_EQ(h.fortran_order, layout == Layout::ColMajor);
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{7, 5}));
  EXPECT_EQ(h.data_offset % 64, 0u);
  EXPECT_EQ(r.layout(), layout);
  expect_same(r, m);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, NpyRoundTrip,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f64, DType::i32,
                                                              DType::f16, DType::i8),
                                            ::testing::Values(Layout::RowMajor, Layout::ColMajor)),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == Layout::RowMajor ? "_C" : "_Fortran");
                         });

TEST(Npy, OneDimensionalArraysReadAsOneRow) {
  ScratchDir dir("io");
  Matrix col = random_matrix(DType::f64, 6, 1, Layout::RowMajor, 3);
  write_npy(dir.file("v.npy"), col, /*one_d=*/true);
  NpyHeader h;
  Matrix r = read_npy(dir.file("v.npy"), &h);
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{6}));
  ASSERT_EQ(r.rows(), 1);
  ASSERT_EQ(r.cols(), 6);
  for (int j = 0; j < 6; ++j) EXPECT_EQ(r.get(0, j), col.get(j, 0));
  expect_error<InvalidArgument>(
      [&] { write_npy(dir.file("x.npy"), Matrix(DType::f32, 2, 2), true); }, "1-D");
}

// A .npy file with a hand-written header (any version) and `data_bytes` bytes of data.
std::string npy_bytes(const std::string& dict, int major, std::size_t data_bytes,
                      const char* magic = "\x93NUMPY") {
  std::string out(magic, 6);
  out += char(major);
  out += char(0);
  std::uint32_t len = std::uint32_t(dict.size());
  int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += char((len >> (8 * i)) & 0xff);
  return out + dict + std::string(data_bytes, '\0');
}

TEST(Npy, ReadsVersionsTwoAndThree) {
  ScratchDir dir("io");
  for (int v : {1, 2, 3}) {
    const std::string f = dir.file(std::to_string(v) + "v.npy");
    write_bytes(
        f, npy_bytes("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}\n", v, 24));
    NpyHeader h;
    Matrix m = read_npy(f, &h);
    EXPECT_EQ(h.major_version, v);
    EXPECT_EQ(m.rows(), 2);
    EXPECT_EQ(m.cols(), 3);
  }
}

struct BadNpy {
  const char* name;
  std::string bytes;
  const char* needle;
};

std::string dict_with(const std::string& descr, const std::string& shape = "(2, 2)",
                      const std::string& order = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
}

// A batch of matrices is a 3-D array count x rows x cols, written in C order whatever the
// views' layouts, read back as row-major matrices (from C or Fortran order).
TEST(Npy, StacksOfMatricesAreThreeDimensionalArrays) {
  ScratchDir dir("io");
  std::vector<Matrix> mats;
  mats.push_back(random_matrix(DType::f64, 4, 5));
  mats.push_back(random_matrix(DType::f64, 4, 5, Layout::ColMajor, 6));  // ld > rows
  mats.push_back(Matrix(DType::f64, 4, 5, Layout::RowMajor, 7));         // ld > cols
  mats[1].set(0, 0, 42);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) mats[2].set(i, j, 10 * i + j);
  write_npy_stack(dir.file("s.npy"), {mats[0], mats[1], mats[2]});
  NpyHeader h;
  std::vector<Matrix> back = read_npy_stack(dir.file("s.npy"), &h);
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{3, 4, 5}));
  EXPECT_FALSE(h.fortran_order);
  ASSERT_EQ(back.size(), 3u);
  for (std::size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(back[b].layout(), Layout::RowMajor);
    expect_same(back[b], mats[b]);
  }
  expect_error<IoError>([&] { read_npy(dir.file("s.npy")); }, "stack of matrices");

  // Fortran order: element (b, i, j) of a 2 x 2 x 3 array at b + 2 * (i + 2 * j).
  std::string bytes = npy_bytes(dict_with("<f4", "(2, 2, 3)", "True"), 1, 0);
  for (int at = 0; at < 12; ++at) {
    const float v = float(at);
    bytes.append(reinterpret_cast<const char*>(&v), 4);
  }
  write_bytes(dir.file("f.npy"), bytes);
  std::vector<Matrix> f = read_npy_stack(dir.file("f.npy"));
  ASSERT_EQ(f.size(), 2u);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(f[b].get(i, j), b + 2 * (i + 2 * j));

  write_npy(dir.file("m.npy"), mats[0]);
  expect_error<IoError>([&] { read_npy_stack(dir.file("m.npy")); }, "4x5 (2-D)");
  expect_error<InvalidArgument>(
      [&] {
        write_npy_stack(dir.file("x.npy"), {mats[0], Matrix(DType::f64, 5, 4)});
      },
      "matrix 1 differs");
  expect_error<InvalidArgument>([&] { write_npy_stack(dir.file("x.npy"), {}); }, "no matrices");
}

TEST(Npy, BadFilesFailWithClearErrors) {
  ScratchDir dir("io");
  const std::vector<BadNpy> cases = {
      {"complex", npy_bytes(dict_with("<c8"), 1, 32), "unsupported dtype '<c8'"},
      {"bigendian", npy_bytes(dict_with(">f4"), 1, 16), "big-endian"},
      {"object", npy_bytes(dict_with("|O"), 1, 32), "object arrays"},
      {"int64", npy_bytes(dict_with("<i8"), 1, 32), "unsupported dtype '<i8'"},
      {"magic", npy_bytes(dict_with("<f4"), 1, 16, "\x93NUMPX"), "bad magic"},
      {"version", npy_bytes(dict_with("<f4"), 4, 16), "version 4"},
      {"truncated", npy_bytes(dict_with("<f4"), 1, 12), "truncated"},
      {"trailing", npy_bytes(dict_with("<f4"), 1, 20), "4 trailing bytes"},
      {"3d", npy_bytes(dict_with("<f4", "(2, 2, 2)"), 1, 32), "(2x2x2) is a stack of matrices"},
      {"4d", npy_bytes(dict_with("<f4", "(2, 2, 2, 1)"), 1, 32), "4 dimensions"},
      {"scalar", npy_bytes(dict_with("<f4", "()"), 1, 4), "0 dimensions"},
      {"structured",
       npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 1, 8),
       "structured"},
      {"nokey", npy_bytes("{'descr': '<f4', 'shape': (2,)}", 1, 8), "fortran_order"},
      {"extrakey",
       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 1, 8),
       "malformed"},
      {"negative", npy_bytes(dict_with("<f4", "(-2, 2)"), 1, 16), "malformed"},
      {"absurd", npy_bytes(dict_with("<f4", "(9999999999, 9999999999)"), 1, 16), "absurd"},
      {"garbage", npy_bytes("not a dict at all", 1, 16), "malformed"},
      {"shortheader", std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "truncated"},
      {"tiny", std::string("\x93NU", 3), "truncated"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string f = dir.file(std::string(c.name) + ".npy");
    write_bytes(f, c.bytes);
    expect_error<IoError>([&] { read_npy(f); }, c.needle);
  }
}

TEST(CheckFinite, NamesTheFirstBadElement) {
  Matrix m(DType::f32, 3, 4);
  check_finite(m, "m");
  m.set(2, 1, std::numeric_limits<double>::infinity());
  expect_error<InvalidArgument>([&] { check_finite(m, "'x.npy'"); },
                                "'x.npy' holds an infinity at (2, 1)");
  m.set(0, 3, std::nan(""));
  expect_error<InvalidArgument>([&] { check_finite(m, "A"); }, "A holds NaN at (0, 3)");
  check_finite(Matrix(DType::i32, 2, 2), "ints");
}

// ---- raw samples ---------------------------------------------------------------------------

TEST(RawSamples, PlanarAndInterleavedRoundTrip) {
  ScratchDir dir("io");
  Matrix s = random_matrix(DType::f32, 3, 10);
  for (SampleLayout l : {SampleLayout::Planar, SampleLayout::Interleaved}) {
    const std::string f = dir.file(std::string(to_string(l)) + ".raw");
    write_raw_samples(f, s, l);
    Matrix r = read_raw_samples(f, 3, l);
    expect_same(r, s);
  }
  // Interleaved storage really is sample-major: the second float is channel 1, sample 0.
  std::string bytes = read_bytes(dir.file("interleaved.raw"));
  float second;
  std::memcpy(&second, bytes.data() + 4, 4);
  EXPECT_EQ(double(second), s.get(1, 0));
  EXPECT_EQ(parse_sample_layout("planar"), SampleLayout::Planar);
  expect_error<InvalidArgument>([] { parse_sample_layout("zigzag"); }, "zigzag");
}

TEST(RawSamples, ChannelCountMustDivideTheFile) {
  ScratchDir dir("io");
  write_bytes(dir.file("s.raw"), as_bytes(std::vector<float>(10, 1.0f)));
  expect_error<IoError>([&] { read_raw_samples(dir.file("s.raw"), 3, SampleLayout::Planar); },
                        "not a whole number");
  expect_error<InvalidArgument>(
      [&] { read_raw_samples(dir.file("s.raw"), 0, SampleLayout::Planar); }, "positive");
  write_bytes(dir.file("e.raw"), "");
  expect_error<IoError>([&] { read_raw_samples(dir.file("e.raw"), 2, SampleLayout::Planar); },
                        "empty");
}

TEST(SampleStream, YieldsBlocksAndAShortInterleavedTail) {
  ScratchDir dir("io");
  Matrix s = random_matrix(DType::f32, 2, 10);
  write_raw_samples(dir.file("s.raw"), s, SampleLayout::Interleaved);
  SampleStream stream(dir.file("s.raw"), 2, 4, SampleLayout::Interleaved);
  Matrix block;
  std::vector<std::int64_t> sizes;
  std::int64_t offset = 0;
  while (stream.next(block)) {
    sizes.push_back(block.cols());
    for (std::int64_t j = 0; j < block.cols(); ++j) {
      EXPECT_EQ(block.get(0, j), s.get(0, offset + j));
      EXPECT_EQ(block.get(1, j), s.get(1, offset + j));
    }
    offset += block.cols();
  }
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{4, 4, 2}));
  EXPECT_EQ(stream.blocks_read(), 3);
  EXPECT_FALSE(stream.next(block));
}

TEST(SampleStream, PlanarBlocksAndBrokenTails) {
  ScratchDir dir("io");
  Matrix s = random_matrix(DType::f32, 3, 8);
  // Two planar blocks of 4 samples, written block after block.
  std::string bytes;
  for (int b = 0; b < 2; ++b) {
    Matrix part(DType::f32, 3, 4);
    for (int c = 0; c < 3; ++c)
      for (int j = 0; j < 4; ++j) part.set(c, j, s.get(c, 4 * b + j));
    write_raw_samples(dir.file("p.raw"), part, SampleLayout::Planar);
    bytes += read_bytes(dir.file("p.raw"));
  }
  write_bytes(dir.file("two.raw"), bytes);
  SampleStream stream(dir.file("two.raw"), 3, 4, SampleLayout::Planar);
  Matrix block;
  ASSERT_TRUE(stream.next(block));
  ASSERT_TRUE(stream.next(block));
  EXPECT_EQ(block.get(2, 3), s.get(2, 7));
  EXPECT_FALSE(stream.next(block));

  write_bytes(dir.file("cut.raw"), bytes.substr(0, bytes.size() - 12));
  SampleStream planar(dir.file("cut.raw"), 3, 4, SampleLayout::Planar);
  ASSERT_TRUE(planar.next(block));
  expect_error<IoError>([&] { planar.next(block); }, "cut short");
  write_bytes(dir.file("mid.raw"), bytes.substr(0, bytes.size() - 4));
  SampleStream inter(dir.file("mid.raw"), 3, 4, SampleLayout::Interleaved);
  ASSERT_TRUE(inter.next(block));
  expect_error<IoError>([&] { inter.next(block); }, "inside a sample frame");
  expect_error<IoError>([&] { SampleStream(dir.file("none.raw"), 3, 4, SampleLayout::Planar); },
                        "cannot open");
}

// ---- conversions, output files, special files ----------------------------------------------

TEST(CheckConvertible, NamesTheElementAndTheReason) {
  Matrix m(DType::f64, 2, 3);
  m.set(0, 0, 0.1);  // rounds in f16 and f32: fine
  m.set(1, 2, 1e6);
  expect_error<InvalidArgument>([&] { check_convertible(m, DType::f16, "A"); },
                                "cannot convert A (1, 2) = 1000000 to f16: it overflows f16");
  EXPECT_NO_THROW(check_convertible(m, DType::f32, "A"));
  expect_error<InvalidArgument>([&] { check_convertible(m, DType::i32, "A"); },
                                "A (0, 0) = 0.1 to i32: it is not an integer");
  Matrix i(DType::i32, 1, 2);
  i.set(0, 1, -129);
  expect_error<InvalidArgument>(
      [&] { check_convertible(i, DType::i8, "B"); },
      "B (0, 1) = -129 to i8: it is outside the range of i8 (-128 .. 127)");
  i.set(0, 1, -128);
  EXPECT_NO_THROW(check_convertible(i, DType::i8, "B"));
  Matrix big(DType::f32, 1, 1);
  big.set(0, 0, 1000);
  expect_error<InvalidArgument>([&] { check_convertible(big, DType::e4m3, "A"); },
                                "overflows e4m3");
}

TEST(OutputFiles, AnUncommittedWriteLeavesTheTargetAndNoTemporary) {
  ScratchDir dir("io");
  const std::string f = dir.file("out.json");
  write_bytes(f, "old contents");
  {
    io_detail::AtomicFile w(f);
    w.write("new", 3);
  }  // destroyed without commit: an error happened on the way
  EXPECT_EQ(read_bytes(f), "old contents");
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos);
  }
  EXPECT_EQ(files, 1u);
  write_file_atomic(f, "new contents");
  EXPECT_EQ(read_bytes(f), "new contents");
}

TEST(OutputFiles, EveryWriterFailsCleanlyOnAFullDevice) {
  Matrix m = random_matrix(DType::f32, 64, 64);
  expect_error<IoError>([&] { write_file_atomic("/dev/full", std::string(100000, 'x')); },
                        "No space left");
  expect_error<IoError>([&] { write_npy("/dev/full", m); }, "No space left");
  expect_error<IoError>([&] { write_matmul_dat("/dev/full", m, m, m); }, "No space left");
  expect_error<IoError>([&] { write_raw_samples("/dev/full", m, SampleLayout::Planar); },
                        "No space left");
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));  // written in place, not replaced
}

TEST(OutputFiles, CheckWritableRefusesWhatCannotBeWritten) {
  ScratchDir dir("io");
  expect_error<IoError>([&] { check_writable(dir.path().string()); }, "is a directory");
  expect_error<IoError>([&] { check_writable(dir.file("no/such/dir/x.json")); }, "does not exist");
  expect_error<IoError>([&] { check_writable(""); }, "empty output path");
  EXPECT_NO_THROW(check_writable(dir.file("new.json")));
  EXPECT_NO_THROW(check_writable("/dev/null"));
}

TEST(InputFiles, DirectoriesAndFifosAreRefusedWithoutBlocking) {
  ScratchDir dir("io");
  expect_error<IoError>([&] { read_npy(dir.path().string()); }, "is a directory");
  expect_error<IoError>([&] { read_matmul_dat(dir.path().string()); }, "is a directory");
  expect_error<IoError>([&] { read_raw_samples(dir.path().string(), 2, SampleLayout::Planar); },
                        "is a directory");
  expect_error<IoError>([&] { raw_sample_frames(dir.path().string(), 2); }, "is a directory");
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer: a blocking open would hang here.
  expect_error<IoError>([&] { read_npy(fifo); }, "is a FIFO");
  expect_error<IoError>([&] { read_npy_header(fifo); }, "is a FIFO");
  expect_error<IoError>([&] { read_matmul_dat(fifo); }, "is a FIFO");
  expect_error<IoError>([&] { raw_sample_frames(fifo, 2); }, "is a FIFO");
  EXPECT_NO_THROW(SampleStream(fifo, 2, 4, SampleLayout::Planar));  // opened, not read
  write_bytes(dir.file("raw.f32"), std::string(40, '\0'));
  EXPECT_EQ(raw_sample_frames(dir.file("raw.f32"), 2), 5);
}

}  // namespace
}  // namespace kafel
