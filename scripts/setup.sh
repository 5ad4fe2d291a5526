#!/usr/bin/env bash
# Installs every Debian package kafel needs to build, test and plot (run as root or via sudo).
# CUDA is not installed here: the CUDA backend builds when nvcc is already on the machine.
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libcli11-dev nlohmann-json3-dev          # tests, CLI, JSON
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo  # OpenCL + PoCL
  libopenblas-dev libclblast-dev                         # comparison baselines
  python3 python3-dev python3-venv python3-matplotlib python3-numpy  # plots, Python package
  clang-format
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The python3 first on PATH may not be Debian's (pyenv, venv): give it matplotlib too.
if ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  echo "setup: installing matplotlib for $(command -v python3)" >&2
  python3 -m pip install --quiet matplotlib numpy >/dev/null 2>&1 ||
    echo "setup: warning: matplotlib unavailable for $(command -v python3); plots use /usr/bin/python3" >&2
fi

# The Python package (python/): nanobind and scikit-build-core build it, pytest tests it.
if ! python3 -c "import nanobind, scikit_build_core, pytest, numpy" >/dev/null 2>&1; then
  echo "setup: installing nanobind, scikit-build-core, pytest, numpy for $(command -v python3)" >&2
  python3 -m pip install --quiet "nanobind>=2" "scikit-build-core>=0.10" pytest numpy >/dev/null 2>&1 ||
    python3 -m pip install --quiet --break-system-packages "nanobind>=2" "scikit-build-core>=0.10" \
      pytest numpy >/dev/null 2>&1 ||
    echo "setup: warning: no nanobind for $(command -v python3); the Python package is skipped" >&2
fi

if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc found, the CUDA backend will be built" >&2
else
  echo "setup: no nvcc, the CUDA backend is skipped" >&2
fi
