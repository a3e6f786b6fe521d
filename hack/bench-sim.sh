#!/usr/bin/env bash
# make bench-sim: simulator throughput on BenchmarkDemoRun (one demo
# upgrade per op, scenarios/bench/simbench), on one core: runs per
# CPU-second, allocations and bytes per run, medians of ROUNDS runs.
# With BASE=<commit> the same benchmark of that commit is built in a
# temporary git worktree under /tmp and run alternately with this tree's,
# round by round, so load from other processes falls on both alike; the
# last line is the ratio. docs/performance.md has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
BENCHTIME=${BENCHTIME:-20x}
BASE=${BASE:-}
tmp=$(mktemp -d /tmp/bench-sim.XXXXXX)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
go test -c -o "$tmp/this.test" ./scenarios/bench/simbench
sides=(this)
if [[ -n "$BASE" ]]; then
	git worktree add --quiet --detach "$tmp/base" "$BASE"
	(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./scenarios/bench/simbench)
	sides=(base this)
fi
cd scenarios/bench/simbench
for ((r = 1; r <= ROUNDS; r++)); do
	for side in "${sides[@]}"; do
		"$tmp/$side.test" -test.run '^$' -test.bench '^BenchmarkDemoRun$' -test.benchmem -test.cpu 1 \
			-test.benchtime "$BENCHTIME" | awk -v side="$side" '/^BenchmarkDemoRun/ { print side, $0 }' | tee -a "$tmp/raw"
	done
done
# Columns of a benchmark line: name N ns/op value unit value unit ...
awk -v base="$BASE" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{
	s = $1; n[s]++
	for (i = 4; i < NF; i += 2) {
		if ($(i+1) == "runs/cpu-s") cpu[s, n[s]] = $i
		if ($(i+1) == "allocs/op") al[s, n[s]] = $i
		if ($(i+1) == "B/op") by[s, n[s]] = $i
	}
}
END {
	printf "\nBenchmarkDemoRun, -cpu 1, medians of %d rounds\n", n["this"]
	printf "%-28s %12s %12s %12s\n", "code", "runs/CPU-s", "allocs/run", "MB/run"
	split("base this", order, " ")
	for (k = 1; k <= 2; k++) {
		s = order[k]; if (!n[s]) continue
		for (i = 1; i <= n[s]; i++) { c[i] = cpu[s, i]; a[i] = al[s, i]; b[i] = by[s, i] }
		mc[s] = median(c, n[s]); ma[s] = median(a, n[s]); mb[s] = median(b, n[s])
		label = s == "base" ? "base " base : "this tree"
		printf "%-28s %12.2f %12d %12.1f\n", label, mc[s], ma[s], mb[s] / 1e6
	}
	if (n["base"]) printf "this tree / base: runs per CPU-second x%.2f, allocations x%.2f, bytes x%.2f\n", mc["this"] / mc["base"], ma["this"] / ma["base"], mb["this"] / mb["base"]
}' "$tmp/raw"
