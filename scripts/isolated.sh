#!/usr/bin/env bash
# Run a command in a private network namespace whose only interface is loopback.
#
# Why: servers liedar's tests start (a local Ray cluster, llama.cpp's OpenAI-compatible
# server, fake HTTP servers for fault tests) must be reachable from this machine only. Ray
# 2.60 binds its gRPC servers to every interface whatever address it is given; inside this
# namespace every interface is loopback, so nothing started by the command can be reached
# from outside. Nothing here needs the network: installs happen before (scripts/bootstrap.sh).
#
# Needs root (or unprivileged user namespaces). Without either, the command runs as it is
# and the tests that start a local Ray cluster skip, saying why.
set -euo pipefail
if unshare -n true 2>/dev/null; then
  exec unshare -n -- sh -c 'ip link set lo up 2>/dev/null || true; exec "$0" "$@"' "$@"
elif unshare -rn true 2>/dev/null; then
  exec unshare -rn -- sh -c 'ip link set lo up 2>/dev/null || true; exec "$0" "$@"' "$@"
fi
echo "[isolated] no private network namespace available (not root, no user namespaces): running as is" >&2
exec "$@"
