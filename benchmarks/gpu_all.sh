#!/usr/bin/env bash
# Every GPU figure of benchmarks/README.md in one run, offline (issues 34 and 53).
#
#   benchmarks/gpu_all.sh prep      here, beside ../shared/data, with pip: fills .gpu-bench/
#                                   (ignored by git) with the 4,708 HH-RLHF texts, the wheels
#                                   of rmaudit's dependencies the GPU image lacks, the commit
#   OUT=DIR benchmarks/gpu_all.sh   on the GPU machine (.gpu-bench/ carried): DIR/gpu_all.json,
#                                   DIR/gpu_report.md, DIR/gpu_all.log, in at most 8 minutes
#   OUT=DIR benchmarks/gpu_all.sh --smoke   on CPU: tiny models, a handful of texts (tests)
#
# The device command, from the repository root (benchmarks/README.md, "GPU: every figure"):
#   benchmarks/gpu_all.sh prep      then run, carrying .gpu-bench:   benchmarks/gpu_all.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH="$ROOT/.gpu-bench"
PYTHON=${PYTHON:-python3}
# rmaudit's core dependencies that the GPU machine's image does not ship (pure Python but
# pydantic-core), pinned to the versions of the environment that prepares them
MISSING="pydantic pydantic-core annotated-types typing-inspection platformdirs"

prep() {
    mkdir -p "$BENCH/whl"
    cp "$ROOT/../shared/data/hh-rlhf/helpful-base/test.jsonl.gz" "$BENCH/hh-test.jsonl.gz"
    git -C "$ROOT" rev-parse --short HEAD >"$BENCH/commit"
    local pins=()
    for name in $MISSING; do
        pins+=("$name==$("$PYTHON" -c "import importlib.metadata as m; print(m.version('$name'))")")
    done
    rm -f "$BENCH"/whl/*.whl
    "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$BENCH/whl" "${pins[@]}"
    du -sh "$BENCH"
}

run() {
    : "${OUT:?set OUT to the folder for the figures}"
    if compgen -G "$BENCH/whl/*.whl" >/dev/null; then
        "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target /tmp/gpu-bench-site \
            "$BENCH"/whl/*.whl
        export PYTHONPATH="/tmp/gpu-bench-site${PYTHONPATH:+:$PYTHONPATH}"
    fi
    export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
    local commit
    commit=$(cat "$BENCH/commit" 2>/dev/null || echo unknown)
    # 450 s of measuring, then only the section in progress finishes; 480 s at most
    timeout 480 "$PYTHON" "$ROOT/benchmarks/gpu_all.py" --out "$OUT" \
        --hh "$BENCH/hh-test.jsonl.gz" --commit "$commit" --budget-s 450 "$@" \
        2>&1 | tee "$OUT/gpu_all.log" || echo "gpu_all.py stopped early; the JSON keeps what it measured"
    "$PYTHON" "$ROOT/benchmarks/gpu_report.py" "$OUT/gpu_all.json" | tee "$OUT/gpu_report.md"
}

case "${1:-}" in
prep) prep ;;
--smoke)
    : "${OUT:?set OUT to the folder for the figures}"
    mkdir -p "$OUT"
    "$PYTHON" "$ROOT/benchmarks/gpu_all.py" --smoke --out "$OUT"
    "$PYTHON" "$ROOT/benchmarks/gpu_report.py" "$OUT/gpu_all.json"
    ;;
*) run "$@" ;;
esac
