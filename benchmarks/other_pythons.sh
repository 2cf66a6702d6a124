#!/usr/bin/env bash
# The suite under other Python versions than the one at hand, each in a fresh virtual environment:
#   bash benchmarks/other_pythons.sh python3.10 python3.13
# Each interpreter gets `pip install torch==2.13.0` (where the CPU wheel is not on the index, the
# default Linux wheel and its CUDA libraries: gigabytes) and `pip install -e '.[test]'`, then the
# README's `python -m pytest`; the last lines of each run are printed. FL_COSIM_DATA as for the suite.
set -uo pipefail
cd "$(dirname "$0")/.."
for python in "$@"; do
  venv=$(mktemp -d)/venv
  echo "== $python: $("$python" --version 2>&1)"
  "$python" -m venv "$venv" && "$venv/bin/pip" install -q torch==2.13.0 && "$venv/bin/pip" install -q -e '.[test]' \
    || { echo "$python: the install failed"; continue; }
  "$venv/bin/python" -m pytest -p no:cacheprovider 2>&1 | tail -3
  rm -rf "$(dirname "$venv")"
done
