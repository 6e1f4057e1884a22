#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_subproject.sh SOURCEDIR - lockbench as a Meson subproject: a copy of
# tests/embed/subproject/ outside the tree, with subprojects/lockbench
# linked to SOURCEDIR, gets dependency('lockbench-locks') from it (as a
# subproject lockbench configures its headers only: nothing else), builds
# `consumer` (c11, warning_level 3, werror) and runs it.  Exit 0 pass,
# 1 fail, 77 when meson or ninja is missing.
set -uo pipefail
src=$(cd "$1" && pwd)
for tool in meson ninja; do
	command -v "$tool" >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/tests/embed/subproject" "$tmp/proj"
mkdir "$tmp/proj/subprojects"
ln -s "$src" "$tmp/proj/subprojects/lockbench"
if ! meson setup "$tmp/build" "$tmp/proj" >"$tmp/setup.log" 2>&1; then
	echo "FAIL: meson setup of the consumer project"; tail -30 "$tmp/setup.log"; exit 1
fi
if grep -q 'liburcu' "$tmp/setup.log"; then
	echo "FAIL: the subproject looked for its programs' dependencies"; exit 1
fi
if ! ninja -C "$tmp/build" >"$tmp/build.log" 2>&1; then
	echo "FAIL: building consumer against dependency('lockbench-locks')"; tail -30 "$tmp/build.log"; exit 1
fi
if ! timeout 60 "$tmp/build/consumer"; then
	echo "FAIL: consumer did not count every increment (or hung)"; exit 1
fi
echo "PASS: dependency('lockbench-locks') from a subproject"
