#!/usr/bin/env bash
# need.sh COMMAND DEBIAN-PACKAGE — make sure COMMAND is on PATH. When it is
# missing and we are root on Debian, install the package (the registries this
# project relies on include Debian's); otherwise stop with a clear message.
set -euo pipefail
cmd=$1 pkg=$2
if command -v "$cmd" >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "need: $cmd not found; installing Debian package $pkg" >&2
  if ! { apt-get install -y --no-install-recommends "$pkg" >/dev/null 2>&1 ||
         { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends "$pkg" >/dev/null; }; }; then
    echo "need: could not install $pkg with apt-get; install it by hand and run again" >&2
    exit 1
  fi
  command -v "$cmd" >/dev/null 2>&1 && exit 0
fi
echo "need: '$cmd' is required but not on PATH. Install it: sudo apt-get install $pkg" >&2
exit 1
