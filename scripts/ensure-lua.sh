#!/usr/bin/env bash
# The Luau SDK's tests (test/luau/) run the SDK under Debian's lua5.2 (the syntax it is written in is the
# subset Luau and Lua 5.2 share). Installs it when missing and we are root with apt; otherwise says what to install.
set -euo pipefail
if command -v lua5.2 >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "lua5.2 missing: installing Debian's lua5.2 package (Luau SDK tests)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua5.2 >/dev/null
  exit 0
fi
echo "lua5.2 is missing: install Debian's 'lua5.2' package (sudo apt-get install lua5.2) for the Luau SDK tests" >&2
exit 1
