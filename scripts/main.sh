#!/usr/bin/env bash
# README command 1: installs what is needed, builds, then runs the main job on this machine:
# the device list, the verified GEMM ladder on every backend present (CPU always, OpenCL and
# CUDA when found) beside the installed baselines, and the radar covariance case on the best
# device with its 50 ms verdict. Results (JSON, CSV, PNG) go to ./results, and last the report
# page results/index.html (bench/report.py: every table and picture in one self-contained file).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
K=./build/tools/kafel/kafel
R=${RESULTS_DIR:-results}
mkdir -p "$R"
# Every kafel command is recorded in $R/commands.txt: the report page shows how each file was made.
: >"$R/commands.txt"
KAFEL_BIN=$K
kafel_recorded() {  # plain words as they are, others shell-quoted: the line can be pasted
  local line=$KAFEL_BIN arg quoted
  for arg in "$@"; do
    if [[ $arg =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then line+=" $arg"; else
      printf -v quoted '%q' "$arg"
      line+=" $quoted"
    fi
  done
  echo "$line" >>"$R/commands.txt"
  "$KAFEL_BIN" "$@"
}
K=kafel_recorded

echo "== devices =="
"$K" devices --json "$R/devices.json"
best=$("$K" devices --best)
echo "best device: $best"
# An OpenBLAS older than the CPU runs generic kernels; `kafel devices` names the core type that
# runs its kernels for this CPU, and the baseline is compared at its best (it reads the variable
# when it is loaded, so it is set for every later command).
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  core=$(grep -o 'OPENBLAS_CORETYPE=[A-Za-z0-9]*' "$R/devices.json" | head -n 1 | cut -d= -f2)
  if [ -n "$core" ]; then
    export OPENBLAS_CORETYPE=$core
    echo "export OPENBLAS_CORETYPE=$core" >>"$R/commands.txt"
    echo "OpenBLAS baseline: OPENBLAS_CORETYPE=$core (its own choice is a kernel set older than this CPU)"
  fi
fi

has() { grep -q "\"backend\": *\"$1\"" "$R/devices.json"; }
plot() { python3 bench/plot.py "$1" -o "${1%.json}.png" || /usr/bin/python3 bench/plot.py "$1" -o "${1%.json}.png"; }

echo "== CPU ladder (vs OpenBLAS) =="
"$K" bench --device cpu --kernels all --sizes 128,256,512 --types f32 --vs openblas \
  --json "$R/ladder-cpu.json" --csv "$R/ladder-cpu.csv"
plot "$R/ladder-cpu.json"
echo "== CPU fast path at larger sizes (vs OpenBLAS) =="
"$K" bench --device cpu --kernels cpu.packed --sizes 1024,2048 --types f32,f64 --vs openblas \
  --json "$R/fast-cpu.json" --csv "$R/fast-cpu.csv"

if has opencl; then
  echo "== OpenCL ladder (vs CLBlast) =="
  "$K" bench --device opencl --kernels all --sizes 256,512 --types f32 --vs clblast \
    --json "$R/ladder-opencl.json" --csv "$R/ladder-opencl.csv"
  plot "$R/ladder-opencl.json"
fi

if has cuda; then
  echo "== CUDA ladder (vs cuBLAS) =="
  "$K" bench --device cuda:0 --kernels all --sizes 1024,2048,4096 --types f32 --vs cublas \
    --json "$R/ladder-cuda.json" --csv "$R/ladder-cuda.csv"
  plot "$R/ladder-cuda.json"
  # The tensor-core rungs, where a GPU's capabilities name mma.sync.
  if grep -q '"capabilities": *"[^"]*mma\.sync' "$R/devices.json"; then
    echo "== CUDA tensor cores: mma.sync and (Hopper) wgmma rungs, every compute mode (vs cuBLAS) =="
    "$K" bench --device cuda:0 \
      --kernels cuda.mma,cuda.mma_pipe,cuda.mma_tiles,cuda.wgmma,cuda.wgmma_ws,cuda.wgmma_3xtf32 \
      --sizes 4096 --types bf16,f16,f32/tf32,f32/3xtf32,i8,f64 --vs cublas \
      --json "$R/tensor-cuda.json" --csv "$R/tensor-cuda.csv"
    plot "$R/tensor-cuda.json"
  fi
fi

echo "== radar covariance: 10 channels x 4,194,304 samples, 20 blocks/s, 50 ms budget =="
"$K" cov --device "$best" --channels 10 --samples 4194304 --signal seed --blocks 40 --rate 20 \
  --json "$R/radar.json"

echo "== report page: $R/index.html =="
echo "python3 bench/report.py $R -o $R/index.html" >>"$R/commands.txt"
python3 bench/report.py "$R" -o "$R/index.html" ||
  /usr/bin/python3 bench/report.py "$R" -o "$R/index.html"
echo "results in $R/ (open $R/index.html in a browser)"
