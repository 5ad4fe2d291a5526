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

echo "== build (Release) =="
bash scripts/build.sh

echo "== build (ASan+UBSan, CPU only) =="
BUILD_DIR=build-asan bash scripts/build.sh -DKAFEL_SANITIZE=address,undefined \
  -DKAFEL_WITH_OPENCL=OFF -DKAFEL_WITH_CUDA=OFF -DKAFEL_BUILD_PYTHON=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo

status=0
echo "== tests: cpu, opencl, gpu =="
ctest --test-dir build -j "$JOBS" --output-on-failure --timeout 900 || status=1

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
