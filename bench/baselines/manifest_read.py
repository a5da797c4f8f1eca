"""Baseline for bench/manifest-read.ts: PyIceberg reads the same manifest file.

    python bench/baselines/manifest_read.py <manifest.avro> <entries> <runs> <snapshot-id>

Each run is ManifestFile.fetch_manifest_entry (PyIceberg's own manifest read: Avro decode
with its Cython decoder, live entries only, sequence-number and spec-id inheritance), the
call its scan planning makes per manifest. It returns a list, so every entry is held at
once. Prints one JSON line: wall and CPU seconds per run and the process's peak RSS.
"""

import json
import os
import resource
import sys
import time

import pyiceberg
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import ManifestContent, ManifestFile


def main() -> None:
    path, entries, runs, snapshot_id = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    manifest = ManifestFile.from_args(
        manifest_path=path,
        manifest_length=os.path.getsize(path),
        partition_spec_id=0,
        content=ManifestContent.DATA,
        sequence_number=1,
        min_sequence_number=1,
        added_snapshot_id=snapshot_id,
        added_files_count=entries,
        existing_files_count=0,
        deleted_files_count=0,
        added_rows_count=None,
        existing_rows_count=0,
        deleted_rows_count=0,
    )
    io = PyArrowFileIO()
    wall, cpu = [], []
    record_count_sum = 0
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        got = manifest.fetch_manifest_entry(io, discard_deleted=True)
        record_count_sum = sum(e.data_file.record_count for e in got)
        c1, w1 = time.process_time(), time.perf_counter()
        if len(got) != entries or got[-1].sequence_number != 1:
            raise SystemExit(f"{path}: read {len(got)} entries, expected {entries}")
        del got
        wall.append(w1 - w0)
        cpu.append(c1 - c0)
    print(
        json.dumps(
            {
                "wallS": wall,
                "cpuS": cpu,
                "maxRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "info": {"version": pyiceberg.__version__, "recordCountSum": str(record_count_sum)},
            }
        )
    )


if __name__ == "__main__":
    main()
