#!/usr/bin/env bash
# The console's end-to-end test drives Debian's Chromium (playwright-core never downloads a browser).
# Installs it when missing and we are root with apt; otherwise says what to install.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium missing: installing Debian's chromium package (console end-to-end test)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "chromium is missing: install Debian's 'chromium' package (sudo apt-get install chromium) for the console end-to-end test" >&2
exit 1
