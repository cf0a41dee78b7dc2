#!/usr/bin/env bash
# Keypool as people install it. Builds the bundles, extracts the .deb into a temporary directory
# (dpkg-deb -x: nothing is installed on this machine), checks the .deb and the .rpm
# (package.test.mjs), then runs every end-to-end test (tests/e2e/) against the binary that .deb
# holds: one build of the app serves both.
#
# `run.sh` (npm run test:bundle) builds the release bundles exactly as `npm run bundle` does: what
# ships. `run.sh debug` (npm test) builds the same bundles in the dev profile (`tauri build
# --debug`): the dependencies are the ones `cargo test --workspace` has just built, so it takes
# about 90 s on a 2-core machine where the release build takes 8–11 minutes, half of npm test's
# budget.
set -euo pipefail
cd "$(dirname "$0")/../.."
profile=${1:-release}
case $profile in
  release) build=(npx tauri build) ;;
  debug) build=(npx tauri build --debug) ;;
  *) echo "usage: $0 [release|debug]" >&2 && exit 2 ;;
esac

step() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  printf 'keypool: %s took %ss\n' "$name" $((SECONDS - started))
}

step "the $profile build and its bundles" "${build[@]}"

target=${CARGO_TARGET_DIR:-target}
version=$(node -p "require('./src-tauri/tauri.conf.json').version")
root=$(mktemp -d -t keypool-deb-XXXXXX)
trap 'rm -rf "$root"' EXIT
export KEYPOOL_BUNDLE_PROFILE=$profile
export KEYPOOL_BUNDLE_DIR="$target/$profile/bundle"
export KEYPOOL_DEB="$KEYPOOL_BUNDLE_DIR/deb/Keypool_${version}_$(dpkg --print-architecture).deb"
export KEYPOOL_DEB_ROOT="$root"
export KEYPOOL_APP_BINARY="$root/usr/bin/keypool"
dpkg-deb -x "$KEYPOOL_DEB" "$root"
echo "keypool: testing $KEYPOOL_DEB, extracted into $root"

step "the package checks" xvfb-run -a -s "-screen 0 1280x800x24" node --test tests/bundle/package.test.mjs
step "the end-to-end tests" bash tests/e2e/run.sh
