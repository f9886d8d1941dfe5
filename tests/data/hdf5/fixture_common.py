"""Shared by the HDF5 fixture generators: the canonical hash and dtype names
that tests/test_hdf5.c compares with."""
import hashlib
import numpy as np

def canon(a):
    """SHA-256 of the C-order little-endian bytes (mfmt's canonical form)."""
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == '>':
        a = a.astype(a.dtype.newbyteorder('<'))
    return hashlib.sha256(a.tobytes()).hexdigest()

NAMES = {'f2': 'F16', 'f4': 'F32', 'f8': 'F64', 'i1': 'I8', 'i2': 'I16', 'i4': 'I32',
         'i8': 'I64', 'u1': 'U8', 'u2': 'U16', 'u4': 'U32', 'u8': 'U64', 'b1': 'BOOL'}
