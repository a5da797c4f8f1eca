"""Parquet files as other writers lay them out, for the row-group merge tests (test/parquet/row-group-merge.test.ts).

  python parquet_variants.py write <dir> <variant> <files> <rows>   # writes <dir>/<variant>-<i>.parquet
  python parquet_variants.py compare <merged> <source>...          # prints {"equal": bool, "rows": n}
  python parquet_variants.py compare-deleted <merged> <deleted.json> <source>...
      # the same, each source less the rows at its positions in deleted.json (one list per source)
  python parquet_variants.py check-stats <merged>                  # prints the chunk statistics that are not the data's

pyarrow writes every column with a dictionary until it passes its size limit; the variants differ in
data page version, codec, dictionary use and row-group size. Columns carry Iceberg field ids.
"""
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

VARIANTS = {
    # name: (data_page_version, compression, use_dictionary, row_group_size)
    "v1-zstd-dict": ("1.0", "zstd", True, None),
    "v2-gzip-dict": ("2.0", "gzip", True, None),
    "v1-snappy-dict": ("1.0", "snappy", True, None),
    "v2-none-plain": ("2.0", "none", False, None),
    "v1-zstd-plain": ("1.0", "zstd", False, None),
    "v1-zstd-small-groups": ("1.0", "zstd", True, 300),
}
# The same layouts without the boolean and list columns: what deleted rows can be dropped from page by page.
FLAT = ("flag", "tags")


def field(name, type_, fid, nullable=True):
    return pa.field(name, type_, nullable=nullable, metadata={b"PARQUET:field_id": str(fid).encode()})


SCHEMA = pa.schema([
    field("id", pa.int64(), 1, nullable=False),
    field("category", pa.string(), 2),
    field("amount", pa.decimal128(10, 2), 3),
    field("score", pa.float64(), 4),
    field("flag", pa.bool_(), 5),
    pa.field("tags", pa.list_(field("element", pa.string(), 7)), metadata={b"PARQUET:field_id": b"6"}),
    field("note", pa.string(), 8),
    field("day", pa.date32(), 9),
])


def rows(start, n):
    import datetime
    from decimal import Decimal
    ids = list(range(start, start + n))
    return pa.table({
        "id": ids,
        "category": [None if i % 11 == 0 else f"cat-{i % 5}" for i in ids],
        "amount": [None if i % 13 == 0 else Decimal(i * 37 % 100000) / 100 for i in ids],
        "score": [None if i % 7 == 0 else (i % 97) * 1.5 for i in ids],
        "flag": [None if i % 3 == 0 else i % 2 == 0 for i in ids],
        "tags": [None if i % 4 == 0 else [f"t{i % 3}", f"tag {i}"][: 1 + i % 2] for i in ids],
        "note": [None if i % 9 == 0 else f"note {i} {'x' * (i % 20)}" for i in ids],
        "day": [datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 40) for i in ids],
    }, schema=SCHEMA)


def special(directory, variant, files, n):
    """Variants of their own layout: `zeros` (a double column whose only zero is row 0, and its
    negative), `delta` (the first file DELTA_BINARY_PACKED ids and DELTA_BYTE_ARRAY strings, no dictionary)."""
    schema = pa.schema([field("id", pa.int64(), 1, nullable=False)] + (
        [field("pos", pa.float64(), 2), field("neg", pa.float64(), 3)] if variant == "zeros" else [field("v", pa.string(), 2)]))
    for f in range(files):
        ids = list(range(f * n, (f + 1) * n))
        if variant == "zeros":
            t = pa.table({"id": ids, "pos": [float(i - f * n) for i in ids], "neg": [-float(i - f * n) for i in ids]}, schema=schema)
            pq.write_table(t, f"{directory}/{variant}-{f}.parquet", compression="zstd")
        else:
            t = pa.table({"id": ids, "v": [f"value {i}" for i in ids]}, schema=schema)
            # The first file DELTA-encoded, the others as pyarrow does by default (dictionaries).
            delta = {"use_dictionary": False, "column_encoding": {"id": "DELTA_BINARY_PACKED", "v": "DELTA_BYTE_ARRAY"}} if f == 0 else {}
            pq.write_table(t, f"{directory}/{variant}-{f}.parquet", compression="zstd", **delta)


def write(directory, variant, files, n):
    if variant in ("zeros", "delta"):
        return special(directory, variant, files, n)
    flat = variant.startswith("flat-")
    version, compression, dictionary, group = VARIANTS[variant[5:] if flat else variant]
    for f in range(files):
        t = rows(f * n, n)
        if flat:
            t = t.drop_columns(list(FLAT))
        pq.write_table(
            t, f"{directory}/{variant}-{f}.parquet", data_page_version=version, compression=compression,
            use_dictionary=dictionary, row_group_size=group, write_statistics=True,
            # Small pages, as a streaming writer's small files hold.
            data_page_size=4096,
        )


def compare(merged, sources):
    want = pa.concat_tables([pq.read_table(s) for s in sources])
    got = pq.read_table(merged)
    print(json.dumps({"equal": got.equals(want), "rows": got.num_rows, "want": want.num_rows}))


def compare_deleted(merged, deleted_json, sources):
    import pyarrow.compute as pc
    with open(deleted_json) as f:
        deleted = json.load(f)
    parts = []
    for s, gone in zip(sources, deleted):
        t = pq.read_table(s)
        keep = [True] * t.num_rows
        for p in gone:
            keep[p] = False
        parts.append(t.filter(pa.array(keep)))
    want = pa.concat_tables(parts)
    got = pq.read_table(merged)
    print(json.dumps({"equal": got.equals(want), "rows": got.num_rows, "want": want.num_rows}))


def check_stats(merged):
    """Null counts and min/max of each chunk against its data (NaN in no bound; -0.0 and 0.0 equal)."""
    import math
    f = pq.ParquetFile(merged)
    bad = []
    for r in range(f.metadata.num_row_groups):
        t = f.read_row_group(r)
        rg = f.metadata.row_group(r)
        for c in range(rg.num_columns):
            meta = rg.column(c)
            st = meta.statistics
            if st is None:
                continue
            path = meta.path_in_schema.split(".")
            col = t.column(path[0])
            values = col.to_pylist()
            for name in path[1:]:
                values = [None if v is None else v.get(name) for v in values]
            nulls = sum(1 for v in values if v is None)
            if st.has_null_count and st.null_count != nulls:
                bad.append(f"row group {r} {meta.path_in_schema}: null count {st.null_count}, data {nulls}")
            live = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
            if st.has_min_max:
                if not live:
                    bad.append(f"row group {r} {meta.path_in_schema}: bounds without values")
                elif st.min != min(live) or st.max != max(live):
                    bad.append(f"row group {r} {meta.path_in_schema}: bounds {st.min!r}..{st.max!r}, data {min(live)!r}..{max(live)!r}")
    print(json.dumps(bad))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "compare-deleted":
        compare_deleted(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "check-stats":
        check_stats(sys.argv[2])
    else:
        raise SystemExit(f"unknown command {sys.argv[1]}")
