#!/bin/sh
# hub_layout.sh CACHE_DIR: the layout of a Hugging Face cache as sorted
# lines, for comparing mfmt download with huggingface_hub's
# snapshot_download (tests/data/hub/README.md): folders end in "/",
# symlinks show their target, files the first 16 hex digits of their
# SHA-256. Left out: .locks/ (lock files), trees/ (huggingface_hub's cache
# of the tree listing, which mfmt does not use) and CACHEDIR.TAG's content
# (each tool signs its own; its presence is listed).
set -e
cd "$1"
find . -path ./.locks -prune -o -path '*/trees' -prune -o -print | LC_ALL=C sort | while read -r p; do
    if [ -L "$p" ]; then
        echo "$p -> $(readlink "$p")"
    elif [ "$p" = ./CACHEDIR.TAG ]; then
        echo "$p"
    elif [ -f "$p" ]; then
        echo "$p $(sha256sum < "$p" | cut -c1-16)"
    else
        echo "$p/"
    fi
done
