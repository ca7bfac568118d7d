#!/usr/bin/env python3
"""Write a large mixed CSV for benches/compare/compare.sh (default ~1 GB), deterministic per seed.

Columns, chosen to exercise everything the profiler infers:
  id            integer, increasing
  customer_id   integer
  amount        float with nulls (empty and `NA`)
  quantity      integer with nulls (pandas Int64)
  category      one of 12 categories
  comment       free text with commas, doubled quotes and newlines inside quotes
  order_date    ISO date
  created_at    ISO datetime with `Z`
  email         email address
  uuid          UUID v4
  is_active     boolean with nulls
  zip           zero-padded 5-digit zip code (must stay a string)
  price         currency string (`$1,234.56`)

Usage: gen_csv.py OUT [--size-mb 1024] [--seed 42]
"""

import argparse
import datetime
import os
import random
import sys

CATEGORIES = [
    "books", "toys", "garden", "kitchen", "electronics", "sports",
    "music", "office", "beauty", "grocery", "automotive", "pets",
]
WORDS = (
    "the quick brown fox jumps over lazy dog order arrived late early damaged perfect "
    "great value would buy again refund please box size colour wrong right fast slow"
).split()
DOMAINS = ["example.com", "mail.example.org", "shop.example.net", "corp.example.io"]
EPOCH = datetime.datetime(2020, 1, 1)
BLOCK_ROWS = 20_000


def comment(rnd: random.Random) -> str:
    """Free text; a fifth of the values need quoting (comma, quote or newline inside)."""
    words = rnd.choices(WORDS, k=rnd.randint(2, 9))
    kind = rnd.randrange(20)
    if kind == 0:
        words.insert(1, "\"really\"")
    elif kind == 1:
        words.insert(2, "\n")
    elif kind in (2, 3):
        words[0] += ","
    text = " ".join(words)
    if kind <= 3:
        return '"' + text.replace('"', '""') + '"'
    return text


def row(rnd: random.Random, i: int) -> str:
    r = rnd.random()
    amount = "" if r < 0.03 else "NA" if r < 0.05 else f"{rnd.uniform(-50, 5000):.2f}"
    quantity = "" if rnd.random() < 0.04 else str(rnd.randint(1, 250))
    seconds = rnd.randrange(5 * 365 * 86400)
    created = EPOCH + datetime.timedelta(seconds=seconds)
    r = rnd.random()
    active = "" if r < 0.1 else "True" if r < 0.6 else "False"
    cents = rnd.randrange(1, 10_000_000)
    price = f"${cents // 100:,}.{cents % 100:02d}"
    if "," in price:
        price = f'"{price}"'
    h = f"{rnd.getrandbits(128):032x}"
    uuid = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"
    return ",".join((
        str(i),
        str(rnd.randint(1, 2_000_000)),
        amount,
        quantity,
        rnd.choice(CATEGORIES),
        comment(rnd),
        created.strftime("%Y-%m-%d"),
        created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        f"user{rnd.randrange(1_000_000)}@{rnd.choice(DOMAINS)}",
        uuid,
        active,
        f"{rnd.randrange(100_000):05d}",
        price,
    ))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="file to write (not inside the repository)")
    parser.add_argument("--size-mb", type=int, default=1024, help="approximate size in MiB")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    target = args.size_mb * 1024 * 1024
    rnd = random.Random(args.seed)
    header = ("id,customer_id,amount,quantity,category,comment,order_date,created_at,"
              "email,uuid,is_active,zip,price\n")
    written = 0
    rows = 0
    tmp = args.out + ".partial"
    with open(tmp, "w", encoding="utf-8", newline="") as out:
        out.write(header)
        written += len(header)
        while written < target:
            block = "\n".join(row(rnd, rows + k + 1) for k in range(BLOCK_ROWS)) + "\n"
            out.write(block)
            written += len(block.encode())
            rows += BLOCK_ROWS
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {rows} rows, {written / 2**20:.0f} MiB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
