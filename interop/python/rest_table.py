"""PyIceberg 0.12 on a table behind an Iceberg REST catalog, for packice's interop tests.

    rest_table.py write <name>     create the table and write the scenario below
    rest_table.py read <name>      print its live rows, one canonical JSON object per line
                                   (the encoding of read_table.py)

<name> is packice's REST table name: rest+http://host:port/<namespace>/<table>. Extra catalog
properties (FileIO settings for S3, say) come as a JSON object in PACKICE_REST_CATALOG_PROPERTIES.

The scenario (format v2, identity(category)): append ids 1-8 (a, b alternating), append 9-12 (c),
append 13-16 (a), delete ids 2 and 9, delete id 14 (PyIceberg deletes copy-on-write). Live: 1 3-8
10-13 15 16. `write` prints {"snapshots": N, "currentSnapshotId": "..."}.
"""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import urlsplit

import pyarrow as pa
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.expressions import EqualTo, In
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import IntegerType, LongType, NestedField, StringType

from read_table import print_rows

SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=True),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "value", LongType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"))
ARROW = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        pa.field("category", pa.string()),
        pa.field("value", pa.int64()),
    ]
)


def parse(name: str) -> tuple[Catalog, str, str]:
    if not name.startswith(("rest+http://", "rest+https://")):
        raise SystemExit(f"not a REST table name (rest+http://host:port/<namespace>/<table>): {name}")
    url = urlsplit(name[len("rest+") :])
    parts = url.path.strip("/").split("/")
    if len(parts) != 2 or not all(parts):
        raise SystemExit(f"REST table names are rest+http(s)://<host:port>/<namespace>/<table>: {name}")
    props = json.loads(os.environ.get("PACKICE_REST_CATALOG_PROPERTIES") or "{}")
    catalog = load_catalog("rest", **{"type": "rest", "uri": f"{url.scheme}://{url.netloc}", **props})
    return catalog, parts[0], parts[1]


def rows(ids: range, category: str | None = None) -> pa.Table:
    cats = [category or ("a" if i % 2 else "b") for i in ids]
    return pa.Table.from_pydict(
        {"id": list(ids), "category": cats, "value": [i * 1_000_000_007 for i in ids]}, schema=ARROW
    )


def write(name: str) -> None:
    catalog, namespace, table_name = parse(name)
    catalog.create_namespace_if_not_exists(namespace)
    table = catalog.create_table(
        f"{namespace}.{table_name}", schema=SCHEMA, partition_spec=SPEC, properties={"format-version": "2"}
    )
    table.append(rows(range(1, 9)))
    table.append(rows(range(9, 13), "c"))
    table.append(rows(range(13, 17), "a"))
    table.delete(In("id", [2, 9]))
    table.delete(EqualTo("id", 14))
    table = catalog.load_table(f"{namespace}.{table_name}")
    current = table.current_snapshot()
    print(
        json.dumps(
            {
                "snapshots": len(table.snapshots()),
                "currentSnapshotId": str(current.snapshot_id) if current else None,
            }
        )
    )


def read(name: str) -> None:
    catalog, namespace, table_name = parse(name)
    print_rows(catalog.load_table(f"{namespace}.{table_name}").scan())


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read"):
        print(__doc__, file=sys.stderr)
        return 2
    (write if sys.argv[1] == "write" else read)(sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    sys.exit(main())
