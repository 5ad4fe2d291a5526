// Test helpers for the file-format and CLI suites: a scratch directory per test, raw byte
// writing, and checking that a call throws a given kafel error mentioning some text.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kafel::test {

// A fresh directory under the system temp dir, removed at the end of the test.
class ScratchDir {
 public:
  // `base`: where to create it (default: the system temp dir).
  explicit ScratchDir(const std::string& tag, const std::filesystem::path& base = {}) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "kafel_" + tag + "_" + std::to_string(getpid()) + "_" +
                       (info ? std::string(info->name()) : std::string("x"));
    path_ = (base.empty() ? std::filesystem::temp_directory_path() : base) / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

template <class T>
std::string as_bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Expects `fn` to throw exactly type E (or a subclass) whose message contains `needle`.
template <class E, class F>
void expect_error(F&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception mentioning '" << needle << "'";
  } catch (const E& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << "message: " << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "message is not one line: " << what;
  }
}

}  // namespace kafel::test
