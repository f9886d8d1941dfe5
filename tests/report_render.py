"""A page of `mfmt report` rendered by headless Chromium (Debian's chromium),
with the network cut off (every host name resolves to nothing), as a reader
opens it: the screenshot must not be blank (decoded here, PNG with zlib, no
imaging library: pixels other than the page's background, the blue of the
bars among them) and the browser's log must hold no console message (the
page has no script: any is an error) and no failed load.

    python3 tests/report_render.py CHROMIUM PAGE.html WORKDIR
Prints the time Chromium took and "RESULT report_render PASSED FAILED"."""
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

chrome, page, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3])
W, H = 1000, 1800
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what} {detail}")


def png_pixels(path):
    """(width, height, channels, rows of bytes): IDAT inflated, filters undone (PNG spec 9.2)."""
    b = Path(path).read_bytes()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    while pos < len(b):
        (n,), kind = struct.unpack(">I", b[pos:pos + 4]), b[pos + 4:pos + 8]
        data = b[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", data)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"PNG depth {depth} colour type {ctype} interlace {interlace}")
        elif kind == b"IDAT":
            idat += data
    raw = zlib.decompress(idat)
    bpp = 3 if ctype == 2 else 4
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + c) & 255 for a, c in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                c = prev[i - bpp] if i >= bpp else 0
                up = prev[i]
                p = a + up - c
                pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


work.mkdir(parents=True, exist_ok=True)
shot = work / "report.png"
t0 = time.monotonic()
run = subprocess.run([chrome, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                      f"--user-data-dir={work / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
                      "--enable-logging=stderr", "--v=0", f"--window-size={W},{H}",
                      f"--screenshot={shot}", page.as_uri()],
                     capture_output=True, text=True, timeout=120)
print(f"chromium: {time.monotonic() - t0:.1f} s")
log = run.stderr.splitlines()
check("chromium exit status", run.returncode == 0, f"{run.returncode}: {log[-3:]}")
console = [l for l in log if ":CONSOLE" in l or "net::ERR_" in l or "Failed to load" in l]
check("no console message or failed load", not console, "\n".join(console[:5]))
if shot.exists():
    w, h, bpp, rows = png_pixels(shot)
    check("screenshot size", (w, h) == (W, H), f"{w}x{h}")
    bg = bytes(rows[0][:3])
    other = blue = dark = 0
    for line in rows:
        for x in range(0, len(line), bpp):
            px = line[x:x + 3]
            if px != bg:
                other += 1
                if abs(px[0] - 0x4e) <= 3 and abs(px[1] - 0x79) <= 3 and abs(px[2] - 0xa7) <= 3:
                    blue += 1
                elif max(px) < 80:
                    dark += 1
    print(f"screenshot: {w}x{h}, background {bg.hex()}, {other} other pixels, {blue} bar blue, {dark} dark")
    check("not blank", other > 0.02 * w * h, f"{other} of {w * h} pixels differ from the background")
    check("the bars are drawn", blue > 2000, f"{blue} pixels of the bars' blue")
    check("the text is drawn", dark > 2000, f"{dark} dark pixels")
else:
    check("screenshot written", False)
print(f"RESULT report_render {passed} {failed}")
sys.exit(1 if failed else 0)
