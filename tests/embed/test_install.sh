#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_install.sh BUILDDIR SOURCEDIR - `meson install` into a DESTDIR, then
# use what was installed the way a program outside the tree would: every
# installed file is where introspection says, every lock header is
# installed, and consumer.c and the README example build from the installed
# headers with `pkg-config --cflags --libs lockbench-locks` as gcc/clang x
# -std=c11/-std=gnu11 and g++/clang++ -std=c++17 (-Wall -Wextra -Werror
# -pedantic), and run.  TAP output.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }

root=$tmp/root
if meson install -C "$build" --destdir "$root" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
	ok "meson install --destdir"
else
	not_ok "meson install --destdir"; sed 's/^/# /' "$tmp/install.log"
	echo "1..$n"; exit 1
fi

# Every file Meson means to install is there (programs, headers, .pc, man
# pages, data files under share/lockbench/ from any workload).
missing=$(python3 - "$build" "$root" <<'PY'
import json, subprocess, sys
build, root = sys.argv[1], sys.argv[2]
out = subprocess.run(["meson", "introspect", "--installed", build], capture_output=True,
                     text=True, check=True).stdout
for dest in json.loads(out).values():
    import os
    if not os.path.exists(root + dest):
        print(dest)
PY
)
if [ -z "$missing" ]; then ok "every introspected install path exists under DESTDIR"
else not_ok "installed files missing: $missing"; fi

pc=$(find "$root" -name lockbench-locks.pc | head -1)
if [ -n "$pc" ]; then ok "lockbench-locks.pc installed"; else not_ok "lockbench-locks.pc installed"; echo "1..$n"; exit 1; fi
incdir=$(find "$root" -type d -path '*/include/lockbench' | head -1)

# Every header in locks/include/lockbench/ (the embeddable API) is installed.
absent=""
for h in "$src"/locks/include/lockbench/*.h; do
	b=$(basename "$h")
	[ -f "$incdir/$b" ] || absent="$absent $b"
done
if [ -z "$absent" ]; then ok "every lock header is installed"
else not_ok "lock headers not installed (add them to the manifest in locks/meson.build):$absent"; fi

# Man pages: only when scdoc built them.
if [ -f "$build/doc/lockbench.1" ]; then
	if [ -n "$(find "$root" -path '*/man/man1/lockbench.1')" ] &&
		[ -n "$(find "$root" -path '*/man/man1/locktorture.1')" ]; then
		ok "man pages installed"
	else
		not_ok "man pages installed"
	fi
else
	skip "man pages (scdoc missing at build time)"
fi

# A relocatable .pc needs nothing else; one with an absolute prefix is
# pointed into the DESTDIR with the sysroot variable.
export PKG_CONFIG_PATH=$(dirname "$pc")
if ! grep -q '{pcfiledir}' "$pc"; then
	export PKG_CONFIG_SYSROOT_DIR=$root
fi
if ! flags=$(pkg-config --cflags --libs lockbench-locks 2>"$tmp/pc.err"); then
	not_ok "pkg-config --cflags --libs lockbench-locks"; sed 's/^/# /' "$tmp/pc.err"
	echo "1..$n"; exit 1
fi
ok "pkg-config --cflags --libs lockbench-locks: $flags"

# The README's embedding example, extracted between its markers.
awk '/<!-- embed-example-begin -->/{f=1; next} /<!-- embed-example-end -->/{f=0} f' \
	"$src/README.md" | sed '/^```/d' >"$tmp/readme_example.c"

strict="-Wall -Wextra -Werror -pedantic -O2"
# build_run NAME COMPILER ARGS... : compile consumer-like source, run it.
build_run() {
	local name=$1 compiler=$2 source=$3
	shift 3
	if ! command -v "$compiler" >/dev/null; then
		skip "$name ($compiler not installed)"; return
	fi
	# shellcheck disable=SC2086
	if ! "$compiler" "$@" $strict "$source" $flags -o "$tmp/$name" >"$tmp/$name.log" 2>&1; then
		not_ok "$name builds warning-free"; sed 's/^/# /' "$tmp/$name.log" | head -40; return
	fi
	if timeout 60 "$tmp/$name" >"$tmp/$name.out" 2>&1; then
		ok "$name builds warning-free and runs"
	else
		not_ok "$name runs"; sed 's/^/# /' "$tmp/$name.out"
	fi
}
for cc in gcc clang; do
	for std in c11 gnu11; do
		build_run "consumer-$cc-$std" "$cc" "$src/tests/embed/consumer.c" -std=$std
	done
done
build_run "consumer-g++-c++17" g++ "$src/tests/embed/consumer.c" -x c++ -std=c++17
build_run "consumer-clang++-c++17" clang++ "$src/tests/embed/consumer.c" -x c++ -std=c++17
# An embedder who asks for the probes gets them (where sys/sdt.h exists).
if printf '#include <sys/sdt.h>\n' | gcc -E -x c - >/dev/null 2>&1; then
	for cc in gcc clang; do
		build_run "consumer-$cc-c11-usdt" "$cc" "$src/tests/embed/consumer.c" -std=c11 -DLB_USDT=1
		if [ -x "$tmp/consumer-$cc-c11-usdt" ]; then
			# Via a file: grep -q closing the pipe early fails readelf under pipefail.
			readelf -n "$tmp/consumer-$cc-c11-usdt" >"$tmp/notes.txt" 2>/dev/null
			if grep -q 'Provider: lockbench' "$tmp/notes.txt"; then
				ok "consumer-$cc-c11-usdt carries lockbench probes"
			else
				not_ok "consumer-$cc-c11-usdt carries lockbench probes"
			fi
		fi
	done
else
	skip "consumer with -DLB_USDT=1 (sys/sdt.h missing: systemtap-sdt-dev)"
fi

# Every installed header alone, as C++17 (the C11 side: the `headers` suite).
if command -v g++ >/dev/null; then
	alone_bad=""
	for h in "$incdir"/*.h; do
		b=$(basename "$h")
		printf '#define _GNU_SOURCE 1\n#include <lockbench/%s>\n' "$b" >"$tmp/alone.cc"
		# shellcheck disable=SC2086
		g++ -std=c++17 $strict -fsyntax-only "$tmp/alone.cc" $flags >"$tmp/alone.log" 2>&1 ||
			{ alone_bad="$alone_bad $b"; sed 's/^/# /' "$tmp/alone.log" | head -10; }
	done
	if [ -z "$alone_bad" ]; then ok "every installed header compiles alone as C++17"
	else not_ok "headers that do not compile alone as C++17:$alone_bad"; fi
else
	skip "headers alone as C++17 (g++ not installed)"
fi
if [ -s "$tmp/readme_example.c" ]; then
	build_run "readme-example-gcc-c11" gcc "$tmp/readme_example.c" -std=c11
	build_run "readme-example-g++-c++17" g++ "$tmp/readme_example.c" -x c++ -std=c++17
else
	not_ok "README.md has an example between <!-- embed-example-begin/end --> markers"
fi

echo "1..$n"
exit $failed
