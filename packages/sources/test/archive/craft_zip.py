"""Builds the ZIP files the archive tests need, good and malicious, from JSON specs on stdin.

Python's zipfile is an independent ZIP writer, so the extractor is not only tested against
archives made by code that shares its assumptions. Byte-level patches (flags, sizes, extra
central-directory records) are applied afterwards to the finished file.

Spec: {
  "out": path,
  "prefix": n,              # n junk bytes before the archive, offsets adjusted (self-extractor style)
  "entries": [{"name", "data" | "zeros": n, "method": "stored"|"deflated"|"bzip2", "mode": st_mode}],
  "many": n,                # n empty stored files f/000000 … (zip64 end record when n > 65535)
  "patches": [{"op": "encrypt" | "shrink" | "set-uncompressed" | "duplicate" | "cover-rest" | "legacy-name", ...}],
  "naive_prefix": n         # n junk bytes prepended afterwards, offsets NOT adjusted
}
"""
import json
import struct
import sys
import warnings
import zipfile

DATE = (2024, 1, 1, 0, 0, 0)
METHODS = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED, "bzip2": zipfile.ZIP_BZIP2}


def build(spec):
    out = spec["out"]
    if spec.get("prefix"):  # appending to a non-zip file writes offsets that count the prefix
        open(out, "wb").write(b"\x7fELF".ljust(spec["prefix"], b"\0"))
    with zipfile.ZipFile(out, "a" if spec.get("prefix") else "w") as z:
        for e in spec.get("entries", []):
            info = zipfile.ZipInfo(e["name"], date_time=DATE)
            info.compress_type = METHODS[e.get("method", "stored")]
            info.create_system = 3
            info.external_attr = e.get("mode", 0o100644 if not e["name"].endswith("/") else 0o40755) << 16
            if "zeros" in e:
                info.file_size = e["zeros"]
                with z.open(info, "w") as w:
                    chunk = bytes(1 << 20)
                    left = e["zeros"]
                    while left > 0:
                        w.write(chunk[: min(left, len(chunk))])
                        left -= len(chunk)
            else:
                z.writestr(info, e.get("data", "").encode())
        for i in range(spec.get("many", 0)):
            z.writestr(zipfile.ZipInfo("f/%06d" % i, date_time=DATE), b"")


def patch(path, patches):
    data = bytearray(open(path, "rb").read())
    eocd = data.rindex(b"PK\x05\x06")
    count, cd_size, cd_offset = struct.unpack_from("<HII", data, eocd + 10)
    assert count != 0xFFFF, "patches need a small archive without zip64"
    records, pos = [], cd_offset
    for _ in range(count):
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        records.append(bytearray(data[pos : pos + 46 + n + m + k]))
        pos += 46 + n + m + k

    def local(i):
        return struct.unpack_from("<I", records[i], 42)[0]

    for p in patches:
        op, i = p["op"], p.get("index", 0)
        if op == "encrypt":  # general purpose bit 0, in the central and the local header
            records[i][8] |= 1
            data[local(i) + 6] |= 1
        elif op == "shrink":  # a stored entry whose sizes claim less than its data
            struct.pack_into("<II", records[i], 20, p["size"], p["size"])
            struct.pack_into("<II", data, local(i) + 18, p["size"], p["size"])
        elif op == "set-uncompressed":  # a deflated entry that inflates to more than it declares
            struct.pack_into("<I", records[i], 24, p["size"])
            struct.pack_into("<I", data, local(i) + 22, p["size"])
        elif op == "duplicate":  # a second central record for the same local header
            n, m, k = struct.unpack_from("<HHH", records[i], 28)
            name = p["name"].encode()
            copy = bytearray(records[i][:46]) + name + records[i][46 + n :]
            struct.pack_into("<H", copy, 28, len(name))
            records.append(copy)
        elif op == "legacy-name":  # no UTF-8 flag (as Info-ZIP's zip writes), the name's bytes optionally replaced
            n = struct.unpack_from("<H", records[i], 28)[0]
            name = bytes.fromhex(p["hex"]) if "hex" in p else bytes(records[i][46 : 46 + n])
            assert len(name) == n, "the replacement name must be as long as the name"
            struct.pack_into("<H", records[i], 8, struct.unpack_from("<H", records[i], 8)[0] & ~0x800)
            struct.pack_into("<H", data, local(i) + 6, struct.unpack_from("<H", data, local(i) + 6)[0] & ~0x800)
            records[i][46 : 46 + n] = name
            data[local(i) + 30 : local(i) + 30 + n] = name
        elif op == "cover-rest":  # stored entry i's data range swallows every later entry
            n, m = struct.unpack_from("<HH", data, local(i) + 26)
            size = cd_offset - (local(i) + 30 + n + m)
            struct.pack_into("<II", records[i], 20, size, size)
        else:
            raise ValueError(op)

    directory = b"".join(records)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(records), len(records), len(directory), cd_offset, 0)
    open(path, "wb").write(bytes(data[:cd_offset]) + directory + end)


def craft(spec):
    build(spec)
    if spec.get("patches"):
        patch(spec["out"], spec["patches"])
    if spec.get("naive_prefix"):
        body = open(spec["out"], "rb").read()
        open(spec["out"], "wb").write(b"junk" * (spec["naive_prefix"] // 4) + body)


def main():
    # One spec per stdin line, one answer line each: a test file starts python once, not per zip.
    warnings.simplefilter("ignore")  # zipfile warns about the duplicate names we write on purpose
    for line in sys.stdin:
        try:
            craft(json.loads(line))
            print("ok", flush=True)
        except Exception as error:  # reported to the test, which fails with it
            print("error: %r" % (error,), flush=True)


main()
