"""Writes the seed corpus of the `profile_formats` fuzz target: small real files (Parquet with
two codecs, Arrow IPC, JSON Lines, JSON, Excel), each behind its format's selector byte.

    python fuzz/scripts/profile_formats_seeds.py fuzz/corpus/profile_formats

Needs pyarrow and openpyxl (the test Python of scripts/bootstrap.sh has both)."""
import io
import json
import os
import sys

import openpyxl
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
table = pa.table({
    "id": pa.array([1, None, 3, 40], pa.int64()),
    "name": ["a", "bb", None, "dddd"],
    "price": [1.5, 2.25, None, -3.0],
    "ok": [True, False, None, True],
})
rows = [{"id": 1, "name": "a", "price": 1.5}, {"id": None, "name": "bb", "price": 2.25}]


def seed(name, selector, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([selector]) + data)


for codec in ("snappy", "zstd"):
    buf = io.BytesIO()
    pq.write_table(table, buf, compression=codec, row_group_size=2)
    seed(f"parquet_{codec}", 0, buf.getvalue())
buf = io.BytesIO()
feather.write_feather(table, buf, compression="uncompressed")
seed("arrow", 1, buf.getvalue())
seed("jsonl", 2, "".join(json.dumps(r) + "\n" for r in rows).encode())
seed("json", 3, json.dumps(rows).encode())
book = openpyxl.Workbook()
sheet = book.active
sheet.append(["id", "name", "price"])
for r in rows:
    sheet.append([r["id"], r["name"], r["price"]])
buf = io.BytesIO()
book.save(buf)
seed("xlsx", 4, buf.getvalue())
print(f"wrote 6 seeds to {out}")
