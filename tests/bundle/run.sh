#!/usr/bin/env bash
# Keypool as people install it. Builds the release bundles exactly as `npm run bundle` does,
# extracts the .deb into a temporary directory (dpkg-deb -x: nothing is installed on this
# machine), checks the .deb and the .rpm (package.test.mjs), then runs every end-to-end test
# (tests/e2e/) against the binary that .deb holds. npm test runs this rather than a separate debug
# build for the end-to-end tests: one build of the app, the one that ships.
set -euo pipefail
cd "$(dirname "$0")/../.."

step() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  printf 'keypool: %s took %ss\n' "$name" $((SECONDS - started))
}

step "the release build and its bundles" npx tauri build

target=${CARGO_TARGET_DIR:-target}
version=$(node -p "require('./src-tauri/tauri.conf.json').version")
root=$(mktemp -d -t keypool-deb-XXXXXX)
trap 'rm -rf "$root"' EXIT
export KEYPOOL_BUNDLE_DIR="$target/release/bundle"
export KEYPOOL_DEB="$KEYPOOL_BUNDLE_DIR/deb/Keypool_${version}_$(dpkg --print-architecture).deb"
export KEYPOOL_DEB_ROOT="$root"
export KEYPOOL_APP_BINARY="$root/usr/bin/keypool"
dpkg-deb -x "$KEYPOOL_DEB" "$root"
echo "keypool: testing $KEYPOOL_DEB, extracted into $root"

step "the package checks" xvfb-run -a -s "-screen 0 1280x800x24" node --test tests/bundle/package.test.mjs
step "the end-to-end tests" bash tests/e2e/run.sh
