"""Baseline for bench/parquet.ts: pyarrow writes the same rows and reads the same file.

    python bench/baselines/parquet.py write        <out.parquet> <rows> <row-group-rows> <dictionary:on|off> <runs>
    python bench/baselines/parquet.py read_table   <file.parquet> <rows> <threads:on|off> <runs>
    python bench/baselines/parquet.py iter_batches <file.parquet> <rows> <batch-rows> <runs>
    python bench/baselines/parquet.py verify       <file.parquet> <rows>

One phase per process, so each peak RSS is that phase's alone. `write` builds the rows in
memory first (untimed), with the values bench/parquet.ts builds, then times pq.write_table
(ZSTD level 1, the writer settings packice uses). `verify` checks that a file holds exactly
those rows, so both implementations are known to work on identical data. Timed phases print
one JSON line: wall and CPU seconds per run and the process's peak RSS.
"""

import json
import os
import resource
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def field(name: str, field_id: int, type_: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={b"PARQUET:field_id": str(field_id).encode()})


SCHEMA = pa.schema(
    [
        field("id", 1, pa.int64(), nullable=False),
        field("qty", 2, pa.int32()),
        field("price", 3, pa.float64()),
        field("name", 4, pa.string()),
        field("at", 5, pa.timestamp("us", tz="UTC")),
        field("amount", 6, pa.decimal128(18, 2)),
    ]
)


def _mod(x: pa.Array, m: int) -> pa.Array:
    # Integer `divide` truncates; the values are never negative.
    return pc.subtract(x, pc.multiply(pc.divide(x, m), m))


def generate(rows: int) -> pa.Table:
    """Row i as bench/parquet.ts's makeBatch builds it: h = Math.imul(i, 2654435761) >>> 0."""
    i = pa.array(range(rows), pa.int64())
    h = pc.bit_wise_and(pc.multiply(i, 2654435761), 0xFFFFFFFF)
    qty = pc.cast(_mod(h, 1000), pa.int32())
    price = pc.divide(pc.cast(_mod(h, 1_000_000), pa.float64()), 100.0)
    name = pc.binary_join_element_wise("customer-", pc.cast(_mod(h, 50_000), pa.string()), "")
    at = pc.cast(pc.add(pc.multiply(i, 1_000_000), 1_700_000_000_000_000), pa.timestamp("us", tz="UTC"))
    # decimal(18,2) with unscaled value h % 10^7: 16-byte little-endian words, high half zero.
    unscaled = _mod(h, 10_000_000)
    words = bytearray(16 * rows)
    memoryview(words).cast("q")[0::2] = memoryview(unscaled.buffers()[1]).cast("q")[unscaled.offset : unscaled.offset + rows]
    amount = pa.Array.from_buffers(pa.decimal128(18, 2), rows, [None, pa.py_buffer(words)])
    return pa.Table.from_arrays([i, qty, price, name, at, amount], schema=SCHEMA)


def report(wall: list[float], cpu: list[float], **info: object) -> None:
    info["version"] = pa.__version__
    print(json.dumps({"wallS": wall, "cpuS": cpu, "maxRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "info": info}))


def timed(runs: int, body) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        body()
        c1, w1 = time.process_time(), time.perf_counter()
        wall.append(w1 - w0)
        cpu.append(c1 - c0)
    return wall, cpu


def write(out: str, rows: int, row_group_rows: int, dictionary: bool, runs: int) -> None:
    table = generate(rows)

    def body() -> None:
        pq.write_table(
            table,
            out,
            row_group_size=row_group_rows,
            compression="zstd",
            compression_level=1,
            use_dictionary=dictionary,
            store_decimal_as_integer=True,  # INT64 for precision <= 18, as parquet-rs and Java write it
        )

    wall, cpu = timed(runs, body)
    meta = pq.ParquetFile(out).metadata
    report(wall, cpu, fileSize=os.path.getsize(out), rowGroups=meta.num_row_groups)


def read_table(path: str, rows: int, threads: bool, runs: int) -> None:
    def body() -> None:
        n = pq.read_table(path, use_threads=threads).num_rows
        if n != rows:
            raise SystemExit(f"{path}: read {n} rows, expected {rows}")

    report(*timed(runs, body), threads=threads)


def iter_batches(path: str, rows: int, batch_rows: int, runs: int) -> None:
    def body() -> None:
        n = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows):
            n += batch.num_rows
        if n != rows:
            raise SystemExit(f"{path}: read {n} rows, expected {rows}")

    report(*timed(runs, body))


def verify(path: str, rows: int) -> None:
    expected = generate(rows)
    got = pq.read_table(path)
    if got.schema.names != SCHEMA.names or not got.cast(SCHEMA).equals(expected):
        for name in SCHEMA.names:
            if not got.column(name).cast(SCHEMA.field(name).type).equals(expected.column(name)):
                raise SystemExit(f"{path}: column {name} differs from the generated rows ({got.schema.field(name).type})")
        raise SystemExit(f"{path}: schema {got.schema} differs from {SCHEMA}")
    print(json.dumps({"verified": path, "rows": got.num_rows}))


def main() -> None:
    phase, args = sys.argv[1], sys.argv[2:]
    if phase == "write":
        write(args[0], int(args[1]), int(args[2]), args[3] == "on", int(args[4]))
    elif phase == "read_table":
        read_table(args[0], int(args[1]), args[2] == "on", int(args[3]))
    elif phase == "iter_batches":
        iter_batches(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif phase == "verify":
        verify(args[0], int(args[1]))
    else:
        raise SystemExit(f"unknown phase {phase}")


if __name__ == "__main__":
    main()
