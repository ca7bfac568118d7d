#!/usr/bin/env python3
"""Write a seeded mixed Parquet file of about --size-mb MiB with pyarrow (snappy, row groups of
--row-group rows): the column kinds of gen_csv.py (ints, floats with nulls, categories, free
text, dates, UTC timestamps, emails, booleans with nulls, zero-padded zips) plus a struct and
a list column. The same arguments give the same file.

Usage: gen_parquet.py OUT --size-mb 1024 [--row-group 1000000] [--seed 7]
"""

import argparse
import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

WORDS = np.array("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
                 "omicron pi rho sigma tau upsilon phi chi psi omega".split())
CATEGORIES = np.array(["north", "south", "east", "west", "central", "online", "partner"])


def batch(rng: np.random.Generator, start: int, n: int) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    nulls = rng.random(n) < 0.05
    price = np.round(rng.lognormal(3.0, 1.0, n), 2)
    qty = rng.integers(-5, 1000, n)
    words = WORDS[rng.integers(0, len(WORDS), (n, 4))]
    text = np.char.add(np.char.add(words[:, 0], " "), np.char.add(words[:, 1], " "))
    text = np.char.add(text, words[:, 2])
    day0 = np.datetime64("2015-01-01")
    days = day0 + rng.integers(0, 3650, n).astype("timedelta64[D]")
    stamps = np.datetime64("2020-01-01T00:00:00", "us") + rng.integers(0, 10**14, n).astype("timedelta64[us]")
    user = rng.integers(0, 10**6, n)
    emails = np.char.add(np.char.add("user", user.astype(str)), "@example.com")
    zips = np.char.zfill(rng.integers(0, 99999, n).astype(str), 5)
    bools = rng.random(n) < 0.5
    tags_len = rng.integers(0, 4, n)
    offsets = np.concatenate([[0], np.cumsum(tags_len)]).astype(np.int32)
    tags_values = rng.integers(0, 100, int(offsets[-1]))
    return pa.table({
        "id": pa.array(ids),
        "qty": pa.array(qty, mask=nulls),
        "price": pa.array(price, mask=rng.random(n) < 0.03),
        "category": pa.array(CATEGORIES[rng.integers(0, len(CATEGORIES), n)]).dictionary_encode(),
        "note": pa.array(text),
        "day": pa.array(days, pa.date32()),
        "at": pa.array(stamps, pa.timestamp("us", tz="UTC")),
        "email": pa.array(emails),
        "ok": pa.array(bools, mask=rng.random(n) < 0.02),
        "zip": pa.array(zips),
        "amount": pa.array(np.round(price * 3, 2)),
        "customer": pa.StructArray.from_arrays(
            [pa.array(user), pa.array(CATEGORIES[user % len(CATEGORIES)])], names=["id", "tier"]),
        "tags": pa.ListArray.from_arrays(pa.array(offsets), pa.array(tags_values)),
    })


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--size-mb", type=int, default=1024)
    p.add_argument("--row-group", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    writer = None
    rows = 0
    tmp = a.out + ".part"
    try:
        while True:
            t = batch(rng, rows, a.row_group)
            if writer is None:
                writer = pq.ParquetWriter(tmp, t.schema, compression="snappy")
            writer.write_table(t, row_group_size=a.row_group)
            rows += t.num_rows
            if os.path.getsize(tmp) >= a.size_mb * 2**20:
                break
    finally:
        if writer is not None:
            writer.close()
    os.replace(tmp, a.out)
    print(f"{a.out}: {rows} rows, {os.path.getsize(a.out) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
