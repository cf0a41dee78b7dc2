# Sourced: installs the coding-agent CLIs, pinned, each into a cache folder of its own (never
# into the app's node_modules, which `npm start` installs): $KEYPOOL_AGENTS_CACHE, by default
# ~/.cache/keypool-agents/<package>@<version>; exports KEYPOOL_CODEX, KEYPOOL_CLAUDE and
# KEYPOOL_GEMINI, the programs' paths.
cache=${KEYPOOL_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/keypool-agents}
# Installs $1@$2 (no install scripts: none of the three needs one to run) unless its program
# $3, a path under node_modules, is there; prints that program's path.
install_agent() {
  local package=$1 version=$2 dir="$cache/$1@$2"
  if [ ! -x "$dir/node_modules/$3" ]; then
    echo "keypool: installing $package@$version into $dir" >&2
    mkdir -p "$dir"
    npm install --no-audit --no-fund --no-save --ignore-scripts --prefix "$dir" "$package@$version" >/dev/null
  fi
  echo "$dir/node_modules/$3"
}
KEYPOOL_CODEX=$(install_agent @openai/codex 0.169.0 .bin/codex)
# Claude Code's npm package holds its native program in a package per platform (about 370 MB);
# its postinstall only links it, so the test runs it where it lies.
case "$(uname -m)" in aarch64 | arm64) arch=arm64 ;; *) arch=x64 ;; esac
KEYPOOL_CLAUDE=$(install_agent @anthropic-ai/claude-code 2.1.328 "@anthropic-ai/claude-code-linux-$arch/claude")
KEYPOOL_GEMINI=$(install_agent @google/gemini-cli 0.61.0 .bin/gemini)
export KEYPOOL_CODEX KEYPOOL_CLAUDE KEYPOOL_GEMINI
