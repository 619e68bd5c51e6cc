#!/usr/bin/env bash
# The table of docs/flash-sale.md: every flash-sale scenario drilled at full
# length with seeds 1, 2 and 3, each figure beside the predictor's range
# (400 simulated runs from seed 1). About 30 minutes on 2 cores; run it on
# an otherwise idle machine, since the drills measure time.
#
#   bash scripts/flash-table.sh [RUNS_DIR] > table.md
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/flash-table}
mkdir -p bin "$out"
go build -o bin/gameday ./cmd/gameday
for sc in drop-naive drop-reserve peak-queue peak-deadline peak-lottery peak-fair peak-fair-deadline peak-paced; do
	observed=()
	for seed in 1 2 3; do
		dir="$out/$sc-seed$seed"
		rm -rf "$dir"
		# The verdict does not matter here (exit 1 is a broken promise,
		# which the table shows anyway); a drill that could not run does.
		code=0
		bin/gameday run -quiet -seed "$seed" -runs-dir "$dir" "$sc" >"$dir.txt" 2>&1 || code=$?
		if [ "$code" -eq 2 ]; then
			cat "$dir.txt" >&2
			exit 2
		fi
		observed+=(-observed "$(ls -d "$dir"/*/ | tail -1)")
	done
	printf '\n### %s\n\n' "$sc"
	bin/gameday predict -markdown "${observed[@]}" "$sc"
done
