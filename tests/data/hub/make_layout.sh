#!/bin/sh
# Compares mfmt download with huggingface_hub's snapshot_download against the
# loopback Hub of tests/hub_server.py. Run from /work/oracles/hub2.
set -e
WT=${WT:-/work/wt-hub2}
rm -rf cacheA cacheB log ports
/usr/bin/python3 $WT/tests/hub_server.py --root tree --log log --lifetime 120 > ports &
SP=$!
sleep 2
read HUB CDN < ports
export HF_ENDPOINT=http://127.0.0.1:$HUB HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_DISABLE_XET=1 HF_TOKEN=
PYTHONPATH=$PWD/hfh /usr/bin/python3 -c "
import filelock
_FL = filelock.FileLock
class FL(_FL):  # Debian 12's filelock 3.9 has no mode argument (added in 3.10)
    def __init__(self, *a, mode=None, **k):
        super().__init__(*a, **k)
filelock.FileLock = FL
import huggingface_hub as h
import huggingface_hub.utils._fixes as fx
fx.FileLock = FL
print(h.snapshot_download('acme/dl', cache_dir='cacheA'))
"
$WT/build/mfmt download --cache-dir cacheB acme/dl
kill $SP
sh $WT/tests/hub_layout.sh cacheA > a.txt; sh $WT/tests/hub_layout.sh cacheB > b.txt
diff a.txt b.txt && echo "LAYOUT IDENTICAL"
# huggingface_hub, offline, on the cache mfmt filled
HF_HUB_OFFLINE=1 PYTHONPATH=$PWD/hfh /usr/bin/python3 -c "
import huggingface_hub as h
p = h.snapshot_download('acme/dl', cache_dir='cacheB', local_files_only=True)
print('offline snapshot_download on mfmt cache:', p)
print('hf_hub_download offline:', h.hf_hub_download('acme/dl', 'sub/tokenizer.json', cache_dir='cacheB', local_files_only=True))
info = h.scan_cache_dir('cacheB')
for r in info.repos:
    print('scan_cache_dir:', r.repo_id, r.size_on_disk, 'bytes', r.nb_files, 'files', [ (v.commit_hash[:8], sorted(v.refs)) for v in r.revisions], 'warnings', info.warnings)
"
