#!/usr/bin/env bash
# Builds and installs taskhook (cargo install --path . --locked), then registers its hooks in
# the .claude/settings.json of the project you run it from. Flags go to `taskhook install`:
#   ./install.sh              register for this project
#   ./install.sh --user       register in ~/.claude/settings.json instead
#   ./install.sh --uninstall  remove the registrations again
#   ./install.sh --dry-run    show what would be written
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo not found; install the Rust toolchain first (https://rustup.rs)" >&2
  exit 1
fi
cargo install --path "$here" --locked --quiet
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/taskhook"
"$bin" install "$@"
