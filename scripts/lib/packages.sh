# shellcheck shell=bash
# The Debian packages Stepbox's build needs and how they get installed,
# sourced by scripts/test, scripts/stepbox and deploy/build.sh so that the
# three agree.

# sb_build_needs appends to the array `need` the packages missing for the
# whole binary: a C/C++ toolchain for cgo (DuckDB, GLPK), and GLPK with
# libltdl as static archives (GLPK is linked in; libglpk-dev pulls in the
# rest: SuiteSparse, GMP, zlib).
sb_build_needs() {
  { command -v gcc && command -v g++; } >/dev/null 2>&1 || need+=(build-essential)
  { [ -f /usr/include/glpk.h ] && ls /usr/lib/*/libglpk.a; } >/dev/null 2>&1 || need+=(libglpk-dev)
  ls /usr/lib/*/libltdl.a >/dev/null 2>&1 || need+=(libltdl-dev)
}

# sb_can_install: whether this process may install Debian packages.
sb_can_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

# sb_install [APT-OPTION...] PACKAGE...: installs them; apt's output shows
# only when it fails.
sb_install() {
  local log rc=0
  log=$(mktemp) || return
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >"$log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || cat "$log" >&2
  rm -f "$log"
  return "$rc"
}
