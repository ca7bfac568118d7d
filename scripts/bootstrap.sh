# Sourced by scripts/main and scripts/test: installs what this project needs on a fresh Debian
# machine, doing nothing (and needing no network) when everything is already there.
#   ensure_system_packages   apt packages (bubblewrap, python3-venv, ...) when a command is missing
#   ensure_rust              cargo on PATH, through rustup when absent
#   ensure_test_python       a venv at target/test-python with scripts/requirements-test.txt;
#                            exports AUTOCODER_TEST_PYTHON and puts its bin/ (uv) on PATH
#   ensure_flyte_python      a venv at target/flyte-python with scripts/requirements-flyte.txt
#                            (after ensure_test_python: built with its uv); exports
#                            AUTOCODER_FLYTE_PYTHON

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf '== %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else say "need root for: $*"; return 1
  fi
}

# Commands we need, and the Debian package that provides each.
SYSTEM_NEEDS=(
  "bwrap:bubblewrap"
  "python3:python3"
  "gcc:build-essential"
  "git:git"
  "curl:curl"
  "pkg-config:pkg-config"
  "debootstrap:debootstrap"  # the sandbox's Docker backend builds its base image with it
  "chromium:chromium"        # autocoder-report's tests load the HTML report in headless Chromium
)

ensure_system_packages() {
  local missing=() entry cmd pkg
  for entry in "${SYSTEM_NEEDS[@]}"; do
    cmd="${entry%%:*}"; pkg="${entry#*:}"
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  done
  # venv and ensurepip ship separately from python3 on Debian.
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv python3-pip)
  # The report's reference screenshot is drawn with DejaVu Sans.
  [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing system packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates "${missing[@]}" >/dev/null
  fi
}

ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    say "installing the Rust toolchain with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal \
      --component clippy,rustfmt
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
}

TEST_PYTHON_DIR="$ROOT/target/test-python"

ensure_test_python() {
  local req="$ROOT/scripts/requirements-test.txt" stamp="$TEST_PYTHON_DIR/.requirements"
  if [ ! -x "$TEST_PYTHON_DIR/bin/python" ]; then
    say "creating the test Python at $TEST_PYTHON_DIR"
    python3 -m venv "$TEST_PYTHON_DIR"
  fi
  if ! cmp -s "$req" "$stamp"; then
    say "installing test Python packages ($req)"
    "$TEST_PYTHON_DIR/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
    cp "$req" "$stamp"
  fi
  export AUTOCODER_TEST_PYTHON="$TEST_PYTHON_DIR/bin/python"
  export PATH="$TEST_PYTHON_DIR/bin:$PATH"
}

FLYTE_PYTHON_DIR="$ROOT/target/flyte-python"

ensure_flyte_python() {
  local req="$ROOT/scripts/requirements-flyte.txt" stamp="$FLYTE_PYTHON_DIR/.requirements"
  if ! cmp -s "$req" "$stamp"; then
    say "installing the Flyte SDK into $FLYTE_PYTHON_DIR ($req)"
    uv venv -q --allow-existing --python "$AUTOCODER_TEST_PYTHON" "$FLYTE_PYTHON_DIR"
    uv pip install -q --python "$FLYTE_PYTHON_DIR/bin/python" -r "$req"
    cp "$req" "$stamp"
  fi
  export AUTOCODER_FLYTE_PYTHON="$FLYTE_PYTHON_DIR/bin/python"
}
