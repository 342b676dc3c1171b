#!/bin/bash
# How the files in this directory were made: on the GPU host (uv 0.11.15, CPython 3.12.3), against
# tests/integration/envbuild/index_server.py (plus HEAD, which uv sends) serving ./wheels on loopback.
# The locks name that server's port: 42577 for app/, appenv/ and the top-level files, 34809 for appconf/
# (a later run). test_uv_locks.py serves the same wheels and puts its own port in their place; nothing
# else in the files is changed. uv.lock and the pyproject.toml files are uv's inputs and its own lock.
set -x
cd "$(dirname "$0")"
export UV_CACHE_DIR=/tmp/uvc UV_NO_PROGRESS=1 UV_PYTHON=$(command -v python3)
uv --version
python3 index_server.py wheels > port.txt &
sleep 1; P=$(head -1 port.txt); IDX=http://127.0.0.1:$P/simple
for p in app appenv; do
 (cd $p && uv lock --default-index $IDX && uv export --format pylock.toml -o pylock.toml \
   && uv export --format pylock.toml --all-extras --all-groups -o pylock.all.toml \
   && uv export --format pylock.toml --extra cli --no-dev -o pylock.cli-nodev.toml \
   && uv export --format requirements-txt --all-extras -o requirements.txt)
done
(cd appconf && uv lock --default-index $IDX
 for v in "" "--extra cpu" "--extra cu --group new" "--no-default-groups"; do
   uv export --format pylock.toml $v -o pylock.x$(echo "$v" | tr ' ' '_' | tr -d '-').toml
 done)  # --all-extras / --all-groups: uv refuses them here (the declared conflicts)
uv pip compile req.in --generate-hashes --default-index $IDX -o req.hashes.txt
uv pip compile req.in --format pylock.toml --default-index $IDX -o pylock.compile.toml
uv pip compile req.in --format pylock.toml --generate-hashes --default-index $IDX -o pylock.compile-hashes.toml
uv pip compile req.in --universal --format pylock.toml --default-index $IDX -o pylock.universal.toml
uv pip compile req.in --format pylock.toml --find-links wheels --no-index -o pylock.findlinks.toml
uv pip compile req.in --generate-hashes --find-links wheels --no-index -o req.findlinks.txt
kill %1
