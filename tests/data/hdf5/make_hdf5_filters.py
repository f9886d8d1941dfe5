#!/usr/bin/env python3
"""Writes the HDF5 files of tests/test_hdf5.c that need filters beyond
deflate/shuffle/fletcher32, with the real writers, and
manifest_filters.json: what each must yield (dtype, shape, SHA-256 of the
canonical little-endian bytes as h5py/PyTables read them back).

  - h5py (Debian's python3-h5py 3.7 over HDF5 1.10, whose libhdf5 has szip
    through libaec): szip (nn and ec coding, little- and big-endian, 2-D and
    partial edge chunks), scale-offset on integers (signed, unsigned, with
    and without a fill value, user-given minimum bits, all values equal,
    big-endian) and floats (D-scale, float32 and float64), scale-offset then
    deflate.
  - PyTables (Debian's python3-tables 3.7, its own blosc filter id 32001):
    blosc with blosclz, lz4, zlib and zstd, with and without shuffle.
  - shared_chunks.h5: four chunk records pointing at the same stored
    chunk: must be refused (a chunk bomb), not decoded four times.
  - blosc_zeros.h5 (64 MiB of zeros in a few KB, 17000:1, read) and blosc_bomb.h5
    (17 GiB of zeros: refused, over 4096 x its stored bytes beyond 16 GiB).
  - huge_fill.h5: 1.4 KB declaring a 2^20 x 2^20 float32 chunked dataset
    with no chunk written (4 TiB of fill value): must be refused when its
    data is read, not streamed.

Run: /usr/bin/python3 make_hdf5_filters.py (in this folder). Inputs are
deterministic (seeded); CI needs neither h5py nor tables, only the
committed files."""
import hashlib, json
import numpy as np
from fixture_common import canon, NAMES
import h5py
import tables

out = []


def tensors_of(path):
    """Every numeric dataset as h5py reads it (the filters undone by libhdf5
    and, for blosc, by PyTables' registered filter)."""
    ts = []
    with tables.open_file(path, 'r') as tf:  # registers the blosc filter with libhdf5
        for node in tf.walk_nodes('/', 'Array'):
            a = node.read()
            ts.append({'name': node._v_pathname, 'dtype': NAMES[a.dtype.str[1:]],
                       'shape': list(a.shape), 'sha256': canon(a),
                       'filters': str(node.filters)})
    return sorted(ts, key=lambda t: t['name'])

def case(path, note):
    out.append({'path': path, 'format': 'hdf5', 'expect': 'ok', 'note': note,
                'tensors': tensors_of(path)})

rng = np.random.default_rng(13)

# ---- szip (h5py, libhdf5's szip = libaec)
with h5py.File('szip.h5', 'w') as f:
    f.create_dataset('nn_f32', data=rng.standard_normal((64, 50)).astype('<f4'),
                     chunks=(16, 25), compression='szip', compression_opts=('nn', 16))
    f.create_dataset('ec_i16', data=rng.integers(-3000, 3000, (1000,)).astype('<i2'),
                     chunks=(128,), compression='szip', compression_opts=('ec', 8))
    f.create_dataset('nn_u8', data=(np.arange(777) % 13).astype('u1'),
                     chunks=(100,), compression='szip', compression_opts=('nn', 32))
    f.create_dataset('be_f64', data=rng.standard_normal((33, 7)).astype('>f8'),
                     chunks=(10, 7), compression='szip')
    f.create_dataset('shuffle_szip_i32', data=rng.integers(0, 1 << 20, (40, 40)).astype('<i4'),
                     chunks=(8, 40), shuffle=True, compression='szip')
case('szip.h5', 'h5py szip (libaec): nn/ec, 8/16/32 pixels per block, big-endian f64, '
     'shuffle + szip, partial edge chunks')

# ---- scale-offset (h5py)
with h5py.File('scaleoffset.h5', 'w') as f:
    f.create_dataset('i32_auto', data=rng.integers(-500, 500, (30, 20)).astype('<i4'),
                     chunks=(7, 20), scaleoffset=0)
    f.create_dataset('u16_auto', data=rng.integers(1000, 1100, (500,)).astype('<u2'),
                     chunks=(64,), scaleoffset=0)
    f.create_dataset('i8_bits', data=rng.integers(-60, 60, (300,)).astype('i1'),
                     chunks=(50,), scaleoffset=7)
    f.create_dataset('i64_fill', data=rng.integers(-(1 << 40), 1 << 40, (200,)).astype('<i8'),
                     chunks=(64,), scaleoffset=0, fillvalue=-7)
    a = rng.integers(0, 50, (300,)).astype('<i4')
    a[::7] = 99  # the fill value: stored as the all-ones offset
    f.create_dataset('i32_fill_used', data=a, chunks=(64,), scaleoffset=0, fillvalue=99)
    f.create_dataset('u32_const', data=np.full((100,), 123456, '<u4'), chunks=(30,), scaleoffset=0)
    f.create_dataset('be_i32', data=rng.integers(-9000, 9000, (100,)).astype('>i4'),
                     chunks=(40,), scaleoffset=0)
    f.create_dataset('u32_full', data=rng.integers(0, 1 << 32, (100,), dtype=np.uint64).astype('<u4'),
                     chunks=(40,), scaleoffset=0)
    f.create_dataset('f32_d3', data=(rng.standard_normal((40, 30)) * 10).astype('<f4'),
                     chunks=(16, 16), scaleoffset=3)
    f.create_dataset('f64_d6', data=rng.standard_normal((500,)).astype('<f8'),
                     chunks=(100,), scaleoffset=6)
    f.create_dataset('f32_d2_fill', data=(rng.standard_normal((90,)) * 5).astype('<f4'),
                     chunks=(32,), scaleoffset=2, fillvalue=1.25)
    f.create_dataset('be_f32_d1', data=rng.standard_normal((64,)).astype('>f4'),
                     chunks=(20,), scaleoffset=1)
    f.create_dataset('i32_so_gzip', data=rng.integers(-100, 100, (400,)).astype('<i4'),
                     chunks=(100,), scaleoffset=0, compression='gzip')
    p = f.create_dataset('partial', shape=(100,), dtype='<i2', chunks=(32,), scaleoffset=0,
                         fillvalue=5)
    p[:40] = np.arange(40, dtype='<i2') * 3  # chunks 2 and 3 never written
case('scaleoffset.h5', 'h5py scale-offset: integers (auto and given minimum bits, fill value '
     'defined and used, constant, full precision, big-endian) and D-scaled floats (f32, f64, '
     'with a fill value, big-endian), scale-offset + deflate, unwritten chunks')

# ---- blosc (PyTables)
with tables.open_file('pytables_blosc.h5', 'w') as tf:
    x = rng.standard_normal((100, 64)).astype('<f4')
    for lib in ('blosc:blosclz', 'blosc:lz4', 'blosc:zlib', 'blosc:zstd'):
        tf.create_carray('/', lib.split(':')[1], obj=x, chunkshape=(25, 64),
                         filters=tables.Filters(complevel=5, complib=lib, shuffle=True))
    tf.create_carray('/', 'noshuffle_i64', obj=np.arange(5000, dtype='<i8') * 3,
                     chunkshape=(1000,),
                     filters=tables.Filters(complevel=9, complib='blosc', shuffle=False))
    tf.create_carray('/', 'bitshuffle_u16', obj=(np.arange(3001) % 97).astype('<u2'),
                     chunkshape=(512,),
                     filters=tables.Filters(complevel=4, complib='blosc:lz4', bitshuffle=True))
    tf.create_earray('/', 'earray_f64', obj=rng.standard_normal((37, 3)),
                     filters=tables.Filters(complevel=1, complib='blosc'))
case('pytables_blosc.h5', 'PyTables blosc (filter 32001): blosclz, lz4, zlib, zstd, '
     'byte shuffle, bit shuffle, no shuffle, an extendable array')

# ---- hostile: 4 TiB of fill value declared by 1.4 KB
with h5py.File('huge_fill.h5', 'w') as f:
    f.create_dataset('x', shape=(1 << 20, 1 << 20), dtype='<f4', chunks=(1024, 1024),
                     fillvalue=1.5)

# ---- hostile: every chunk record of a deflated dataset points at chunk 0's
# bytes (HDF5 never shares chunk storage): a small file standing for any
# number of decoded chunks. Made from an h5py file by rewriting the chunk
# addresses in its v1 B-tree node.
with h5py.File('shared_chunks.h5', 'w') as f:
    f.create_dataset('x', data=np.arange(4096, dtype='<f4'), chunks=(1024,), compression='gzip')
with h5py.File('shared_chunks.h5', 'r') as f:
    dsid = f['x'].id
    addrs = [dsid.get_chunk_info(i).byte_offset for i in range(dsid.get_num_chunks())]
raw = bytearray(open('shared_chunks.h5', 'rb').read())
for a in addrs[1:]:
    needle = a.to_bytes(8, 'little')
    assert raw.count(needle) == 1, 'chunk address not unique in the file'
    k = raw.index(needle)
    raw[k:k + 8] = addrs[0].to_bytes(8, 'little')
open('shared_chunks.h5', 'wb').write(bytes(raw))

# ---- blosc on zeros, as PyTables writes a large zero array: 64 MiB in
# about 5 KB (17000:1; 1.25 GiB in 94 KB alike) must read ...
with tables.open_file('blosc_zeros.h5', 'w') as tf:
    a = tf.create_carray('/', 'x', atom=tables.Int32Atom(), shape=(16 << 20,),
                         chunkshape=(1 << 20,),
                         filters=tables.Filters(complevel=9, complib='blosc:zstd'))
    z = np.zeros(1 << 20, '<i4')
    for i in range(16):
        a[i << 20:(i + 1) << 20] = z
case('blosc_zeros.h5', 'PyTables blosc:zstd, 64 MiB of zeros in a few KB (ratio ~17000:1)')

# ... but 17 GiB of zeros in 64 MiB blosc chunks (a few hundred KB) stands
# for more than 4096 x its stored bytes beyond 16 GiB: refused when read.
with tables.open_file('blosc_bomb.h5', 'w') as tf:
    a = tf.create_carray('/', 'x', atom=tables.Int32Atom(), shape=(272 << 24,),
                         chunkshape=(1 << 24,),
                         filters=tables.Filters(complevel=9, complib='blosc:zstd'))
    z = np.zeros(1 << 24, '<i4')
    for i in range(272):
        a[i << 24:(i + 1) << 24] = z

with open('manifest_filters.json', 'w') as fp:
    json.dump(out, fp, indent=1)
    fp.write('\n')

# ---- small seeds for fuzz/fuzz_hdf5.c (one small dataset per filter)
SEEDS = '../../../fuzz/seeds/hdf5/'
with h5py.File(SEEDS + 'filter_szip.h5', 'w') as f:
    f.create_dataset('s', data=np.arange(64, dtype='<i2'), chunks=(32,), compression='szip')
with h5py.File(SEEDS + 'filter_scaleoffset.h5', 'w') as f:
    f.create_dataset('i', data=np.arange(40, dtype='<i4') - 20, chunks=(16,), scaleoffset=0)
    f.create_dataset('f', data=np.linspace(-1, 1, 24).astype('<f4'), chunks=(16,), scaleoffset=2)
with tables.open_file(SEEDS + 'filter_blosc.h5', 'w') as tf:
    tf.create_carray('/', 'b', obj=np.arange(64, dtype='<f4'), chunkshape=(32,),
                     filters=tables.Filters(complevel=5, complib='blosc:lz4', shuffle=True))
