#!/usr/bin/env bash
# The check a GPU machine owes (docs/benchmarks.md, "On a GPU"): the suite with live per-test
# reports, the pooled commands with --device cuda, the batched engine's samples/s and one timed
# mnist-rotation comparison, with the GPU's utilization sampled per step. Every step is bounded
# and everything lands in $OUT (steps.log, pytest.log, reports.txt, failures.txt, *.txt).
#
#   bash benchmarks/cuda_check.sh          (on the GPU machine: the project and its test extras installed, FL_COSIM_DATA set)
#   DEV=cpu JOBS=2 SUITE_ARGS=tests/test_options.py bash benchmarks/cuda_check.sh   (a dry run)
#
# SUITE_S, TEST_S (pytest-timeout per test, where installed), ROUNDS, ROT_S and CHUNKS bound the steps.
cd "$(dirname "$0")/.."
DEV=${DEV:-cuda}; JOBS=${JOBS:-15}; OUT=${OUT:-/tmp/cuda-check}; mkdir -p "$OUT"
R=$(mktemp -d); trap 'rm -rf "$R"' EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH}" OUT
stamp() { echo "== $(date +%s.%N | cut -c1-14) $*" | tee -a "$OUT/steps.log"; }
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 250 > "$OUT/util.csv" &
fi
python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
stamp suite
timeout "${SUITE_S:-240}" python3 -m pytest -p no:cacheprovider -p live_reports -n "$JOBS" -rfE \
  ${TEST_S:+--timeout=$TEST_S} ${SUITE_ARGS:-} > "$OUT/pytest.log" 2>&1; echo "suite rc=$?"
tail -3 "$OUT/pytest.log"; grep -E "^(failed|error)" "$OUT/reports.txt" | cut -c1-200
stamp compare
timeout 60 fl-cosim compare --algorithm fedavg user-centric --streams 2 --seeds 2 --rounds 3 --jobs 4 \
  --device "$DEV" --out "$R/compare" --quiet > "$OUT/compare.txt" 2>&1; echo "compare rc=$?"
stamp compare-cpu  # the same on this machine's CPU: which device should `auto` give a run this small?
timeout 60 fl-cosim compare --algorithm fedavg user-centric --streams 2 --seeds 2 --rounds 3 --jobs 4 \
  --device cpu --out "$R/compare-cpu" --quiet > "$OUT/compare-cpu.txt" 2>&1; echo "compare on the cpu rc=$?"
stamp sweep
printf 'seeds = 2\n[settings]\nscenario = "digits-rotation"\nrounds = 3\ntraining = { device = "%s" }\n[[algorithm]]\nname = "fedavg"\n[[algorithm]]\nname = "oracle"\n' \
  "$DEV" > "$R/sweep.toml"
timeout 60 fl-cosim sweep "$R/sweep.toml" --jobs 4 --out "$R/sweep" --quiet > "$OUT/sweep.txt" 2>&1; echo "sweep rc=$?"
stamp lambda
timeout 60 fl-cosim lambda-study --k 1,2 --rounds 3 --jobs 2 --device "$DEV" --out "$R/lambda" --quiet \
  > "$OUT/lambda.txt" 2>&1; echo "lambda rc=$?"
stamp chunks
timeout 60 python3 -m benchmarks.batched_chunks --model lenet5 --devices 100 --samples 256 --chunks "${CHUNKS:-25,50,100}" \
  --device "$DEV" --repeats 2 > "$OUT/chunks.txt" 2>&1; echo "chunks rc=$?"; tail -4 "$OUT/chunks.txt"
stamp rotation
timeout "${ROT_S:-75}" fl-cosim compare --scenario mnist-rotation --algorithm fedavg user-centric oracle --streams 4 --seeds 1 \
  --rounds "${ROUNDS:-30}" --jobs 3 --device "$DEV" --out "$R/rotation" --quiet > "$OUT/rotation.txt" 2>&1
echo "rotation rc=$?"; grep -E "^(fedavg|user-centric|oracle)" "$OUT/rotation.txt"
stamp done
kill %1 2>/dev/null
python3 - "$OUT" <<'PY'
import csv, datetime, os, sys
out = sys.argv[1]
steps = [(float(line.split()[1]), line.split()[2]) for line in open(f"{out}/steps.log")]
samples = []  # (time, GPU busy %, memory MiB), where nvidia-smi sampled them
if os.path.exists(f"{out}/util.csv"):
    for row in csv.reader(open(f"{out}/util.csv")):
        at = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
        samples.append((at, float(row[1].split()[0]), float(row[2].split()[0])))
for (start, name), (end, _) in zip(steps, steps[1:]):
    inside = [(busy, memory) for at, busy, memory in samples if start <= at < end]
    gpu = (f"  GPU busy mean {sum(b for b, _ in inside) / len(inside):5.1f}%  max memory {max(m for _, m in inside):.0f} MiB"
           if inside else "")
    print(f"{name:12s} {end - start:7.1f} s{gpu}")
PY
rm -f "$OUT/util.csv"  # many thousand lines; the table above is what it says
