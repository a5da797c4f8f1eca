"""Baseline for bench/compaction.ts: pyarrow rewrites the same small files into one.

    python bench/baselines/compaction.py rewrite <files.txt> <out.parquet> <rows> <runs> [zstd level=1]

<files.txt> lists the input Parquet files, one path a line (the group's inputs, in the order
packice's plan reads them). Each run reads every file with pq.read_table, concatenates the
tables, and writes one file with pq.write_table: ZSTD at the level given (default 1, what parquet-wasm
writes; bench/rewrite-rate.ts passes the level packice writes the table at),
dictionary on, 1,048,576-row groups (packice's defaults), field ids kept. It does none of
what packice adds around the same work (applying deletes, the row-set proof that re-reads the
output, the compaction map, Iceberg metrics). All runs share one process; each run's file
replaces the last. Prints one JSON line: wall and CPU seconds per run, the process's peak RSS,
and the bytes read and written.
"""

import json
import os
import resource
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq


def rewrite(list_file: str, out: str, rows: int, runs: int, level: int = 1) -> None:
    with open(list_file, encoding="utf-8") as f:
        paths = [line.strip() for line in f if line.strip()]
    bytes_in = sum(os.path.getsize(p) for p in paths)
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        table = pa.concat_tables([pq.read_table(p) for p in paths])
        if table.num_rows != rows:
            raise SystemExit(f"read {table.num_rows} rows from {len(paths)} files, expected {rows}")
        pq.write_table(table, out, row_group_size=1_048_576, compression="zstd", compression_level=level, use_dictionary=True)
        del table
        c1, w1 = time.process_time(), time.perf_counter()
        wall.append(w1 - w0)
        cpu.append(c1 - c0)
    meta = pq.ParquetFile(out).metadata
    if meta.num_rows != rows:
        raise SystemExit(f"{out}: holds {meta.num_rows} rows, expected {rows}")
    info = {
        "version": pa.__version__,
        "files": len(paths),
        "bytesIn": bytes_in,
        "bytesOut": os.path.getsize(out),
        "rowGroups": meta.num_row_groups,
        "zstdLevel": level,
    }
    print(json.dumps({"wallS": wall, "cpuS": cpu, "maxRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "info": info}))


def main() -> None:
    phase, args = sys.argv[1], sys.argv[2:]
    if phase == "rewrite":
        rewrite(args[0], args[1], int(args[2]), int(args[3]), int(args[4]) if len(args) > 4 else 1)
    else:
        raise SystemExit(f"unknown phase {phase}")


if __name__ == "__main__":
    main()
