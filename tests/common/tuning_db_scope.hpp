// Points $KAFEL_TUNE_DB at a file (or "off") for one scope and restores it after, reloading the
// cached database both times, so tests neither see nor disturb the machine's tuning data.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "core/tuning_db.hpp"

namespace kafel::test {

class TuningDbScope {
 public:
  explicit TuningDbScope(const std::string& value) {
    if (const char* v = std::getenv("KAFEL_TUNE_DB")) old_ = v;
    setenv("KAFEL_TUNE_DB", value.c_str(), 1);
    reload_active_database();
  }
  ~TuningDbScope() {
    if (old_)
      setenv("KAFEL_TUNE_DB", old_->c_str(), 1);
    else
      unsetenv("KAFEL_TUNE_DB");
    reload_active_database();
  }
  TuningDbScope(const TuningDbScope&) = delete;
  TuningDbScope& operator=(const TuningDbScope&) = delete;

 private:
  std::optional<std::string> old_;
};

// The choices a test checks must not depend on a tuning database on the machine running it.
struct NoTuningDb : TuningDbScope {
  NoTuningDb() : TuningDbScope("off") {}
};

}  // namespace kafel::test
