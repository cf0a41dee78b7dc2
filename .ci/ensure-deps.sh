#!/usr/bin/env bash
# Installs what Keypool needs to build, run and test it, and only what is missing:
# Debian/Ubuntu system packages (when dpkg says they are absent), npm packages (when
# node_modules is missing or older than the lockfile). Cargo fetches crates on its own.
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM_PACKAGES=(
  libwebkit2gtk-4.1-dev build-essential curl wget file libxdo-dev libssl-dev
  libayatana-appindicator3-dev librsvg2-dev xvfb xauth webkit2gtk-driver xdotool imagemagick
  # The UI speaks Chinese and Japanese too; without these fonts they render as empty boxes.
  fonts-noto-cjk
  # API keys live in the Secret Service; the keychain tests run a real one in a D-Bus session.
  gnome-keyring libsecret-tools dbus dbus-x11
  # python3 plays the window manager's part under Xvfb in the desktop tests (tests/e2e/x11.py).
  python3
  # The release bundles' tests: rpm reads the .rpm, desktop-file-validate checks the desktop entry.
  rpm desktop-file-utils
  # npm run bench:local-api: nginx is the upstream and the reference proxy, wrk the load.
  nginx-light wrk
  # The team pool's tests start a redis-server of their own (never a system service).
  redis-server
  # keypool-server's /metrics is scraped by a Prometheus the test starts (its own port and data
  # folder, never the system service), and checked with promtool.
  prometheus
  # The app's desktop notifications reach a real notification server (dunst, on a private
  # session bus under Xvfb) in the end-to-end tests.
  dunst
  # keypool-server's team ledger: its tests run a postgres of their own (initdb into a temporary
  # directory, its own port; never the system service).
  postgresql
  # keypool-server's deploy files: its systemd unit is checked by systemd-analyze, its image
  # built and run by podman (runc where crun cannot run: cgroup v1 or hybrid), its Kubernetes
  # and compose YAML read with PyYAML.
  systemd podman runc python3-yaml
)

missing=()
for package in "${SYSTEM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "keypool: installing system packages: ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "keypool: a Rust toolchain is required (cargo was not found on PATH); install it with rustup" >&2
  exit 1
fi
# npm test checks formatting and lints; both come with a default rustup toolchain.
for tool in rustfmt clippy-driver; do
  if ! command -v "$tool" >/dev/null 2>&1 && ! rustup which "$tool" >/dev/null 2>&1; then
    echo "keypool: $tool is missing; trying: rustup component add ${tool%-driver}"
    rustup component add "${tool%-driver}" || { echo "keypool: install $tool (rustup component add ${tool%-driver})" >&2; exit 1; }
  fi
done

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "keypool: installing npm packages"
  npm ci --no-audit --no-fund
fi
