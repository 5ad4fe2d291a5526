// Picks the OpenCL device the opencl suites run on: $KAFEL_TEST_OPENCL_DEVICE, else
// $KAFEL_DEVICE when it names an OpenCL device, else the first one found (nullopt when none).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "kafel/device.hpp"

namespace kafel::test {

inline std::optional<Device> opencl_device() {
  for (const char* var : {"KAFEL_TEST_OPENCL_DEVICE", "KAFEL_DEVICE"}) {
    const char* v = std::getenv(var);
    if (v && *v) {
      Device d = select_device(v);
      if (d.backend == "opencl") return d;
    }
  }
  for (const auto& d : list_devices())
    if (d.backend == "opencl") return d;
  return std::nullopt;
}

}  // namespace kafel::test

// Skips the test when no OpenCL device exists; else defines `dev`.
#define KAFEL_OPENCL_DEVICE_OR_SKIP(dev)                      \
  auto dev##_opt = ::kafel::test::opencl_device();            \
  if (!dev##_opt) GTEST_SKIP() << "no OpenCL device present"; \
  const ::kafel::Device& dev = *dev##_opt
