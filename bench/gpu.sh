#!/usr/bin/env bash
# One-shot run on an air-gapped NVIDIA GPU node: build kafel, check it (GPU tests, sanitizers),
# then benchmark the CUDA ladder against cuBLAS and dump the top kernels' SASS. Short table last.
#
# Usage: bash bench/gpu.sh            (results under $OUT, default ./out)
# Env:   STEPS  comma list of build,tests,sanitize,bench,grid,sass,ocl,cov,ncu (default: all
#               but ncu)
#        SIZES  ladder sizes (default 1024,2048,4096,8192); KERNELS (default all); REPS (20)
#        WARMUP (5); TYPES  element roles of the ladder bench (default f32; e.g.
#               f32,f32/tf32,bf16,bf16->f32,f16,i8,e4m3,f64: each type is measured beside
#               cuda.cublas of the same roles, so `KERNELS=cuda.cublas TYPES=...` gives the
#               baselines alone); OPENCL=0 builds without OpenCL; TESTS  ctest -R regex within
#               label gpu;
#        TOP  kernels also run at TOP_SIZES (default 2048,8192) beside the ladder;
#        OCL_KERNELS / OCL_SIZES / OCL_EXTRA ('|'-separated bench argument lists) for the
#        OpenCL ladder vs CLBlast (step ocl);
#        step cov: the radar covariance benchmark and 1000-block streams (20 blocks/s and max)
#        step shapes (not in the default list): issue 18's shape table, default choice vs cuBLAS
#               (and OpenCL vs CLBlast): SHAPES (default the issue's six shapes), BATCHES
#               ("COUNTxSIZE" list, default 4096x64,1024x256); TC_SHAPES / TC_TYPES the
#               tensor-core rows (default 4 shapes x bf16,e4m3,i8,f32/tf32); SHAPE_SWEEP=1 adds
#               every tile x split of cuda.pipelined on the three hard shapes
#        step medians (not in the default list): the default choice against cuBLAS(Lt) in RUNS
#               (4) separate processes, MED_TYPES x MED_SIZES (issue 11's cells), each run's
#               ratio and the median per cell (bench/medians.py; MED_TARGET marks those below);
#        SAN_FILTER  gtest filter of the compute-sanitizer step (default: every rung's layout
#               and exact tests); SAN_TIMEOUT seconds per tool (default 300, rc 124 if hit);
#        step ncu: Nsight Compute (launch, occupancy, scheduler, warp-state, instruction
#               sections, tensor-pipe use) of one launch of each NCU_KERNELS kernel and of
#               cuBLAS at NCU_SIZE, in the roles TYPES (wgmma rungs: TYPES=bf16);
#        GRID_B / GRID_G  block and grid lists of the gridstride table (default 2,4,8,16,32;
#        adding 1 makes single-thread configurations that take minutes at 1021^3)
# Build dependencies missing on the node (GoogleTest, CLI11, nlohmann-json, OpenCL ICD loader,
# headers, CLBlast) come as Debian packages in .gpu/ (see docs/cuda.md); carry .gpu with the run.
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/out}
B=${BUILD_DIR:-/tmp/build}
STEPS=${STEPS:-build,tests,sanitize,bench,grid,sass,ocl,cov}
SIZES=${SIZES:-1024,2048,4096,8192}
KERNELS=${KERNELS:-all}
TYPES=${TYPES:-f32}
REPS=${REPS:-20}
WARMUP=${WARMUP:-5}
OPENCL=${OPENCL:-auto}
TESTS=${TESTS:-}
GRID_B=${GRID_B:-2,4,8,16,32}
GRID_G=${GRID_G:-2,4,8,16,32}
mkdir -p "$OUT"
has() { [[ ",$STEPS," == *",$1,"* ]]; }
log() { echo "== $(date +%T) $*"; }
KAFEL=$B/tools/kafel/kafel

# --- (a) dependencies from .gpu/ ---------------------------------------------------------
DEPS=/tmp/kafel-deps
if [ -d .gpu ]; then
  mkdir -p $DEPS/vendors
  for f in .gpu/*.deb .gpu/deps/*.deb; do [ -f "$f" ] && dpkg -x "$f" $DEPS; done
  export CPATH=$DEPS/usr/include${CPATH:+:$CPATH}
  export LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
  export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CMAKE_PREFIX_PATH=$DEPS/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  if [ -f /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ]; then
    echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > $DEPS/vendors/nvidia.icd
    export OCL_ICD_VENDORS=$DEPS/vendors
  fi
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv \
  2>&1

# --- (b) configure + build ----------------------------------------------------------------
if has build; then
  log "configure + build into $B"
  # CMake < 3.26 does not know nvcc's C++20 flag; this rules file teaches it (harmless later).
  printf 'set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")\nset(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")\n' > /tmp/kafel-cuda20.cmake
  extra=()
  # Explicit either way: a warm node keeps /tmp/build, whose cache remembers the last choice.
  if [ "$OPENCL" = 0 ]; then extra+=("-DKAFEL_WITH_OPENCL=OFF"); else extra+=("-DKAFEL_WITH_OPENCL=ON"); fi
  configure() {
    cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKAFEL_BUILD_TESTS=ON \
      -DKAFEL_CUDA_PTXAS_VERBOSE=ON -DCMAKE_USER_MAKE_RULES_OVERRIDE_CUDA=/tmp/kafel-cuda20.cmake \
      "${extra[@]}" "$@" >> "$OUT/build.log" 2>&1
  }
  # Only what this script runs is built (other suites' work in progress cannot break it).
  build() {
    local targets=(kafel_tests_gpu)
    grep -qs "^build kafel_cli:" "$B/build.ninja" && targets+=(kafel_cli)
    grep -qs "build tests/kafel_tests_opencl:" "$B/build.ninja" && targets+=(kafel_tests_opencl)
    cmake --build "$B" -j16 --target "${targets[@]}" >> "$OUT/build.log" 2>&1
  }
  # A broken OpenCL part must not cost the CUDA results: retry without it.
  if ! { configure && build; }; then
    grep -B2 -A8 -E "error|FAILED" "$OUT/build.log" | head -40
    log "retrying without OpenCL"
    configure -DKAFEL_WITH_OPENCL=OFF && build ||
      { grep -B2 -A8 -E "error|FAILED" "$OUT/build.log" | tail -60; exit 1; }
  fi
  grep -E "^kafel:|-- kafel" "$OUT/build.log" | head -5
  [ -x "$KAFEL" ] || echo "no kafel CLI in this build: the bench, grid, ncu and cov steps are skipped"
  # Register / spill / shared-memory report of every CUDA kernel (-Xptxas -v).
  grep -E "Compiling entry function|bytes stack frame|Used [0-9]+ registers" "$OUT/build.log" | paste - - - |
    sed -E 's/ptxas info *: //g; s/Compiling entry function //' > "$OUT/ptxas.txt"
  log "build done"
fi

# --- (c) tests ------------------------------------------------------------------------------
if has tests; then
  log "ctest -L gpu"
  ctest --test-dir "$B" -L gpu ${TESTS:+-R "$TESTS"} -j12 --output-on-failure > "$OUT/tests.log" 2>&1
  echo "gpu tests rc=$?"; tail -3 "$OUT/tests.log"
  if [ -x "$B/tests/kafel_tests_opencl" ]; then
    log "ctest -L opencl"
    ctest --test-dir "$B" -L opencl -j4 --output-on-failure >> "$OUT/tests.log" 2>&1
    echo "opencl tests rc=$?"; tail -3 "$OUT/tests.log"
  fi
fi

# --- (d) compute-sanitizer on every rung at small sizes -------------------------------------
if has sanitize; then
  filter=${SAN_FILTER:-'Kernels/CudaLadder.LayoutsAndLeadingDimensions/*:Kernels/CudaLadder.ExactOnIntegerValuedInputs/*:-*cublas*'}
  for tool in memcheck racecheck; do
    log "compute-sanitizer $tool"
    timeout "${SAN_TIMEOUT:-300}" compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/kafel_tests_gpu" \
      --gtest_filter="$filter" > /tmp/sanitizer-$tool.log 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/sanitizer-$tool.log | tail -1)"
    { echo "=== $tool"; cat /tmp/sanitizer-$tool.log; } >> "$OUT/sanitizer.log"
  done
fi

# --- (e) benchmarks ------------------------------------------------------------------------
if has bench && [ -x "$KAFEL" ]; then
  log "ladder: kafel bench --kernels $KERNELS --types $TYPES --sizes $SIZES --vs cublas"
  $KAFEL bench --device cuda:0 --kernels "$KERNELS" --types "$TYPES" --sizes "$SIZES" \
    --vs cublas --warmup "$WARMUP" --reps "$REPS" --json "$OUT/cuda.json" > "$OUT/bench.log" 2>&1
  echo "bench rc=$?"
fi

# --- (f) SASS of the top kernels -----------------------------------------------------------
if has sass; then
  obj=$B/src/CMakeFiles/kafel.dir/cuda
  for f in pipelined warptile; do cuobjdump --dump-sass "$obj/$f.cu.o"; done > /tmp/sass-all.txt 2>&1
  # Keep the f32 kernels only (the file would be too large to bring back otherwise).
  python3 - /tmp/sass-all.txt > "$OUT/sass.txt" <<'PY'
import re, sys
parts = re.split(r"(?=\n\s*Function : )", open(sys.argv[1]).read())
print("".join(p for p in parts if re.search(r"Function : \S*(ConfigIf|kernelIf|CfgILi)", p)))
PY
  # Instruction mix of the f32 128x128x16 3-stage kernel (the default rung 9).
  python3 - "$OUT/sass.txt" <<'PY'
import re, sys, collections
text = open(sys.argv[1]).read()
funcs = re.split(r"\n\s*Function : ", text)
for f in funcs[1:]:
    name = f.split("\n", 1)[0]
    if not re.search(r"If|CfgILi", name): continue
    ops = collections.Counter(re.findall(r"/\*[0-9a-f]{4,6}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", f))
    short = re.sub(r"_ZN5kafel4cuda.*?(Config|Cfg)", "", name)[:36]
    top = " ".join(f"{k}={v}" for k, v in ops.most_common(9))
    print("sass", short, top, f"LDL={ops['LDL']} STL={ops['STL']} total={sum(ops.values())}")
PY
fi

# --- Nsight Compute: where the top kernels and cuBLAS spend their issue slots -----------------
# One --metrics, a comma list: the node's ncu refuses the option given twice (session 21, call 4).
NCU_METRICS='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
NCU_METRICS+=',sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active'
NCU_METRICS+=',sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active'
if has ncu && [ -x "$KAFEL" ]; then
  for k in ${NCU_KERNELS//,/ } cuda.cublas; do
    case $k in
      cuda.cublas) filter='regex:gemm|nvjet|xmma' ;;  # cuBLAS's Hopper kernels: nvjet_*, sm90_xmma_*
      cuda.wgmma_ws*) filter='regex:gemm_warp_specialized' ;;
      cuda.wgmma) filter='regex:gemm_tma_wgmma' ;;
      *) filter='regex:pipelined_kernel' ;;
    esac
    log "ncu $k at ${NCU_SIZE:-4096}"
    rep=/tmp/ncu-$k
    ncu --clock-control none -k "$filter" -c 1 -f -o "$rep" --import-source no \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats \
      --section WarpStateStats --section InstructionStats --section SourceCounters \
      --metrics "$NCU_METRICS" \
      $KAFEL bench --device cuda:0 --kernels "$k" --types "$TYPES" --sizes "${NCU_SIZE:-4096}" \
      --warmup 0 --reps 1 \
      > "$OUT/ncu-$k.log" 2>&1
    echo "ncu $k rc=$?"
    ncu -i "$rep.ncu-rep" --page details --print-details all > "$OUT/ncu-$k.txt" 2>&1
    # Stall reasons per issued instruction, largest first; per-instruction SASS counters to CSV.
    ncu -i "$rep.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
if len(rows) >= 3:
    pairs = [(h.split("stalled_")[1].split("_per_issue")[0], v) for h, v in zip(rows[0], rows[2])
             if "issue_stalled_" in h and h.endswith("per_issue_active.ratio")]
    pairs = sorted(((n, float(v.replace(",", ""))) for n, v in pairs if v), key=lambda p: -p[1])
    print("stalls/issue:", " ".join(f"{n}={v:.3f}" for n, v in pairs[:10]))'
    ncu -i "$rep.ncu-rep" --page source --print-source sass --csv > "$OUT/ncu-$k-sass.csv" 2>&1
    grep -E "^  [a-z_]|SM Frequency|Duration  |Registers Per|Block Size|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Issued Instructions  |_cycles_active" \
      "$OUT/ncu-$k.txt" | head -14
  done
fi

if has grid && [ -x "$KAFEL" ]; then
  log "gridstride block x grid table at 1021 (block $GRID_B, grid $GRID_G)"
  timeout 240 $KAFEL bench --device cuda:0 --kernels cuda.gridstride --block "$GRID_B" \
    --grid "$GRID_G" --sizes 1021 --warmup 0 --reps 1 > /tmp/grid.log 2>&1
  echo "grid rc=$?"
  cat /tmp/grid.log >> "$OUT/bench.log"
fi

if has bench && [ -x "$KAFEL" ] && [ -n "${TOP:-}" ]; then
  log "top kernels at ${TOP_SIZES:-2048,8192}: $TOP"
  $KAFEL bench --device cuda:0 --kernels "$TOP" --types "$TYPES" --sizes "${TOP_SIZES:-2048,8192}" --vs cublas \
    --warmup "$WARMUP" --reps "$REPS" --json "$OUT/cuda-top.json" >> "$OUT/bench.log" 2>&1
  echo "top bench rc=$?"
fi

# --- default choice vs cuBLAS(Lt) in RUNS separate processes, median ratio per cell --------------
if has medians && [ -x "$KAFEL" ]; then
  MED_TYPES=${MED_TYPES:-bf16,f16,bf16->f32,f32/tf32,e4m3,e4m3->f32,i8}
  MED_SIZES=${MED_SIZES:-4096,6144,8192,8192x8192x1024}
  runs=()
  for r in $(seq 1 "${RUNS:-4}"); do
    log "medians: run $r of ${RUNS:-4}, $MED_TYPES at $MED_SIZES"
    "$KAFEL" bench --device cuda:0 --kernels default --types "$MED_TYPES" --sizes "$MED_SIZES" \
      --vs cublas --warmup 3 --reps 20 --json "$OUT/medians-$r.json" > "$OUT/medians-$r.log" 2>&1
    echo "medians run $r rc=$?"
    [ -f "$OUT/medians-$r.json" ] && runs+=("$OUT/medians-$r.json")
  done
  [ ${#runs[@]} -gt 0 ] && python3 "$ROOT/bench/medians.py" "${runs[@]}" --target "${MED_TARGET:-1.0}" \
    | tee "$OUT/medians.txt"
fi

# --- issue 18: every shape at full speed (default choice vs the baselines, same call) -----------
if has shapes && [ -x "$KAFEL" ]; then
  SHAPES=${SHAPES:-256x256x65536,16384x64x16384,1024x1024x16384,8192x8192x1024,65536x256x256,1021,4097}
  log "shapes: $SHAPES vs cublas"
  $KAFEL bench --device cuda:0 --sizes "$SHAPES" --vs cublas --warmup "$WARMUP" --reps "$REPS" \
    --json "$OUT/shapes.json" > "$OUT/shapes.log" 2>&1
  echo "shapes rc=$?"
  # The same suite on the tensor cores: small outputs with long k, skinny n and skinny m.
  TC_SHAPES=${TC_SHAPES:-256x256x65536,1024x1024x16384,16384x64x16384,64x16384x16384}
  $KAFEL bench --device cuda:0 --kernels default --types "${TC_TYPES:-bf16,e4m3,i8,f32/tf32}" \
    --sizes "$TC_SHAPES" --vs cublas --warmup 3 --reps 10 --json "$OUT/shapes-tc.json" \
    >> "$OUT/shapes.log" 2>&1
  echo "tensor-core shapes rc=$?"
  # The CLI's --batch is issue 18's last piece; skip the batch lines until it exists.
  $KAFEL bench --help 2>&1 | grep -q -- "--batch" || BATCHES=none
  for b in $(echo "${BATCHES:-4096x64,1024x256}" | tr , " "); do
    [ "$b" = none ] && continue
    $KAFEL bench --device cuda:0 --batch "${b%%x*}" --sizes "${b#*x}" --vs cublas \
      --warmup "$WARMUP" --reps "$REPS" --json "$OUT/shapes-batch-${b%%x*}.json" >> "$OUT/shapes.log" 2>&1
    echo "batch $b rc=$?"
  done
  if [ "${SHAPE_SWEEP:-0}" = 1 ]; then
    $KAFEL bench --device cuda:0 --kernels cuda.pipelined --sizes 256x256x65536,16384x64x16384,1024x1024x16384 \
      --param SPLITK=1,2,4,8,16,32,64 --warmup 3 --reps 10 --json "$OUT/shapes-sweep.json" >> "$OUT/shapes.log" 2>&1
    echo "sweep rc=$?"
  fi
  if [ -x "$B/tests/kafel_tests_opencl" ]; then
    $KAFEL bench --device opencl --sizes "$SHAPES" --vs clblast --warmup 3 --reps 10 \
      --json "$OUT/shapes-opencl.json" >> "$OUT/shapes.log" 2>&1
    echo "opencl shapes rc=$?"
    for b in $(echo "${BATCHES:-4096x64,1024x256}" | tr , " "); do
      [ "$b" = none ] && continue
      $KAFEL bench --device opencl --batch "${b%%x*}" --sizes "${b#*x}" --vs clblast --warmup 3 \
        --reps 10 >> "$OUT/shapes.log" 2>&1
      echo "opencl batch $b rc=$?"
    done
  fi
  grep -E "vs |x[0-9]+x[0-9]+|FAIL" "$OUT/shapes.log" | cut -c1-200 | tail -40
fi

# --- OpenCL ladder on the GPU against CLBlast, same run -------------------------------------
if has ocl && [ -x "$KAFEL" ] && [ -x "$B/tests/kafel_tests_opencl" ]; then
  log "OpenCL ladder vs CLBlast"
  $KAFEL bench --device opencl --kernels "${OCL_KERNELS:-all}" --sizes "${OCL_SIZES:-1024,4096}" \
    --vs clblast --warmup 3 --reps 10 --json "$OUT/opencl.json" > "$OUT/opencl.log" 2>&1
  echo "opencl bench rc=$?"
  # OCL_EXTRA: further bench argument lists separated by '|' (sweeps, larger sizes).
  IFS='|' read -ra extras <<< "${OCL_EXTRA:-}"
  for i in "${!extras[@]}"; do
    read -ra args <<< "${extras[$i]}"
    $KAFEL bench --device opencl "${args[@]}" --vs clblast --warmup 3 --reps 10 \
      --json "$OUT/opencl-extra$i.json" >> "$OUT/opencl.log" 2>&1
    echo "opencl extra $i rc=$?"
  done
fi

# --- covariance: radar block benchmark and streams ------------------------------------------
if has cov && [ -x "$KAFEL" ]; then
  log "covariance: bench, 1000-block streams"
  {
    $KAFEL cov --bench --device cuda:0 --reps 20 --json "$OUT/cov_bench.json"
    echo "cov bench rc=$?"
    $KAFEL cov --bench --device opencl --kernel ocl.onepass --reps 10
    echo "cov ocl rc=$?"
    $KAFEL cov --device cuda:0 --blocks 1000 --rate 0 --json "$OUT/cov_throughput.json"
    echo "cov throughput rc=$?"
    $KAFEL cov --device cuda:0 --blocks 1000 --rate 20 --json "$OUT/cov_realtime.json"
    echo "cov realtime rc=$?"
    $KAFEL cov --device cuda:0 --blocks 200 --rate 0 --layout interleaved --signal offset --verify
    echo "cov interleaved rc=$?"
  } > "$OUT/cov.log" 2>&1
  grep -E "rc=|blocks/s|median|missed|floor|copy|rel" "$OUT/cov.log" | tail -30
fi

# --- (g) short table last ------------------------------------------------------------------
if [ -f "$OUT/cuda.json" ]; then
  python3 - "$OUT/cuda.json" <<'PY'
import json, sys
recs = json.load(open(sys.argv[1]))["records"]
# The baseline of a record is cuda.cublas with the same element roles ("bf16->f32", "i8" ...).
base = {(r["type"], r["m"]): r["gflops"] for r in recs if r["kernel"] == "cuda.cublas" and r["status"] == "ok"}
sizes = sorted({r["m"] for r in recs})
rows = {}
for r in recs:
    rows.setdefault((r["kernel"], r["type"]), {})[r["m"]] = r
print(f"{'kernel':34s} {'type':14s} " + " ".join(f"{s:>15d}" for s in sizes))
for (k, t), by in rows.items():
    cells = []
    for s in sizes:
        r = by.get(s)
        if r is None: cells.append(f"{'-':>15s}")
        elif r["status"] != "ok": cells.append(f"{r['status']:>15s}")
        else:
            b = base.get((t, s))
            pct = f"{100*r['gflops']/b:4.0f}%" if b else "   "
            cells.append(f"{r['gflops']/1000:8.2f}T {pct}")
    print(f"{k:34s} {t:14s} " + " ".join(cells))
PY
fi
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\(SEGFAULT\)" "$OUT/tests.log" 2>/dev/null | tail -12
if [ -f /tmp/grid.log ]; then grep -A9 -i "block" /tmp/grid.log | tail -10; fi
