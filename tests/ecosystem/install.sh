#!/usr/bin/env bash
# tests/ecosystem/install.sh MESON BUILD_ROOT LIBDIR BINDIR MANDIR PROBE PKG_CONFIG
# meson install into a DESTDIR: the library, the launcher, the man page and
# a valid pkg-config file, and a program runs with what was installed.
set -u
meson=$1 build=$2 libdir=$3 bindir=$4 mandir=$5 probe=$6 pkg_config=$7
. "$(dirname "$0")/lib.sh"
dest=$work/dest

"$meson" install -C "$build" --destdir "$dest" --no-rebuild >"$work/install.log" 2>&1 ||
	{ fail "meson install"; cat "$work/install.log" >&2; finish install; }

library=$dest$libdir/libcnamutex.so
launcher=$dest$bindir/cnamutex
man=$dest$mandir/man1/cnamutex.1
pc_dir=$dest$libdir/pkgconfig
[ -f "$library" ] || fail "no $library"
[ -x "$launcher" ] || fail "no executable $launcher"
[ -f "$man" ] || fail "no $man"
[ -f "$pc_dir/cnamutex.pc" ] || fail "no $pc_dir/cnamutex.pc"
expect_grep "man page title" '^\.TH CNAMUTEX 1 ' "$man"
for word in CNAMUTEX_NUMA CNAMUTEX_THRESHOLD_MS CNAMUTEX_SHUFFLE_BITS CNAMUTEX_SPIN \
	CNAMUTEX_TOPOLOGY CNAMUTEX_STATS CNAMUTEX_PROFILE CNAMUTEX_LIB 'threshold\-ms' \
	'shuffle\-bits' acquisitions_fast acquisitions_spun wait_mean_us; do
	grep -qF -- "$word" "$man" || fail "man page does not mention $word"
done

# The installed launcher points at the installed library, not the build tree.
expect_grep "installed launcher's library" "^library=\\$\\{CNAMUTEX_LIB:-$libdir/libcnamutex.so\\}\$" "$launcher"
if [ ! -e "$libdir/libcnamutex.so" ]; then
	"$launcher" "$probe" >/dev/null 2>"$work/err"
	expect "installed launcher before the real install" "$?" 125
fi

# pkg-config finds and accepts it.
export PKG_CONFIG_PATH=$pc_dir
"$pkg_config" --validate cnamutex || fail "pkg-config --validate cnamutex"
expect "pkg-config preload" "$("$pkg_config" --variable=preload cnamutex)" "$libdir/libcnamutex.so"
expect "pkg-config launcher" "$("$pkg_config" --variable=launcher cnamutex)" "$bindir/cnamutex"
expect_grep "pkg-config --libs" '-lcnamutex' <("$pkg_config" --libs cnamutex)

# Run a program with what was installed.
CNAMUTEX_LIB=$library "$launcher" --stats "$probe" 5 >"$work/out" 2>"$work/err"
expect "exit status from the DESTDIR launcher" "$?" 5
expect "LD_PRELOAD from the DESTDIR launcher" "$(sed -n 's/^LD_PRELOAD=//p' "$work/out")" "$library"
expect_grep "stats from the installed library" '^cnamutex: stats acquisitions_fast=' "$work/err"

finish install
