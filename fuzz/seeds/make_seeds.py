#!/usr/bin/env python3
"""Writes the committed seed corpus (deterministic; rerun to regenerate)."""
import os, struct, random

HERE = os.path.dirname(os.path.abspath(__file__))
HBM = 0x40_0000_0000
SBUF = 0x20_0000_0000

def out(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def desc(dtype, storage, shape, location=0, wide=False, buffer=None):
    elem = {2: 1, 3: 1, 4: 2, 6: 4, 7: 8, 8: 2, 10: 2, 12: 4}.get(dtype, 4)
    sh = b"".join(struct.pack("<I" if wide else "<H", s) for s in shape)
    sh = sh.ljust(16, b"\0")
    n = 1
    for s in shape:
        n *= s
    if buffer is None:
        buffer = n * elem
    return struct.pack("<BBBBB3xQ16sQQ", location, 0, dtype, len(shape), 1 if wide else 0, storage, sh, buffer, 0)

def block(args, output):
    kinds = bytes(k for k, _ in args).ljust(10, b"\0")
    n = 32 + 48 * (len(args) + 1)
    h = b"NCOP" + struct.pack("<HBB", 1, len(args), 0) + kinds + b"\0\0" + struct.pack("<I", n) + bytes(8)
    return h + b"".join(d for _, d in args) + output

T = HBM + (1 << 30)
# mode byte, script (3 bytes, nibbles), block
blocks = {
    "relu_fp32": block([(1, desc(12, T, [4, 16]))], desc(12, T + 0x10000, [4, 16])),
    "axpy": block([(1, desc(12, T, [100])), (1, desc(12, T + 0x1000, [100])), (4, desc(12, T + 0x2000, [1]))], desc(12, T + 0x3000, [100])),
    "all_kinds": block([(1, desc(6, T, [2, 3, 4])), (2, desc(10, T + 0x100, [1])), (3, desc(6, T + 0x200, [1])),
                        (4, desc(12, T + 0x300, [1])), (5, desc(7, T + 0x400, [1])), (6, desc(8, T + 0x500, [1]))],
                       desc(6, T + 0x1000, [2, 3, 4])),
    "wide_sbuf": block([(1, desc(2, 0x100, [70000, 2], location=1, wide=True)), (2, desc(3, 0x40, [1], location=1))], desc(2, 0x200000, [70000, 2], location=1, wide=True)),
    "ten_args": block([(1, desc(4, T + 0x100 * i, [8])) for i in range(10)], desc(4, T + 0x4000, [8])),
    "no_args": block([], desc(12, T, [1])),
    "sbuf_edge": block([(2, desc(12, (24 << 20) - 4, [1], location=1))], desc(12, T, [1])),
    "window_edge": block([(3, desc(6, T + (16 << 20) - 2, [1]))], desc(6, T, [1])),
}
scripts = [bytes([0x10, 0x32, 0x76]), bytes([0x00, 0x00, 0x86]), bytes([0x54, 0x32, 0x10]), bytes([0x66, 0x77, 0x88]), bytes([0x21, 0x43, 0x65])]
for name, b in blocks.items():
    for i, sc in enumerate(scripts):
        for mode in (0x80, 0x01, 0x02, 0x03) if i == 0 else (0x80 | i,):
            out("parse_invocation", f"{name}-{i}-{mode:02x}", bytes([mode]) + sc + b)

# heap_ops: byte 0 heap (0 HBM, 1 data RAM, 2 libc; | 0x80 small table)
rng = random.Random(6)
for heap in (0, 1, 2, 0x80, 0x81):
    for k in range(3):
        ops = bytearray([heap])
        for _ in range(60):
            op = rng.randrange(7) | (rng.randrange(2) << 3) | (rng.randrange(2) << 4)
            ops += bytes([op]) + bytes(rng.randrange(256) for _ in range(8))
        out("heap_ops", f"heap{heap:02x}-{k}", bytes(ops))
# alloc-until-full then free everything
for heap in (0, 1, 2):
    ops = bytearray([heap])
    for _ in range(40):
        ops += bytes([0]) + struct.pack("<H", 4000) + bytes([0])
    for _ in range(40):
        ops += bytes([2, 0])
    out("heap_ops", f"fill{heap}", bytes(ops))

# translate: (class byte, u64) steps
for k in range(8):
    s = bytearray()
    for _ in range(40):
        s += bytes([rng.randrange(10)]) + struct.pack("<Q", rng.getrandbits(64))
    out("translate", f"mixed-{k}", bytes(s))
s = bytearray()
for r in range(5):  # four regions round robin, then back
    s += bytes([9]) + struct.pack("<Q", r)
out("translate", "thrash", bytes(s))

# npy_read: .npy files as NumPy writes them, and the header forms it reads.
def npy(header, payload, version=(1, 0)):
    h = header.encode()
    pre = 10 if version[0] == 1 else 12
    h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
    size = struct.pack("<H", len(h)) if version[0] == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes(version) + size + h + payload
out("npy_read", "f32-2x3", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", struct.pack("<6f", 1, -2, 3.5, 0, 5, 6)))
out("npy_read", "i64-v2", npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", struct.pack("<2q", -1, 2**62), (2, 0)))
out("npy_read", "bf16-v3", npy('{"descr": "<u2", "fortran_order": False, "shape": (3,)}', bytes(6), (3, 0)))
out("npy_read", "u1-4d", npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 1, 2), }", bytes(range(4))))
out("npy_read", "fortran", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", bytes(8)))
out("npy_read", "dup-shape", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (1,)}", bytes(8)))

# scan_source: vendor-style sources (first byte: bit 0 defines FAST).
KERNELS = os.path.join(HERE, "..", "..", "customop", "tests", "kernels")
for k in ("relu2d", "scalar_args", "tensor_ops", "spellings"):
    d = os.path.join(KERNELS, k)
    text = b"".join(open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d)) if f.endswith(".cpp"))
    out("scan_source", k, b"\0" + text)
out("scan_source", "conditionals", b"\1\xef\xbb\xbf// caf\xe9\n#define T torch::Tensor\ntypedef torch::Tensor U;\n"
    b"#ifdef FAST\nT f(U a) { return a; }\n#else\nT f(U a, int64_t n) { return a; }\n#endif\n#if 0\nint f();\n#endif\n"
    b"torch::Tensor sh(torch::Tensor a) { return a; }\nNEURON_LIBRARY(l, m) { m.def(\"f\", &sh, \"f\"); }\n")

# schema_json: a customop.json as `customop build` writes it.
out("schema_json", "sim", b'''{
  "version": 2,
  "name": "affine",
  "libraries": ["affine_ops"],
  "target": "sim",
  "multicore": false,
  "ops": [{"name": "affine", "compute_fn": "affine", "shape_fn": "affine_shape",
           "params": [{"kind": "tensor", "cpp_type": "const torch::Tensor&"}, {"kind": "scalar", "cpp_type": "const torch::Scalar&"}],
           "declared_at": "shape.cpp:9"}],
  "library_file": "libaffine.so",
  "images": [],
  "library_size": 15669176,
  "library_hash": "fnv1a64:ebc97e68ab3eba95"
}
''')

# depfile_stamp: a g++ -MMD file, a stamp and a manifest.
out("depfile_stamp", "depfile", b"obj/.tmp-x.o: src/a.cpp \\\n include/torch/torch.h my\\ dir/x.h \\\r\n b.h\n")
out("depfile_stamp", "stamp", b"command 00000000deadbeef\noutput 0123456789abcdef\n00000000000000ff src/a.cpp\n0000000000000001 include/torch/torch.h\n")
out("depfile_stamp", "manifest", b"# Files `customop build` wrote\ncustomop.json\nlibk.so\n")
