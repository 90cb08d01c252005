#!/usr/bin/env bash
# The Luau SDK's tests (test/luau/) run the SDK under Debian's lua5.2 (the syntax it is written in is the
# subset Luau and Lua 5.2 share); its HttpService shim sends requests with curl. Installs what is missing when
# we are root with apt; otherwise says what to install.
set -euo pipefail
if command -v lua5.2 >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "lua5.2 or curl missing: installing Debian's lua5.2 and curl packages (Luau SDK tests)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua5.2 curl >/dev/null
  exit 0
fi
echo "lua5.2 or curl is missing: install Debian's 'lua5.2' and 'curl' packages (sudo apt-get install lua5.2 curl) for the Luau SDK tests" >&2
exit 1
