#!/usr/bin/env bash
# Builds and installs the taskhook binary (cargo install --path <this repo> --locked), says
# where it went and whether that folder is on your PATH, then runs `taskhook demo` when this
# version has it (else prints the next steps). It works from any folder and registers hooks
# in a project only when asked:
#
#   ./install.sh                      build + install the binary (cargo's progress is shown)
#   ./install.sh --dry-run            print what would be done; install nothing
#   ./install.sh --register [FLAGS]   also run `taskhook install FLAGS` in the folder you are in
#                                     (e.g. --register --user, --register --local)
#   ./install.sh --no-demo            skip the demo
#
# On x86_64 Linux with glibc the binary is linked statically (no dynamic loader at start: it
# runs on every tool call); TASKHOOK_STATIC=0 builds it dynamically linked, TASKHOOK_PIE=1
# keeps it position-independent. See the README, Performance.
set -euo pipefail

usage() { sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

dry_run=0
demo=1
register=0
install_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1 ;;
    --no-demo) demo=0 ;;
    --register) register=1; shift; install_args=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (see ./install.sh --help)" >&2; exit 1 ;;
  esac
  shift
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}"
bindir="$root/bin"
bin="$bindir/taskhook"

if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo not found; install the Rust toolchain first (https://rustup.rs)" >&2
  exit 1
fi

# The static build: crt-static for glibc (and libgcc's unwinder) linked in, and the
# relocation model that makes it a plain static executable (TASKHOOK_PIE=1: static-pie). It
# needs an explicit --target so that build scripts and proc macros still link as usual; the
# flags go through --config so they apply to that target only. A RUSTFLAGS of your own would
# override them, so then the build is left to it.
static_args=()
static_shown=""
host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p' || true)"
if [ "$host" = x86_64-unknown-linux-gnu ] && [ "${TASKHOOK_STATIC:-1}" != 0 ] && [ -z "${RUSTFLAGS:-}" ]; then
  flags='"-C", "target-feature=+crt-static"'
  case "${TASKHOOK_PIE:-}" in
    "" | 0) flags="$flags, \"-C\", \"relocation-model=static\"" ;;
  esac
  static_args=(--target "$host" --config "target.$host.rustflags = [$flags]")
  static_shown=" --target $host --config 'target.$host.rustflags = [$flags]'"
fi

if [ "$dry_run" = 1 ]; then
  echo "install.sh: dry run; nothing is built or installed."
  echo "Would run: cargo install --path $here --locked$static_shown"
  echo "Would install: $bin"
else
  echo "install.sh: building taskhook (a first build takes a few minutes)…"
  if [ ${#static_args[@]} -gt 0 ]; then
    if ! cargo install --path "$here" --locked "${static_args[@]}"; then
      echo "install.sh: the static build failed (above); building it dynamically linked instead" >&2
      cargo install --path "$here" --locked
    fi
  else
    cargo install --path "$here" --locked
  fi
  echo
  echo "Installed: $bin"
fi

case ":$PATH:" in
  *":$bindir:"*)
    on_path=1
    echo "$bindir is on your PATH."
    ;;
  *)
    on_path=0
    echo "$bindir is NOT on your PATH; Claude Code's plugin and your shell need it there. Add:"
    case "${SHELL:-}" in
      */fish) echo "  fish_add_path $bindir" ;;
      */zsh) echo "  echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.zshrc" ;;
      *) echo "  echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.bashrc" ;;
    esac
    ;;
esac
if [ "$on_path" = 1 ]; then
  found="$(command -v taskhook 2>/dev/null || true)"
  if [ -n "$found" ] && [ "$found" != "$bin" ]; then
    echo "Note: \`taskhook\` on your PATH is $found, which comes before $bin."
  fi
fi

if [ "$register" = 1 ]; then
  if [ "$dry_run" = 1 ]; then
    echo "Would run in $(pwd): taskhook install ${install_args[*]:-}"
  else
    "$bin" install "${install_args[@]}"
  fi
fi

next_steps() {
  echo
  echo "Next: register taskhook in a project, then start a new Claude Code session there:"
  echo "  cd my-project && taskhook install"
  echo "(or use the Claude Code plugin in this repository; see the README, Install.)"
}

if [ "$dry_run" = 1 ]; then
  if [ "$demo" = 1 ]; then
    echo "Would run: taskhook demo (when this version has it), else print the next steps"
  fi
  exit 0
fi
if [ "$demo" = 1 ] && "$bin" demo --help >/dev/null 2>&1; then
  "$bin" demo
else
  next_steps
fi
