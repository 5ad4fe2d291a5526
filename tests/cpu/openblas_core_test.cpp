// The OpenBLAS baseline's report of the kernel set it runs: the ISA of each core name, and a
// warning (with the OPENBLAS_CORETYPE that fixes it) exactly where that set is older than the CPU.
#include <gtest/gtest.h>

#include <string>

#include "cpu/cpu_features.hpp"
#include "cpu/openblas.hpp"
#include "kafel/device.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

using cpu::Isa;

TEST(OpenblasCore, CoreNamesMapToTheirIsa) {
  EXPECT_EQ(cpu::openblas_core_isa("Prescott"), Isa::generic);
  EXPECT_EQ(cpu::openblas_core_isa("Nehalem"), Isa::generic);
  EXPECT_EQ(cpu::openblas_core_isa("Sandybridge"), Isa::generic);
  EXPECT_EQ(cpu::openblas_core_isa("Haswell"), Isa::avx2);
  EXPECT_EQ(cpu::openblas_core_isa("Zen"), Isa::avx2);
  EXPECT_EQ(cpu::openblas_core_isa("SkylakeX"), Isa::avx512);
  EXPECT_EQ(cpu::openblas_core_isa("Cooperlake"), Isa::avx512);
  EXPECT_EQ(cpu::openblas_core_isa("SapphireRapids"), Isa::avx512);
  EXPECT_EQ(cpu::openblas_core_isa(""), Isa::generic);
}

TEST(OpenblasCore, WarnsExactlyWhereItsKernelsAreOlderThanTheCpu) {
  const cpu::OpenblasCore& core = cpu::openblas_core();
  if (core.core.empty()) GTEST_SKIP() << "built without OpenBLAS";
  EXPECT_EQ(core.text.rfind("OpenBLAS ", 0), 0u) << core.text;
  EXPECT_NE(core.text.find(", " + core.core + " kernels"), std::string::npos) << core.text;
  const std::string& name = core.core;
  const bool older =
      cpu::cpu_isa() != Isa::generic && cpu::openblas_core_isa(name) < cpu::cpu_isa();
  EXPECT_EQ(!core.warning.empty(), older) << core.text << " | " << core.warning;
  if (older) {
    EXPECT_NE(core.warning.find("OPENBLAS_CORETYPE="), std::string::npos) << core.warning;
    EXPECT_NE(core.warning.find(name), std::string::npos) << core.warning;
  }
  // The baseline carries it, and the CPU device lists it.
  const Device cpu_dev = select_device("cpu");
  const GemmKernelInfo k = gemm_kernel(cpu_dev, "cpu.openblas");
  EXPECT_EQ(k.caveat, core.warning);
  EXPECT_EQ(k.summary.rfind(core.text, 0), 0u) << k.summary;
  bool listed = false;
  for (const auto& [key, value] : cpu_dev.details)
    if (key == "openblas") listed = value.rfind(core.text, 0) == 0;
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace kafel
