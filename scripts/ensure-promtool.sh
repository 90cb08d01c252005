#!/usr/bin/env bash
# `npm run lint:alerts` checks ops/prometheus/ with promtool, which ships in Debian's `prometheus` package.
# Exits at once when promtool is on PATH. Otherwise installs the package with apt-get (as root, or through
# passwordless sudo), without its recommended node exporter and without starting the Prometheus daemon the
# package would otherwise start (CI and developer machines need the tool, not a server on port 9090).
# Idempotent; prints nothing when promtool is already there.
set -euo pipefail
if command -v promtool >/dev/null 2>&1; then exit 0; fi

if [ "$(id -u)" = "0" ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "promtool is missing: install Debian's 'prometheus' package (sudo apt-get install --no-install-recommends prometheus) for npm run lint:alerts" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "promtool is missing and apt-get is not available: install promtool (Prometheus's release tarball or your distribution's prometheus package)" >&2
  exit 1
fi

echo "promtool missing: installing Debian's prometheus package (alert rule checks)" >&2
# invoke-rc.d asks /usr/sbin/policy-rc.d whether a package may start its service; exit 101 = "no". Placed
# only when the machine has no policy of its own, and removed again whatever happens.
policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  placed_policy=1
fi
cleanup() { if [ "$placed_policy" = 1 ]; then "${as_root[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

install() { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
# Package lists are usually current enough; refresh them only when the install cannot find the package.
if ! install 2>/dev/null; then
  "${as_root[@]}" apt-get update -qq
  install
fi
command -v promtool >/dev/null 2>&1 || { echo "installed Debian's prometheus package but promtool is still not on PATH" >&2; exit 1; }
