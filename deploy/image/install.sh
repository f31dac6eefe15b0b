#!/bin/sh
# The image's install steps, shared by the Dockerfile and integration/test_deploy.py (which runs
# them for real in a temporary venv), so what is tested is what the image does.
#
#   install.sh wheels SRC WHEELS    every pinned dependency (hash-checked, binary wheels only, no
#                                   compiler needed) and vscheduler itself, as wheels in WHEELS
#   install.sh install WHEELS VENV  a venv at VENV holding exactly those wheels (no index, hashes
#                                   checked again, no pip inside the venv, no caches), checked
#                                   with `pip check`
#
# PYTHON names the interpreter (default python3); its pip does the work.
set -eu
python=${PYTHON:-python3}
pip() { "$python" -m pip --no-cache-dir --disable-pip-version-check --no-input "$@"; }

case "${1:-}" in
wheels)
  src=$2 wheels=$3
  pip wheel --require-hashes --only-binary=:all: \
    --requirement "$src/deploy/image/requirements.txt" --wheel-dir "$wheels"
  pip wheel --no-deps --wheel-dir "$wheels" "$src"
  cp "$src/deploy/image/requirements.txt" "$wheels/requirements.txt"
  ;;
install)
  wheels=$2 venv=$3
  "$python" -m venv --without-pip "$venv"
  pip --python "$venv/bin/python" install --no-index --find-links "$wheels" --require-hashes \
    --requirement "$wheels/requirements.txt"
  pip --python "$venv/bin/python" install --no-index --find-links "$wheels" --no-deps vscheduler
  pip --python "$venv/bin/python" check
  ;;
*)
  echo "usage: install.sh wheels SRC WHEELS | install.sh install WHEELS VENV" >&2
  exit 2
  ;;
esac
