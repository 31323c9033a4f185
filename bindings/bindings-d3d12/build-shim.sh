#!/usr/bin/env bash
# Builds gpusync's D3D12 shim (src/main/c/gpusync_d3d12.c) with the system C compiler into
#   <classes>/io/gpusync/bindings/d3d12/linux-x86_64/libgpusync_d3d12.so
# so that it travels inside gpusync-bindings-d3d12's jar (D3d12Shim extracts it to a temporary file at run time).
# SKIPS (exit 0, a message, and a .skipped file naming the reason, which D3D12 code reports) where there is no C
# compiler or no vkd3d headers (Debian: gcc libc6-dev libvkd3d-dev); a compile error with both present fails.
# Usage: build-shim.sh <classes-dir>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1/io/gpusync/bindings/d3d12/linux-x86_64"
mkdir -p "$out"
rm -f "$out/libgpusync_d3d12.so" "$out/libgpusync_d3d12.skipped"
skip() {
  echo "[gpusync d3d12 shim] SKIPPED: $1 (D3D12 tests will skip with this reason)"
  echo "$1" > "$out/libgpusync_d3d12.skipped"
  exit 0
}
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || skip "the shim is built for Linux x86-64 only (this is $(uname -s)-$(uname -m))"
CC="${CC:-cc}"
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC) on the PATH; install gcc and libc6-dev"
printf '#include <vkd3d.h>\n#include <vkd3d_utils.h>\n' | "$CC" -E -DVKD3D_NO_VULKAN_H -I/usr/include/vkd3d - >/dev/null 2>&1 \
  || skip "no vkd3d headers (<vkd3d/vkd3d.h>, <vkd3d/vkd3d_utils.h>); install libvkd3d-dev"
"$CC" -std=gnu11 -O2 -fPIC -shared -fvisibility=hidden -Wall -Wno-unused-function \
  -I/usr/include/vkd3d -o "$out/libgpusync_d3d12.so" "$here/src/main/c/gpusync_d3d12.c" \
  -lvkd3d -lvkd3d-utils -lpthread
echo "[gpusync d3d12 shim] built $out/libgpusync_d3d12.so"
