#!/usr/bin/env bash
# Runs promtool's rule checks and unit tests on every alert rule file of this
# directory. Needs promtool on PATH (Debian: apt-get install -y prometheus).
set -euo pipefail

cd "$(dirname "$0")"
PROMTOOL="${PROMTOOL:-promtool}"
if ! command -v "$PROMTOOL" >/dev/null 2>&1; then
	echo "observability/alerts/test.sh: promtool not found (set PROMTOOL or install it: apt-get install -y prometheus)" >&2
	exit 1
fi

shopt -s nullglob
rules=(*.rules.yaml)
tests=(*.test.yaml)
if [ ${#rules[@]} -eq 0 ] || [ ${#tests[@]} -eq 0 ]; then
	echo "observability/alerts/test.sh: no rule or test files found" >&2
	exit 1
fi
# Every rule file must have its unit tests beside it.
for r in "${rules[@]}"; do
	t="${r%.rules.yaml}.test.yaml"
	if [ ! -f "$t" ]; then
		echo "observability/alerts/test.sh: $r has no unit tests ($t)" >&2
		exit 1
	fi
done
"$PROMTOOL" --version 2>&1 | head -n 1
"$PROMTOOL" check rules "${rules[@]}"
"$PROMTOOL" test rules "${tests[@]}"
