// NumPy .npy reading and writing: versions 1.0-3.0, the real types NumPy describes (<f4 <f8 <i4
// <f2 |i1), C and Fortran order, matrices and stacks of them (3-D); the header dict is parsed
// strictly, anything else is refused.
#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>
#include <variant>

#include "io/file_util.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel {

namespace {

using namespace io_detail;

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::uint32_t kMaxHeaderLen = 1 << 20;

using Shape = std::vector<std::int64_t>;
using Value = std::variant<std::string, bool, Shape>;

// Parses the header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
class DictParser {
 public:
  DictParser(std::string text, std::string path) : s_(std::move(text)), path_(std::move(path)) {}

  std::map<std::string, Value> parse() {
    std::map<std::string, Value> out;
    expect('{');
    while (!peek('}')) {
      std::string key = string_literal();
      expect(':');
      out[key] = value();
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the header dict");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw IoError("'" + path_ + "': malformed .npy header (" + why + ")");
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_])) ++pos_;
  }
  bool peek(char c) {
    skip_ws();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string string_literal() {
    skip_ws();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a string");
    char q = s_[pos_++];
    std::size_t end = s_.find(q, pos_);
    if (end == std::string::npos) fail("unterminated string");
    std::string v = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return v;
  }
  bool word(const char* w) {
    skip_ws();
    std::size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    pos_ += n;
    return true;
  }
  std::int64_t integer() {
    skip_ws();
    std::int64_t v = 0;
    std::size_t start = pos_;
    for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
      v = checked_add(checked_mul(v, 10), s_[pos_] - '0');
      if (v < 0) fail("a dimension does not fit in 64 bits");
    }
    if (pos_ == start) fail("expected a non-negative integer in the shape");
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return v;
  }
  Shape tuple() {
    Shape dims;
    expect('(');
    while (!peek(')')) {
      dims.push_back(integer());
      if (!peek(')')) expect(',');
    }
    expect(')');
    return dims;
  }
  Value value() {
    if (peek('(')) return tuple();
    if (peek('[')) fail("structured dtypes are not supported");
    if (peek('\'') || peek('"')) return string_literal();
    if (word("True")) return true;
    if (word("False")) return false;
    fail("unexpected value");
  }

  std::string s_;
  std::string path_;
  std::size_t pos_ = 0;
};

// Header text quoted in messages: at most 32 characters, non-printable bytes as \xNN.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 32)) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return s.size() > 32 ? out + "..." : out;
}

// The real types of the type table that NumPy can describe, e.g. "<f4, <f8, <i4, <f2, |i1".
std::string readable_descrs() {
  std::string out;
  for (const TypeInfo& t : all_types())
    if (t.kind != TypeKind::complex && t.npy && *t.npy)
      out += (out.empty() ? "" : ", ") + std::string(t.npy);
  return out;
}

DType parse_descr(const std::string& raw, const std::string& path) {
  // NumPy spells one-byte types with '|' (no byte order); '<' and '=' mean the same there.
  const std::string want = raw.size() == 3 && (raw[0] == '<' || raw[0] == '=') && raw[2] == '1'
                               ? "|" + raw.substr(1)
                               : raw;
  for (const TypeInfo& t : all_types())
    if (t.kind != TypeKind::complex && t.npy && want == t.npy) return t.type;
  const std::string d = printable(raw);
  std::string why = "unsupported dtype '" + d + "'";
  if (!d.empty() && d[0] == '>') {
    why = "big-endian dtype '" + d + "' is not supported (save it with arr.astype('<" +
          d.substr(1) + "'))";
  } else if (d.find('O') != std::string::npos) {
    why = "object arrays ('" + d + "') are not supported";
  }
  throw IoError("'" + path + "': " + why + "; kafel reads " + readable_descrs());
}

template <class T>
const T& field(const std::map<std::string, Value>& dict, const char* key, const std::string& path) {
  auto it = dict.find(key);
  if (it == dict.end()) {
    throw IoError("'" + path + "': .npy header has no '" + key + "' entry");
  }
  if (!std::holds_alternative<T>(it->second)) {
    throw IoError("'" + path + "': .npy header entry '" + key + "' has the wrong type");
  }
  return std::get<T>(it->second);
}

// Magic and version, then returns the header text; leaves `f` at the start of the data.
std::string read_header_text(std::FILE* f, const std::string& path, int* major) {
  unsigned char pre[8];
  read_exact(f, pre, sizeof pre, path, "the .npy preamble");
  if (std::memcmp(pre, kMagic, kMagicLen) != 0) {
    throw IoError("'" + path + "' is not a .npy file (bad magic)");
  }
  *major = pre[6];
  if (*major < 1 || *major > 3) {
    throw IoError("'" + path + "': unsupported .npy version " + std::to_string(*major) + "." +
                  std::to_string(pre[7]));
  }
  std::uint32_t len = 0;
  if (*major == 1) {
    unsigned char b[2];
    read_exact(f, b, 2, path, "the .npy header length");
    len = b[0] | (std::uint32_t(b[1]) << 8);
  } else {
    unsigned char b[4];
    read_exact(f, b, 4, path, "the .npy header length");
    len = b[0] | (std::uint32_t(b[1]) << 8) | (std::uint32_t(b[2]) << 16) |
          (std::uint32_t(b[3]) << 24);
  }
  if (len > kMaxHeaderLen) throw IoError("'" + path + "': .npy header length is absurd");
  std::string text(len, '\0');
  read_exact(f, text.data(), len, path, "the .npy header");
  return text;
}

NpyHeader parse_header(std::FILE* f, const std::string& path) {
  NpyHeader h;
  std::string text = read_header_text(f, path, &h.major_version);
  h.data_offset = (h.major_version == 1 ? 10 : 12) + text.size();
  auto dict = DictParser(text, path).parse();
  for (const auto& kv : dict) {
    if (kv.first != "descr" && kv.first != "fortran_order" && kv.first != "shape") {
      throw IoError("'" + path + "': unexpected .npy header entry '" + printable(kv.first) + "'");
    }
  }
  h.dtype = parse_descr(field<std::string>(dict, "descr", path), path);
  h.fortran_order = field<bool>(dict, "fortran_order", path);
  h.shape = field<Shape>(dict, "shape", path);
  if (h.shape.empty() || h.shape.size() > 3) {
    throw IoError("'" + path + "': arrays of " + std::to_string(h.shape.size()) +
                  " dimensions are not supported (1-D, 2-D, or 3-D stacks of matrices)");
  }
  return h;
}

std::string shape_text(const Shape& shape) {
  std::string out;
  for (std::int64_t d : shape) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

// Element count of the shape, or throws when it overflows.
std::int64_t element_count(const NpyHeader& h, const std::string& path) {
  std::int64_t n = 1;
  for (auto d : h.shape) n = checked_mul(n, d);
  if (n < 0 || checked_mul(n, std::int64_t(dtype_size(h.dtype))) < 0) {
    throw IoError("'" + path + "': .npy shape is absurd (more than 2^63 bytes)");
  }
  return n;
}

void check_data_length(const NpyHeader& h, std::uint64_t file_bytes, const std::string& path) {
  std::uint64_t want = std::uint64_t(element_count(h, path)) * dtype_size(h.dtype);
  std::uint64_t have = file_bytes - h.data_offset;
  if (have == want) return;
  std::string how = have < want ? "truncated" : std::to_string(have - want) + " trailing bytes";
  throw IoError("'" + path + "': the .npy shape needs " + std::to_string(want) +
                " data bytes but the file has " + std::to_string(have) + " (" + how + ")");
}

std::string descr_of(DType t) {
  const char* d = type_info(t).npy;
  if (!d || !*d)
    throw InvalidArgument("NumPy has no type for " + std::string(to_string(t)) +
                          "; convert to f32 before writing .npy");
  return d;
}

// Header dict padded with spaces so the data starts on a 64-byte boundary.
// The padded header dictionary of a C- or Fortran-order array of `shape`.
std::string make_header(std::string_view descr, bool fortran,
                        const std::vector<std::int64_t>& shape, int* major) {
  std::ostringstream os;
  os << "{'descr': '" << descr << "', 'fortran_order': " << (fortran ? "True" : "False")
     << ", 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",), }" : "), }");
  std::string dict = os.str();
  *major = dict.size() + 11 > 65535 ? 2 : 1;
  std::size_t prefix = *major == 1 ? 10 : 12;
  std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  return dict;
}

std::string make_header(const MatrixView& m, bool one_d, int* major) {
  if (one_d) return make_header(descr_of(m.dtype), false, {m.rows * m.cols}, major);
  return make_header(descr_of(m.dtype), m.layout == Layout::ColMajor, {m.rows, m.cols}, major);
}

void write_preamble(AtomicFile& f, int major, std::size_t len) {
  unsigned char pre[12];
  std::memcpy(pre, kMagic, kMagicLen);
  pre[6] = static_cast<unsigned char>(major);
  pre[7] = 0;
  std::size_t n = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < n; ++i) pre[8 + i] = static_cast<unsigned char>(len >> (8 * i));
  f.write(pre, 8 + n);
}

// Writes the elements in storage order: rows for row-major, columns for column-major.
void write_data(AtomicFile& f, const MatrixView& m) {
  bool row = m.layout == Layout::RowMajor;
  std::int64_t lines = row ? m.rows : m.cols, len = row ? m.cols : m.rows;
  std::size_t es = dtype_size(m.dtype);
  for (std::int64_t l = 0; l < lines; ++l) {
    const void* p = row ? m.address(l, 0) : m.address(0, l);
    f.write(p, std::size_t(len) * es);
  }
}

}  // namespace

NpyHeader read_npy_header(const std::string& path) {
  FilePtr f = open_read(path);
  return parse_header(f.get(), path);
}

Matrix read_npy(const std::string& path, NpyHeader* header) {
  FilePtr f = open_read(path);
  std::uint64_t size = file_size(f.get(), path);
  NpyHeader h = parse_header(f.get(), path);
  if (h.shape.size() == 3) {
    throw IoError("'" + path + "': a 3-D array (" + shape_text(h.shape) +
                  ") is a stack of matrices; one matrix is a 1-D or 2-D array");
  }
  check_data_length(h, size, path);
  check_host_memory(double(size - h.data_offset), "'" + path + "'");
  std::int64_t rows = h.shape.size() == 1 ? 1 : h.shape[0];
  std::int64_t cols = h.shape.back();
  Layout layout = h.fortran_order && h.shape.size() == 2 ? Layout::ColMajor : Layout::RowMajor;
  Matrix m(h.dtype, rows, cols, layout);
  read_exact(f.get(), m.data(), std::size_t(rows * cols) * dtype_size(h.dtype), path,
             "the array data");
  if (header) *header = h;
  return m;
}

std::vector<Matrix> read_npy_stack(const std::string& path, NpyHeader* header) {
  FilePtr f = open_read(path);
  std::uint64_t size = file_size(f.get(), path);
  NpyHeader h = parse_header(f.get(), path);
  if (h.shape.size() != 3) {
    throw IoError("'" + path + "': a stack of matrices is a 3-D array, this one is " +
                  shape_text(h.shape) + " (" + std::to_string(h.shape.size()) + "-D)");
  }
  check_data_length(h, size, path);
  check_host_memory(2.0 * double(size - h.data_offset), "'" + path + "'");
  const std::int64_t count = h.shape[0], rows = h.shape[1], cols = h.shape[2];
  const std::size_t es = dtype_size(h.dtype);
  std::vector<char> data(std::size_t(count * rows * cols) * es);
  read_exact(f.get(), data.data(), data.size(), path, "the array data");
  std::vector<Matrix> out;
  out.reserve(std::size_t(count));
  for (std::int64_t b = 0; b < count; ++b) {
    Matrix m(h.dtype, rows, cols);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {  // Fortran order: the first index runs fastest
        const std::int64_t at =
            h.fortran_order ? b + count * (i + rows * j) : (b * rows + i) * cols + j;
        std::memcpy(m.view().address(i, j), data.data() + std::size_t(at) * es, es);
      }
    out.push_back(std::move(m));
  }
  if (header) *header = h;
  return out;
}

void write_npy_stack(const std::string& path, const std::vector<MatrixView>& mats) {
  if (mats.empty()) throw InvalidArgument("write_npy_stack: no matrices to write");
  const MatrixView& first = mats.front();
  for (std::size_t b = 0; b < mats.size(); ++b) {
    mats[b].validate("array");
    if (mats[b].dtype != first.dtype || mats[b].rows != first.rows || mats[b].cols != first.cols)
      throw InvalidArgument("write_npy_stack: matrix " + std::to_string(b) +
                            " differs in type or shape from matrix 0");
  }
  int major = 1;
  const std::string header = make_header(
      descr_of(first.dtype), false, {std::int64_t(mats.size()), first.rows, first.cols}, &major);
  AtomicFile f(path);
  write_preamble(f, major, header.size());
  f.write(header.data(), header.size());
  const std::size_t es = dtype_size(first.dtype);
  std::vector<char> row(std::size_t(first.cols) * es);
  for (const MatrixView& m : mats) {
    if (m.layout == Layout::RowMajor) {
      write_data(f, m);
      continue;
    }
    for (std::int64_t i = 0; i < m.rows; ++i) {  // column-major: gather each row
      for (std::int64_t j = 0; j < m.cols; ++j)
        std::memcpy(row.data() + std::size_t(j) * es, m.address(i, j), es);
      f.write(row.data(), row.size());
    }
  }
  f.commit();
}

void write_npy(const std::string& path, const MatrixView& m, bool one_d) {
  m.validate("array");
  if (one_d && m.rows != 1 && m.cols != 1) {
    throw InvalidArgument("a 1-D .npy needs one row or one column, got " + std::to_string(m.rows) +
                          "x" + std::to_string(m.cols));
  }
  // A single column written 1-D is contiguous only when column-major: view it as one row.
  MatrixView v = one_d && m.cols == 1 && m.rows != 1 ? m.transposed() : m;
  int major = 1;
  std::string header = make_header(v, one_d, &major);
  AtomicFile f(path);
  write_preamble(f, major, header.size());
  f.write(header.data(), header.size());
  if (one_d && v.layout == Layout::ColMajor) {
    for (std::int64_t j = 0; j < v.cols; ++j) f.write(v.address(0, j), dtype_size(v.dtype));
  } else {
    write_data(f, v);
  }
  f.commit();
}

void write_npy_f64(const std::string& path, const std::vector<std::int64_t>& shape,
                   const double* re, const double* im) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw InvalidArgument("a .npy shape needs non-negative extents");
    n = checked_mul(n, d);
  }
  if (n > 0 && !re) throw InvalidArgument("write_npy_f64: no data");
  int major = 1;
  const std::string header = make_header(im ? "<c16" : "<f8", false, shape, &major);
  AtomicFile f(path);
  write_preamble(f, major, header.size());
  f.write(header.data(), header.size());
  if (!im) {
    f.write(re, std::size_t(n) * sizeof(double));
  } else {
    std::vector<double> pairs;
    constexpr std::int64_t kChunk = 1 << 16;  // complex values per write
    for (std::int64_t i = 0; i < n; i += kChunk) {
      const std::int64_t len = std::min(kChunk, n - i);
      pairs.resize(std::size_t(2 * len));
      for (std::int64_t k = 0; k < len; ++k) {
        pairs[std::size_t(2 * k)] = re[i + k];
        pairs[std::size_t(2 * k + 1)] = im[i + k];
      }
      f.write(pairs.data(), pairs.size() * sizeof(double));
    }
  }
  f.commit();
}

}  // namespace kafel
