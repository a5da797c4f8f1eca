"""What a reader pays per row group, for the chunk-copy floor (bench/chunk-copy.ts, BENCHMARKS.md).

    python bench/baselines/row_group_scan.py <out dir> <input.parquet>...

Reads the inputs into one table, writes it again (ZSTD level 1, dictionaries on, as packice
writes) with row groups of each size in ROWS, and reads each file back whole with
pq.read_table(use_threads=False), 9 times: prints, per row-group size, the compressed bytes per
row group, the file's bytes, and the median and the least read CPU-seconds (the least is the
steadier figure on a loaded machine). Deletes the
files it wrote.
"""

import json
import os
import statistics
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = [2_000, 16_000, 65_536, 131_072, 300_000, 1_048_576]


def main() -> None:
    out_dir, paths = sys.argv[1], sys.argv[2:]
    table = pa.concat_tables([pq.read_table(p) for p in paths])
    results = []
    for rows in ROWS:
        out = os.path.join(out_dir, f"rg-{rows}.parquet")
        pq.write_table(table, out, row_group_size=rows, compression="zstd", compression_level=1, use_dictionary=True)
        meta = pq.ParquetFile(out).metadata
        size = os.path.getsize(out)
        cpu = []
        for _ in range(9):
            c0 = time.process_time()
            n = pq.read_table(out, use_threads=False).num_rows
            cpu.append(time.process_time() - c0)
            assert n == table.num_rows
        med = statistics.median(cpu)
        results.append({
            "rowsPerGroup": rows,
            "rowGroups": meta.num_row_groups,
            "bytesPerGroup": round(sum(
                meta.row_group(i).column(j).total_compressed_size
                for i in range(meta.num_row_groups)
                for j in range(meta.num_columns)
            ) / meta.num_row_groups),
            "fileBytes": size,
            "cpuS": cpu,
            "medianCpuS": med,
            "minCpuS": min(cpu),
            "cpuSPerMillionRows": min(cpu) / table.num_rows * 1e6,
        })
        os.remove(out)
    print(json.dumps({"version": pa.__version__, "rows": table.num_rows, "results": results}))


if __name__ == "__main__":
    main()
