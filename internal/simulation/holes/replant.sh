#!/usr/bin/env bash
# Plants each hole the fault simulation was built to find back into a copy
# of the committed tree (a git worktree of HEAD, removed after), explores
# from seed 1 as `make test` does, and says after how many schedules the
# simulation found it. A hole not found within the budget fails the run.
#
#   internal/simulation/holes/replant.sh [patch...]     (make simulate-holes)
#   SCHEDULES=10000 (the CI budget) by default.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
schedules=${SCHEDULES:-10000}
if [ $# -eq 0 ]; then
	set -- "$root"/internal/simulation/holes/*.patch
fi
status=0
for patch in "$@"; do
	name=$(basename "$patch" .patch)
	tmp=$(mktemp -d)
	wt="$tmp/tree"
	git -C "$root" worktree add --detach -q "$wt" HEAD
	git -C "$wt" apply "$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")"
	began=$(date +%s)
	if out=$(cd "$wt" && go test -count=1 -timeout 0 -run 'TestSimulation$' ./internal/simulation -schedules "$schedules" 2>&1); then
		echo "$name: NOT found in $schedules schedules"
		status=1
	else
		seed=$(grep -o -m1 -- '-seed [0-9]*' <<<"$out" | grep -o '[0-9]*' || true)
		if [ -z "$seed" ]; then
			echo "$name: the run failed without a schedule's failure:"
			echo "$out" | tail -20
			status=1
		else
			# Seeds are explored from 1 in order: the failing seed is the count.
			why=$(grep -m1 -o 'cut to [0-9]* steps): .*' <<<"$out" || true)
			echo "$name: found by schedule $seed ($(($(date +%s) - began)) s with the build) — $why"
		fi
	fi
	git -C "$root" worktree remove --force "$wt"
	rmdir "$tmp"
done
exit $status
