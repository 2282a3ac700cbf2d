#!/usr/bin/env bash
# The GitHub Action's step (action.yml), a plain script so it can be run and tested anywhere:
# one lint writes the SARIF report for code scanning, one prints workflow annotations on the
# pull request; the exit status is the annotating run's (0 pass, 1 findings at or above
# DRAGUARD_FAIL_ON, 2 errors). Inputs come as DRAGUARD_* variables.
set -uo pipefail
shopt -s globstar
read -ra words <<< "${DRAGUARD_PATHS:-.}"
paths=()
for word in "${words[@]}"; do
  # a glob (deploy/*.yaml, **/gpu-*.yaml) is expanded as the shell would; one that matches
  # nothing stays as written, and draguard says there is no such file
  expanded=($word)
  paths+=("${expanded[@]}")
done
options=(--fail-on "${DRAGUARD_FAIL_ON:-error}")
[ -n "${DRAGUARD_KUBE_VERSION:-}" ] && options+=(--kube-version "$DRAGUARD_KUBE_VERSION")
[ -n "${DRAGUARD_CONFIG:-}" ] && options+=(--config "$DRAGUARD_CONFIG")
draguard=(${DRAGUARD_COMMAND:-draguard})

"${draguard[@]}" lint "${paths[@]}" "${options[@]}" --format sarif -o "${DRAGUARD_SARIF:-draguard.sarif}"
sarif=$?
"${draguard[@]}" lint "${paths[@]}" "${options[@]}" --format github
status=$?
if [ "$sarif" -eq 2 ] && [ "$status" -ne 2 ]; then
  echo "::error::draguard could not write the SARIF report" >&2
  status=2
fi
exit "$status"
