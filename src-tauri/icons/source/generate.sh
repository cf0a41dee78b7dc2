#!/usr/bin/env bash
# Renders the app icon (keypool.svg: a key dipped in a pool) into the sizes and formats the
# bundles use: PNGs for Linux (hicolor 32, 128, 256, 512) and the window, .icns for macOS, .ico
# for Windows. `npm run icons` runs it; the results are checked in.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npx tauri icon source/keypool.svg -o "$out/all" >/dev/null 2>&1
npx tauri icon source/keypool.svg -o "$out/linux" --png 256 >/dev/null 2>&1
cp "$out"/all/{32x32.png,128x128.png,icon.png,icon.icns,icon.ico} "$out/linux/256x256.png" .
