// Benchmark records out: JSON and CSV files, the aligned terminal table and the block x grid
// table of the lecture. Formatting lives here so `kafel bench` and `kafel gemm` print alike.
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <tuple>

#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"
#include "kafel/version.hpp"

namespace kafel {

namespace {

using Json = nlohmann::ordered_json;

Json to_json(const BenchRecord& r) {
  Json params = Json::object();
  for (const auto& [name, value] : r.params) params[name] = value;
  return Json{{"kernel", r.kernel},
              {"config", r.config},
              {"params", params},
              {"params_source", r.params_source},
              {"baseline", r.baseline},
              {"device", r.device},
              {"device_name", r.device_name},
              {"type", r.type},
              {"a_type", r.a_type},
              {"b_type", r.b_type},
              {"c_type", r.c_type},
              {"compute", r.compute},
              {"m", r.m},
              {"n", r.n},
              {"k", r.k},
              {"batch", r.batch},
              {"op", r.op},
              {"median_ms", r.median_ms},
              {"best_ms", r.best_ms},
              {"spread", r.spread},
              {"gflops", r.gflops},
              {"best_gflops", r.best_gflops},
              {"peak_gflops", r.peak_gflops},
              {"peak_pct", r.peak_pct},
              {"total_ms", r.total_ms},
              {"slots", r.slots},
              {"warmup", r.warmup},
              {"reps", r.reps},
              {"verified", r.verified},
              {"verify_method", r.verify_method},
              {"max_abs_err", r.max_abs_err},
              {"rel_err", r.rel_err},
              {"timer", r.timer},
              {"status", r.status},
              {"error", r.error}};
}

std::string fmt_ms(double ms) {
  return format_num(ms < 10 ? "%.3f" : ms < 1000 ? "%.2f" : "%.0f", ms);
}
std::string fmt_gflops(double g) {
  return format_num(g < 10 ? "%.2f" : "%.1f", g);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// ---- the aligned table ---------------------------------------------------------------------

using Row = std::vector<std::string>;

void print_rows(std::ostream& os, const std::vector<Row>& rows, std::size_t left_cols) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      std::string pad(width[c] - row[c].size(), ' ');
      bool last = c + 1 == row.size();  // the last column is text: left-aligned, unpadded
      line += last ? row[c] : c < left_cols ? row[c] + pad : pad + row[c];
      if (!last) line += "  ";
    }
    os << line << '\n';
  }
}

// "64x64x64" or, for a batch, "64x64x64 b4096".
std::string size_text(const BenchRecord& r) {
  return std::to_string(r.m) + "x" + std::to_string(r.n) + "x" + std::to_string(r.k) +
         (r.batch != 1 ? " b" + std::to_string(r.batch) : "");
}

// Our GFLOP/s over the baseline's at the same problem, or "-".
std::string ratio(const BenchRecord& r, const std::vector<BenchRecord>& all,
                  const std::string& base) {
  if (!r.ok() || r.kernel == base) return "-";
  for (const auto& b : all) {
    if (b.kernel == base && b.ok() && b.type == r.type && b.m == r.m && b.n == r.n && b.k == r.k &&
        b.batch == r.batch && b.op == r.op && b.gflops > 0) {
      return format_num("%.2fx", r.gflops / b.gflops);
    }
  }
  return "-";
}

Row table_header(bool with_params, const std::vector<std::string>& baselines) {
  Row h{"kernel", "type", "m x n x k"};
  if (with_params) h.push_back("params");
  for (const char* c : {"median ms", "best ms", "GFLOP/s", "best GF/s", "% peak", "total ms"}) {
    h.push_back(c);
  }
  for (const auto& b : baselines) h.push_back("vs " + b);
  h.push_back("verified");
  return h;
}

Row table_row(const BenchRecord& r, bool with_params, const std::vector<std::string>& baselines,
              const std::vector<BenchRecord>& all) {
  Row row{r.kernel, r.type, size_text(r)};
  if (with_params) row.push_back(format_params(r.params));
  if (r.ok()) {
    for (auto s :
         {fmt_ms(r.median_ms), fmt_ms(r.best_ms), fmt_gflops(r.gflops), fmt_gflops(r.best_gflops),
          r.peak_pct > 0 ? format_num("%.1f", r.peak_pct) : "-", fmt_ms(r.total_ms)}) {
      row.push_back(s);
    }
  } else {
    for (int i = 0; i < 6; ++i) row.push_back("-");
  }
  for (const auto& b : baselines) row.push_back(ratio(r, all, b));
  if (r.ok()) {
    row.push_back("PASS " + r.verify_method + " " + format_num("%.1e", r.max_abs_err));
  } else {
    row.push_back(r.failed() ? "FAIL: " + r.error : r.error);
  }
  return row;
}

// Why a "% peak" cell shows "-" although the device has a peak estimate.
void print_peak_note(std::ostream& os, const std::vector<BenchRecord>& records) {
  double worst = 0;
  for (const auto& r : records)
    if (r.ok() && r.peak_gflops > 0 && r.gflops > r.peak_gflops)
      worst = std::max(worst, r.gflops / r.peak_gflops);
  if (worst > 0)
    os << "note: % peak shows '-' where the measurement exceeds the device's peak estimate (by up "
          "to "
       << format_num("%.2fx", worst) << "): the estimate does not hold for this machine\n";
}

// ---- the block x grid table -------------------------------------------------------------------

using GridKey = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;

std::string grid_cell(const BenchRecord& r) {
  if (r.ok()) return fmt_gflops(r.gflops);
  return r.failed() ? "FAIL" : "-";
}

void print_one_grid(std::ostream& os, const GridKey& key, const std::vector<const BenchRecord*>& rs,
                    const std::string& row_param, const std::string& col_param) {
  std::set<std::int64_t> rows, cols;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> cells;
  for (const auto* r : rs) {
    auto rv = r->params.at(row_param), cv = r->params.at(col_param);
    rows.insert(rv);
    cols.insert(cv);
    cells[{rv, cv}] = grid_cell(*r);
  }
  os << "\nGFLOP/s of " << std::get<0>(key) << ' ' << std::get<1>(key) << ' ' << std::get<2>(key)
     << 'x' << std::get<3>(key) << 'x' << std::get<4>(key) << " (rows: " << row_param
     << ", columns: " << col_param << ")\n";
  std::vector<Row> table{{row_param + " \\ " + col_param}};
  for (auto c : cols) table[0].push_back(std::to_string(c));
  for (auto rv : rows) {
    Row row{std::to_string(rv)};
    for (auto cv : cols) {
      auto it = cells.find({rv, cv});
      row.push_back(it == cells.end() ? "" : it->second);
    }
    table.push_back(row);
  }
  print_rows(os, table, 0);
}

}  // namespace

std::string bench_json_text(const std::vector<BenchRecord>& records, const Device* device) {
  Json doc{{"kafel_version", KAFEL_VERSION}};
  doc["device"] = device ? Json::parse(device_json(*device)) : Json(nullptr);
  doc["records"] = Json::array();
  for (const auto& r : records) doc["records"].push_back(to_json(r));
  return doc.dump(2) + "\n";
}

void write_bench_json(const std::string& path, const std::vector<BenchRecord>& records,
                      const Device* device) {
  write_file_atomic(path, bench_json_text(records, device));
}

void write_bench_csv(const std::string& path, const std::vector<BenchRecord>& records) {
  std::ostringstream f;
  const Json columns = to_json(BenchRecord{});
  std::string line;
  for (auto it = columns.begin(); it != columns.end(); ++it) {
    if (!line.empty()) line += ',';
    line += it.key();
  }
  f << line << '\n';
  for (const auto& r : records) {
    const Json j = to_json(r);
    line.clear();
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it != j.begin()) line += ',';
      line += csv_field(it.key() == "params" ? format_params(r.params)
                        : it->is_string()    ? it->get<std::string>()
                                             : it->dump());
    }
    f << line << '\n';
  }
  write_file_atomic(path, f.str());
}

void print_bench_table(std::ostream& os, const std::vector<BenchRecord>& records,
                       const std::vector<std::string>& baselines) {
  bool with_params = false;
  for (const auto& r : records) with_params = with_params || !r.params.empty();
  std::vector<Row> rows{table_header(with_params, baselines)};
  for (const auto& r : records) rows.push_back(table_row(r, with_params, baselines, records));
  print_rows(os, rows, with_params ? 4 : 3);
  print_peak_note(os, records);
}

void print_param_grid(std::ostream& os, const std::vector<BenchRecord>& records,
                      const std::string& row_param, const std::string& col_param) {
  std::map<GridKey, std::vector<const BenchRecord*>> groups;
  for (const auto& r : records) {
    if (!r.params.count(row_param) || !r.params.count(col_param)) continue;
    groups[{r.kernel, r.type, r.m, r.n, r.k}].push_back(&r);
  }
  for (const auto& [key, rs] : groups) print_one_grid(os, key, rs, row_param, col_param);
}

}  // namespace kafel
