"""PyIceberg as a reference reader for packice's interop tests.

    read_table.py <metadata.json path> [--snapshot ID]

Opens the table with StaticTable.from_metadata, scans it (deletes applied by PyIceberg) and prints
every live row as one JSON object per line, in the canonical encoding packice's `scan` and the Java
harness (interop/java) print:

  int -> number; long -> number if |v| <= 2^53 else string; float/double -> number, NaN and
  infinities as "NaN", "Infinity", "-Infinity"; decimal -> plain string; string; boolean;
  date -> "YYYY-MM-DD"; time -> "HH:MM:SS.ffffff"; timestamp -> "YYYY-MM-DDTHH:MM:SS.ffffff"
  (tz: same in UTC + "Z"; _ns: 9 fractional digits); uuid -> string; binary/fixed -> lowercase hex;
  struct -> object; list -> array; map -> array of [key, value]; null -> null.

Only rows go to stdout; warnings and errors go to stderr.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
from pyiceberg.table import DataScan, StaticTable
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

try:  # v3 nanosecond timestamps (newer PyIceberg)
    from pyiceberg.types import TimestampNanoType, TimestamptzNanoType
except ImportError:  # pragma: no cover
    TimestampNanoType = TimestamptzNanoType = ()  # type: ignore[assignment,misc]

MAX_SAFE_INTEGER = 2**53
EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
DAY_MICROS = 86_400_000_000


def fmt_date(days: int) -> str:
    d = dt.date.fromordinal(EPOCH_ORDINAL + days)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def fmt_time(micros: int, digits: int = 6) -> str:
    unit = 10**digits
    seconds, frac = divmod(micros, unit)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h:02d}:{m:02d}:{s:02d}.{frac:0{digits}d}"


def fmt_timestamp(value: int, per_second: int, digits: int, utc: bool) -> str:
    per_day = 86_400 * per_second
    days, in_day = divmod(value, per_day)
    return f"{fmt_date(days)}T{fmt_time(in_day, digits)}{'Z' if utc else ''}"


def epoch_units(value: Any, per_second: int) -> int:
    """A timestamp as an integer count since the epoch, from an int or a datetime-like value."""
    if isinstance(value, int):
        return value
    if per_second == 10**9 and isinstance(getattr(value, "value", None), int):
        return value.value  # pandas.Timestamp: nanoseconds since the epoch
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    delta = value - dt.datetime(1970, 1, 1)
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros * (per_second // 1_000_000)


def fmt_float(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def encode(value: Any, typ: IcebergType) -> Any:
    if value is None:
        return None
    if isinstance(typ, (BooleanType, IntegerType, StringType)):
        return value
    if isinstance(typ, LongType):
        return value if abs(value) <= MAX_SAFE_INTEGER else str(value)
    if isinstance(typ, (FloatType, DoubleType)):
        return fmt_float(float(value))
    if isinstance(typ, DecimalType):
        return format(Decimal(value), "f")
    if isinstance(typ, UUIDType):
        return str(value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value)))
    if isinstance(typ, DateType):
        return fmt_date(value if isinstance(value, int) else value.toordinal() - EPOCH_ORDINAL)
    if isinstance(typ, TimeType):
        if isinstance(value, int):
            return fmt_time(value)
        return fmt_time(((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond)
    if isinstance(typ, (TimestampType, TimestamptzType)):
        return fmt_timestamp(epoch_units(value, 10**6), 10**6, 6, isinstance(typ, TimestamptzType))
    if TimestampNanoType and isinstance(typ, (TimestampNanoType, TimestamptzNanoType)):
        return fmt_timestamp(epoch_units(value, 10**9), 10**9, 9, isinstance(typ, TimestamptzNanoType))
    if isinstance(typ, (BinaryType, FixedType)):
        return bytes(value).hex()
    if isinstance(typ, StructType):
        return {f.name: encode(value.get(f.name), f.field_type) for f in typ.fields}
    if isinstance(typ, ListType):
        return [encode(v, typ.element_type) for v in value]
    if isinstance(typ, MapType):
        items = value.items() if isinstance(value, dict) else value
        return [[encode(k, typ.key_type), encode(v, typ.value_type)] for k, v in items]
    raise TypeError(f"no canonical JSON encoding for Iceberg type {typ}")


def column_values(column: pa.ChunkedArray, typ: IcebergType) -> list[Any]:
    """Python values of a top-level column. Temporal columns come out as epoch integers, which is
    exact for every value (datetime cannot hold nanoseconds or years past 9999)."""
    arrow_type = column.type
    if pa.types.is_timestamp(arrow_type) or pa.types.is_time64(arrow_type):
        if pa.types.is_timestamp(arrow_type):
            wanted = "ns" if TimestampNanoType and isinstance(typ, (TimestampNanoType, TimestamptzNanoType)) else "us"
            if arrow_type.unit != wanted:
                column = column.cast(pa.timestamp(wanted, tz=arrow_type.tz))
        elif arrow_type.unit != "us":
            column = column.cast(pa.time64("us"))
        return column.cast(pa.int64()).to_pylist()
    if pa.types.is_date32(arrow_type):
        return column.cast(pa.int32()).to_pylist()
    return column.to_pylist()


def print_rows(scan: DataScan) -> None:
    """Every live row of the scan to stdout, one canonical JSON object per line."""
    schema = scan.projection()
    arrow = scan.to_arrow()
    columns = [(f.name, f.field_type, column_values(arrow.column(f.name), f.field_type)) for f in schema.fields]
    out = sys.stdout
    for i in range(arrow.num_rows):
        row = {name: encode(values[i], typ) for name, typ, values in columns}
        out.write(json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
        out.write("\n")
    out.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metadata", help="path of a table's metadata.json")
    parser.add_argument("--snapshot", type=int, default=None, help="snapshot id to read (default: current)")
    args = parser.parse_args()

    table = StaticTable.from_metadata(args.metadata)
    print_rows(table.scan(snapshot_id=args.snapshot) if args.snapshot is not None else table.scan())
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    sys.exit(main())
