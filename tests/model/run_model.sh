#!/bin/sh
# SPDX-License-Identifier: MIT
# run_model.sh MODEL.pml [BUG] - verify a Promela model with spin(1):
# generate the verifier (spin -a, with -DBUG=BUG when given), compile it for
# safety properties only (-DSAFETY: assertions and invalid end states), run
# it exhaustively, and exit 0 when it reports no error, 1 when it finds one
# (an assertion, a thread stuck for good), 99 (a hard error, never an
# expected failure) when the model does not compile or the search was cut
# short, 77 (skipped) when spin or a C compiler is missing.  Bug variants are
# registered with should_fail in tests/meson.build.
set -u
model=$1
bug=${2:-0}
command -v spin >/dev/null 2>&1 || { echo "spin not installed (apt-get install spin): skipped"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "no C compiler '$cc': skipped"; exit 77; }
case "$model" in /*) ;; *) model=$(pwd)/$model ;; esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/lb-model.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
# A copy: pan writes its counterexample next to the model (model.pml.trail).
cp "$model" "$dir/model.pml" || exit 99
cd "$dir" || exit 99
spin -DBUG="$bug" -a model.pml >spin.log 2>&1 || { cat spin.log; exit 99; }
"$cc" -O2 -DSAFETY -o pan pan.c >cc.log 2>&1 || { cat cc.log; exit 99; }
./pan -m1000000 >pan.log 2>&1
grep -E "^pan:|errors:|states, stored|depth reached|max search depth" pan.log
grep -q "max search depth too small" pan.log && { echo "search cut short"; exit 99; }
errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | tail -n 1)
[ -n "$errors" ] || { cat pan.log; exit 99; }
if [ "$errors" -ne 0 ] && [ -f model.pml.trail ]; then
	# The end of the counterexample, step by step, for the log.
	spin -DBUG="$bug" -t -p -g model.pml 2>&1 | tail -n 40
fi
[ "$errors" -eq 0 ]
