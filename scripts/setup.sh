#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/setup.sh - sourced by scripts/run and scripts/test: install the
# Debian packages lockbench needs when they are missing, then configure and
# compile a build directory.  Usage (after sourcing): lb_setup BUILDDIR [meson options...]
# (lb_configure BUILDDIR [meson options...]: the same without compiling.)
set -euo pipefail

LB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LB_PACKAGES=(meson ninja-build gcc g++ clang binutils pkg-config python3 liburcu-dev libnuma-dev libhwloc-dev
	libck-dev libjansson-dev libgsl-dev gnuplot-nox libbenchmark-tools python3-scipy pigz xz-utils zstd
	scdoc systemtap-sdt-dev bpftrace spin rt-tests
	qemu-system-x86 linux-image-amd64 busybox-static) # the last three: scripts/vm-check

lb_install_packages() {
	local missing=() installed
	# One dpkg-query for the whole list (one a package cost scripts/run 0.8 s).
	installed=" $(dpkg-query -W -f='${Package} ${Status}\n' "${LB_PACKAGES[@]}" 2>/dev/null |
		awk '$NF == "installed" && $(NF-1) == "ok" { print $1 }' | tr '\n' ' ' || true)"
	for p in "${LB_PACKAGES[@]}"; do
		[[ "$installed" == *" $p "* ]] || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "lockbench: missing packages: ${missing[*]}; run: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	echo "lockbench: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq "${missing[@]}" >&2
}

# lb_configure BUILDDIR [meson options...]: packages, then meson setup (or
# configure, for a build directory that exists); compiles nothing.
lb_configure() {
	local dir=$1
	shift
	lb_install_packages
	cd "$LB_ROOT"
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dwerror=true "$@" >&2
	elif ! lb_options_match "$dir" -Dwerror=true "$@"; then
		meson configure "$dir" -Dwerror=true "$@" >&2
	fi
}

# lb_options_match BUILDDIR -Dkey=value...: whether the build directory has
# every one of those values already.  `meson configure` with options prints
# its whole table (about 70 lines) and regenerates the build files, which
# cost scripts/run 2 s a call when nothing had changed.
lb_options_match() {
	local dir=$1
	shift
	meson introspect --buildoptions "$dir" 2>/dev/null | python3 -c '
import json, sys
have = {o["name"]: o["value"] for o in json.load(sys.stdin)}
for arg in sys.argv[1:]:
    key, _, want = arg[2:].partition("=")
    got = have.get(key)
    if isinstance(got, bool):
        got = "true" if got else "false"
    elif isinstance(got, list):
        got = ",".join(got)
    if not arg.startswith("-D") or str(got) != want:
        sys.exit(1)
' "$@"
}

# lb_setup BUILDDIR [meson options...]: lb_configure, then compile everything.
lb_setup() {
	lb_configure "$@"
	ninja -C "$1" >&2
}
