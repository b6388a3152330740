#!/usr/bin/env bash
# Static checks for what the e2e tier cannot run here (ctest e2e_lint, label
# unit): shellcheck over every e2e and bench shell script, tools/demo.sh and the kind
# deployment; the bench scripts' Python unit tests (bench/*_test.py); every YAML
# file under e2e/, manifests/ and examples/ parses (PyYAML, else yamllint); plus
# the structural checks in lint_yaml.py.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
cd "$REPO"
command -v shellcheck >/dev/null || {
  echo "e2e lint: shellcheck is not installed (tools/install-deps.sh installs it)" >&2
  exit 1
}
mapfile -t scripts < <(find e2e bench -name '*.sh' -type f | sort)
[[ -f tools/demo.sh ]] && scripts+=(tools/demo.sh)
shellcheck -x "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts clean"
# A wait_for whose check holds a command substitution (`wait_for ... test
# "$(count)" -eq 4`) runs it once, when the line runs, and then waits on that
# value: the check must be a function that counts again (topology.sh's
# bound_is). Arithmetic $((...)) is fine.
if stale=$(grep -nE '^[[:space:]]*(gang_)?wait_for .*\$\([^(]' "${scripts[@]}"); then
  echo "$stale"
  echo "e2e lint: a wait_for check above is evaluated once; wrap it in a function" >&2
  exit 1
fi
echo "wait_for checks: none evaluated once"
for t in bench/*_test.py; do out=$(python3 "$t" 2>&1) || { echo "$out"; exit 1; }; echo "$t: ${out##*$'\n'}"; done

mapfile -t yamls < <(find e2e manifests examples -name '*.yaml' -type f 2>/dev/null | sort)
if python3 -c 'import yaml' 2>/dev/null; then
  python3 "$HERE/lint_yaml.py" "${yamls[@]}"
elif command -v yamllint >/dev/null; then
  yamllint -d '{extends: relaxed, rules: {line-length: disable, indentation: disable}}' "${yamls[@]}"
  echo "yamllint: ${#yamls[@]} YAML files parse (structural checks need PyYAML: skipped)"
else
  echo "e2e lint: neither PyYAML (python3-yaml) nor yamllint is installed" >&2
  exit 1
fi
