#!/usr/bin/env bash
# README command 2: installs what is needed, builds once, runs every test suite.
# cpu + opencl (PoCL) + gpu (skips without a GPU) suites, the Python package's pytest suite
# (built in the same build), then the cpu suite under ASan+UBSan, the find_package(kafel)
# consumer and the clang-format check.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JOBS=$(nproc)
export KAFEL_CACHE_DIR=${KAFEL_CACHE_DIR:-$PWD/build/cl-cache}
# PoCL compiles a work-group function for every local size (and grid class) a kernel is launched
# with; the tests launch each program with many, so that compiling was half the opencl suite. One
# generic function per kernel gives the same results: 414 -> 217 s for the suite on 2 cores
# (385 tests, 1,595 -> 589 compiled functions). Benchmarks and the main job keep PoCL's default.
export POCL_WORK_GROUP_SPECIALIZATION=${POCL_WORK_GROUP_SPECIALIZATION:-0}

echo "== build (Release) =="
bash scripts/build.sh

echo "== build (ASan+UBSan, CPU only) =="
# -O1 -g1 (line tables, enough for the sanitizers' stack traces) compiles in about half the
# time of -O2 -g on 2 cores (cmd_cov.cpp: 41 against 73 s); MPI is left out because no
# sanitized test runs it (tests/CMakeLists.txt).
BUILD_DIR=build-asan bash scripts/build.sh -DKAFEL_SANITIZE=address,undefined \
  -DKAFEL_WITH_OPENCL=OFF -DKAFEL_WITH_CUDA=OFF -DKAFEL_BUILD_PYTHON=OFF -DKAFEL_WITH_MPI=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"

status=0
if ./build/tools/kafel/kafel devices 2>/dev/null | grep -q '^cuda'; then
  echo "== tests: cpu, opencl, gpu =="
  ctest --test-dir build -j "$JOBS" --output-on-failure --timeout 900 || status=1
else
  # Without a GPU every gpu test only skips; one process runs them all (each skipping with
  # "no CUDA device present") instead of CTest starting ~1,500 processes to do it.
  echo "== tests: cpu, opencl (no CUDA device: the gpu suite runs once, every test skipping) =="
  ctest --test-dir build -LE gpu -j "$JOBS" --output-on-failure --timeout 900 || status=1
  if [ -x build/tests/kafel_tests_gpu ]; then
    ./build/tests/kafel_tests_gpu --gtest_brief=1 > build/gpu-tests.log 2>&1 || status=1
    tail -n 4 build/gpu-tests.log
  fi
fi

echo "== tests: Python package (pytest) =="
if [ -d build/python/kafel ]; then
  PYTHONPATH="$PWD/build/python" python3 -m pytest -q -rs python/tests || status=1
else
  echo "pytest: FAILED: build/python/kafel is missing (no nanobind for $(command -v python3)?)"
  status=1
fi

echo "== tests: cpu under ASan+UBSan =="
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L cpu -j "$JOBS" --output-on-failure --timeout 1800 || status=1

echo "== find_package(kafel) consumer =="
rm -rf build/prefix build/consumer
cmake --install build --prefix "$PWD/build/prefix" >/dev/null
cmake -S tests/consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/prefix" >/dev/null
cmake --build build/consumer >/dev/null
if ./build/consumer/consumer; then echo "consumer: ok"; else echo "consumer: FAILED"; status=1; fi

echo "== clang-format =="
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ ${#sources[@]} -gt 0 ] && ! clang-format --dry-run --Werror "${sources[@]}"; then
  echo "clang-format: files above need 'clang-format -i'"; status=1
else
  echo "clang-format: clean"
fi
exit $status
