#!/usr/bin/env bash
# kafel::dist on a host with 2+ NVIDIA GPUs (the lent nvidia-h200-x2): build with CUDA + MPI +
# NCCL, run the MPI test suites (CPU ranks and one rank per GPU), then the 1- vs 2-GPU figures.
#
# Usage: bash bench/multigpu.sh      (logs under $OUT, default ./out)
# Env:   GPUS (2) ranks of the multi-GPU runs; SIZES (16384,32768); TYPES (f32,bf16);
#        BLOCK (2048) SUMMA block; REPS (3); BLOCKS (400) radar stream blocks; STEPS
#        (build,tests,comm,gemm,cov); BUILD_DIR (/tmp/build).
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): on shared hosts it can take GPUs out of
# service. Needs mpirun, mpi.h (libopenmpi-dev) and nccl.h on the node; says so when missing.
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/out}
B=${BUILD_DIR:-/tmp/build}
GPUS=${GPUS:-2}
SIZES=${SIZES:-16384,32768}
TYPES=${TYPES:-f32,bf16}
BLOCK=${BLOCK:-2048}
REPS=${REPS:-3}
BLOCKS=${BLOCKS:-400}
STEPS=${STEPS:-build,tests,comm,gemm,cov}
mkdir -p "$OUT"
has() { [[ ",$STEPS," == *",$1,"* ]]; }
log() { echo "== $(date +%T) $*"; }
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
RUN=(mpirun --oversubscribe -x NCCL_NVLS_ENABLE=0 -x OMPI_MCA_btl_vader_single_copy_mechanism=none)
K=$B/tools/kafel/kafel

command -v mpirun >/dev/null || { echo "no mpirun on this node: install openmpi-bin"; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
nvidia-smi topo -m 2>&1 | head -8

if has build; then
  log "configure + build into $B"
  printf 'set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")\nset(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")\n' > /tmp/kafel-cuda20.cmake
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKAFEL_WITH_OPENCL=OFF \
    -DKAFEL_BUILD_PYTHON=OFF -DCMAKE_USER_MAKE_RULES_OVERRIDE_CUDA=/tmp/kafel-cuda20.cmake \
    > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  grep -E "^-- kafel" "$OUT/build.log"
  grep -q "distributed (MPI) ON, NCCL ON" "$OUT/build.log" ||
    echo "WARNING: not built with MPI and NCCL (see the line above): install libopenmpi-dev / nccl"
  cmake --build "$B" -j16 --target kafel_cli kafel_tests_mpi >> "$OUT/build.log" 2>&1 ||
    { grep -B2 -A8 -E "error|FAILED" "$OUT/build.log" | tail -60; exit 1; }
  log "build done"
fi

if has tests; then
  log "ctest -L 'mpi|multigpu'"
  ctest --test-dir "$B" -L 'mpi|multigpu' --output-on-failure > "$OUT/tests.log" 2>&1
  echo "mpi tests rc=$?"; grep -E "tests passed|Passed|Failed|Skipped|Not Run" "$OUT/tests.log" | tail -6
fi

if has comm; then
  log "NCCL collectives on $GPUS GPUs"
  "${RUN[@]}" -np "$GPUS" "$K" dist collectives --device cuda --sizes 1M,16M,256M,1G \
    2>&1 | tee "$OUT/collectives.txt"
fi

if has gemm; then
  for t in ${TYPES//,/ }; do for s in ${SIZES//,/ }; do for p in 1 "$GPUS"; do
    log "gemm $t ${s}^3 on $p GPU(s)"
    "${RUN[@]}" -np "$p" "$K" dist gemm --device cuda --type "$t" --m "$s" --n "$s" --k "$s" \
      --block "$BLOCK" --reps "$REPS" 2>&1 | tee "$OUT/gemm_${t}_${s}_np${p}.txt"
    echo "rc=${PIPESTATUS[0]}"
  done; done; done
  log "summary (job GFLOP/s)"
  grep -H "^job:" "$OUT"/gemm_*.txt
fi

if has cov; then
  for p in 1 "$GPUS"; do
    log "radar stream 10 x 4194304, $BLOCKS blocks, $p GPU(s)"
    "${RUN[@]}" -np "$p" "$K" dist cov --device cuda --channels 10 --samples 4194304 \
      --blocks "$BLOCKS" 2>&1 | tee "$OUT/cov_stream_np${p}.txt"
  done
  log "one block split over $GPUS GPUs"
  "${RUN[@]}" -np "$GPUS" "$K" dist cov --device cuda --channels 10 --samples 4194304 \
    2>&1 | tee "$OUT/cov_split.txt"
  grep -H "^job:" "$OUT"/cov_*.txt
fi
