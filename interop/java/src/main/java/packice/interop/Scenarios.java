package packice.interop;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.Tables;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

/**
 * Tables written by Java Iceberg for interop tests. Every value is a pure function of the row id, so
 * the expected live rows can be stated exactly in the tests (test/interop/harness.test.ts).
 */
final class Scenarios {
  static final List<String> NAMES =
      List.of(
          "v2-position-deletes", "v2-equality-deletes", "v3-deletion-vectors", "v2-mixed", "v2-all-types");

  /** The ids of the live rows each scenario leaves, ascending (see each scenario's comment). */
  static final Map<String, List<Integer>> LIVE_IDS =
      Map.of(
          "v2-position-deletes", List.of(1, 3, 4, 5, 6, 7, 10, 12, 14, 15),
          "v2-equality-deletes", List.of(1, 3, 4, 5, 6, 7, 8, 9, 10, 11),
          "v3-deletion-vectors", List.of(2, 5, 7, 8, 9, 10),
          "v2-mixed", List.of(1, 3, 4, 5, 6, 7, 9, 10, 11, 12),
          "v2-all-types", List.of(1, 2, 3));

  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.IntegerType.get()),
          Types.NestedField.optional(2, "big", Types.LongType.get()),
          Types.NestedField.optional(3, "category", Types.StringType.get()),
          Types.NestedField.optional(4, "score", Types.DoubleType.get()),
          Types.NestedField.optional(5, "day", Types.DateType.get()),
          Types.NestedField.optional(6, "ts", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(7, "tstz", Types.TimestampType.withZone()),
          Types.NestedField.optional(8, "amount", Types.DecimalType.of(10, 2)),
          Types.NestedField.optional(9, "flag", Types.BooleanType.get()));

  private Scenarios() {}

  static void write(String scenario, String location, Tables tables) throws IOException {
    switch (scenario) {
      case "v2-position-deletes":
        positionDeletes(tables, location);
        break;
      case "v2-equality-deletes":
        equalityDeletes(tables, location);
        break;
      case "v3-deletion-vectors":
        deletionVectors(tables, location);
        break;
      case "v2-mixed":
        mixed(tables, location);
        break;
      case "v2-all-types":
        allTypes(tables, location);
        break;
      default:
        throw new IllegalArgumentException(
            "Unknown scenario '" + scenario + "'; known: " + String.join(", ", NAMES));
    }
  }

  /**
   * v2, identity(category). Snapshot 1 appends a(1-4) b(5-8) c(9-12); snapshot 2 appends a(13-15);
   * snapshot 3 adds position deletes for a (ids 2, 13 across two files) and b (id 8); snapshot 4
   * for c (ids 9, 11). Live: 1 3 4 5 6 7 10 12 14 15.
   */
  private static void positionDeletes(Tables tables, String location) throws IOException {
    Table table = create(tables, location, 2, PartitionSpec.builderFor(SCHEMA).identity("category").build());
    Files files = new Files(table);
    DataFile a1 = files.data(rows(table, 1, 4, "a"));
    DataFile b1 = files.data(rows(table, 5, 8, "b"));
    DataFile c1 = files.data(rows(table, 9, 12, "c"));
    append(table, a1, b1, c1);
    DataFile a2 = files.data(rows(table, 13, 15, "a"));
    append(table, a2);

    DeleteFile deletesA = files.positionDeletes(List.of(pos(a1, 1), pos(a2, 0)));
    DeleteFile deletesB = files.positionDeletes(List.of(pos(b1, 3)));
    rowDelta(table).addDeletes(deletesA).addDeletes(deletesB).commit();

    DeleteFile deletesC = files.positionDeletes(List.of(pos(c1, 0), pos(c1, 2)));
    rowDelta(table).addDeletes(deletesC).commit();
  }

  /**
   * v2, unpartitioned, equality deletes on id. Snapshot 1 appends 1-5 (a) and 6-10 (b); snapshot 2
   * deletes ids 2 and 7 and in the same commit re-inserts 7 as category "updated" (same sequence
   * number, so the delete does not touch it); snapshot 3 deletes id 4; snapshot 4 re-inserts 4 as
   * "reinserted" and adds 11 (c). Live: 1 3 4 5 6 7 8 9 10 11.
   */
  private static void equalityDeletes(Tables tables, String location) throws IOException {
    Table table = create(tables, location, 2, PartitionSpec.unpartitioned());
    Files files = new Files(table);
    append(table, files.data(rows(table, 1, 5, "a")), files.data(rows(table, 6, 10, "b")));

    rowDelta(table)
        .addDeletes(files.equalityDeletes(List.of(2, 7), null))
        .addRows(files.data(List.of(row(table.schema(), 7, "updated"))))
        .commit();

    rowDelta(table).addDeletes(files.equalityDeletes(List.of(4), null)).commit();

    List<Record> last = new ArrayList<>();
    last.add(row(table.schema(), 4, "reinserted"));
    last.add(row(table.schema(), 11, "c"));
    append(table, files.data(last));
  }

  /**
   * v3, identity(category), deletion vectors. Snapshot 1 appends a(1-4) b(5-8); snapshot 2 writes
   * one Puffin file with DVs for a (positions 0, 2) and b (position 1); snapshot 3 replaces a's DV by
   * a merged one (positions 0, 2, 3) in a new Puffin file, removing the old DV (b's DV still lives
   * in the first Puffin file), and appends c(9-10). Live: 2 5 7 8 9 10.
   */
  private static void deletionVectors(Tables tables, String location) throws IOException {
    Table table = create(tables, location, 3, PartitionSpec.builderFor(SCHEMA).identity("category").build());
    Files files = new Files(table);
    DataFile a = files.data(rows(table, 1, 4, "a"));
    DataFile b = files.data(rows(table, 5, 8, "b"));
    append(table, a, b);

    DeleteWriteResult first =
        files.deletionVectors(List.of(pos(a, 0), pos(a, 2), pos(b, 1)), path -> null);
    commit(rowDelta(table), first);

    DeleteFile oldDvForA =
        first.deleteFiles().stream()
            .filter(dv -> dv.referencedDataFile().equals(a.location()))
            .findFirst()
            .orElseThrow();
    BaseDeleteLoader loader = new BaseDeleteLoader(dv -> table.io().newInputFile(dv));
    DeleteWriteResult merged =
        files.deletionVectors(
            List.of(pos(a, 3)),
            path ->
                path.equals(a.location())
                    ? loader.loadPositionDeletes(List.of(oldDvForA), path)
                    : null);
    if (merged.rewrittenDeleteFiles().size() != 1) {
      throw new IllegalStateException("expected the old DV to be rewritten: " + merged);
    }
    RowDelta delta = rowDelta(table).addRows(files.data(rows(table, 9, 10, "c")));
    commit(delta, merged);
  }

  /**
   * v2 with evolution. Snapshot 1 (schema 0, spec 0 = identity(category)) appends a(1-3) b(4-6).
   * Then the schema gains "note" and "score" becomes "rating"; the spec becomes month(day) (category
   * dropped). Snapshot 2 appends 7-9 (2024-03) and 10 (1969-07). Snapshot 3 adds a spec-0 position
   * delete for id 2 and a spec-1 equality delete for ids {8, 1} in partition 2024-03: it removes 8,
   * and leaves 1 alone because 1 lives in a spec-0 file. Snapshot 4 appends 11-12 (2024-04).
   * Live: 1 3 4 5 6 7 9 10 11 12.
   */
  private static void mixed(Tables tables, String location) throws IOException {
    Table table = create(tables, location, 2, PartitionSpec.builderFor(SCHEMA).identity("category").build());
    Files files = new Files(table);
    DataFile m1 = files.data(rows(table, 1, 3, "a"));
    append(table, m1, files.data(rows(table, 4, 6, "b")));

    table.updateSchema().addColumn("note", Types.StringType.get()).renameColumn("score", "rating").commit();
    table.updateSpec().removeField("category").addField(Expressions.month("day")).commit();

    List<Record> march = new ArrayList<>();
    march.add(row(table.schema(), 7, "c"));
    march.add(row(table.schema(), 8, "c"));
    march.add(row(table.schema(), 9, "d"));
    DataFile m3 = files.data(march);
    append(table, m3, files.data(List.of(row(table.schema(), 10, "d"))));

    rowDelta(table)
        .addDeletes(files.positionDeletes(List.of(pos(m1, 1))))
        .addDeletes(files.equalityDeletes(List.of(8, 1), m3))
        .commit();

    append(table, files.data(rows(table, 11, 12, "e")));
  }

  static final Types.StructType POINT =
      Types.StructType.of(
          Types.NestedField.optional(11, "a", Types.IntegerType.get()),
          Types.NestedField.optional(12, "b", Types.StringType.get()));

  static final Schema ALL_TYPES =
      new Schema(
          Types.NestedField.required(1, "id", Types.IntegerType.get()),
          Types.NestedField.optional(2, "f", Types.FloatType.get()),
          Types.NestedField.optional(3, "t", Types.TimeType.get()),
          Types.NestedField.optional(4, "u", Types.UUIDType.get()),
          Types.NestedField.optional(5, "bin", Types.BinaryType.get()),
          Types.NestedField.optional(6, "fix", Types.FixedType.ofLength(3)),
          Types.NestedField.optional(7, "st", POINT),
          Types.NestedField.optional(
              8, "l", Types.ListType.ofOptional(13, Types.LongType.get())),
          Types.NestedField.optional(
              9,
              "m",
              Types.MapType.ofOptional(14, 15, Types.StringType.get(), Types.IntegerType.get())));

  /**
   * v2, unpartitioned, no deletes: one file of three rows covering the types the other scenarios
   * leave out (float, time, uuid, binary, fixed, struct, list, map), to pin the canonical encoding.
   * Row 3 is null in every optional column.
   */
  private static void allTypes(Tables tables, String location) throws IOException {
    Map<String, String> props = new LinkedHashMap<>();
    props.put(TableProperties.FORMAT_VERSION, "2");
    Table table = tables.create(ALL_TYPES, PartitionSpec.unpartitioned(), props, location);
    Files files = new Files(table);

    Record r1 = GenericRecord.create(ALL_TYPES);
    r1.setField("id", 1);
    r1.setField("f", 0.1f);
    r1.setField("t", LocalTime.of(13, 45, 30, 123_456_000));
    r1.setField("u", UUID.fromString("f79c3e09-677c-4c4c-9a5b-1e8d3a3d8f01"));
    r1.setField("bin", ByteBuffer.wrap(new byte[] {0x00, (byte) 0xff, 0x10}));
    r1.setField("fix", new byte[] {0x61, 0x62, 0x63});
    Record p1 = GenericRecord.create(POINT);
    p1.setField("a", 1);
    p1.setField("b", "x");
    r1.setField("st", p1);
    r1.setField("l", List.of(1L, 9007199254740993L));
    Map<String, Integer> m1 = new LinkedHashMap<>();
    m1.put("k1", 1);
    m1.put("k2", 2);
    r1.setField("m", m1);

    Record r2 = GenericRecord.create(ALL_TYPES);
    r2.setField("id", 2);
    r2.setField("f", Float.NEGATIVE_INFINITY);
    r2.setField("t", LocalTime.MIDNIGHT);
    r2.setField("u", UUID.fromString("00000000-0000-0000-0000-000000000000"));
    r2.setField("bin", ByteBuffer.wrap(new byte[0]));
    r2.setField("fix", new byte[] {0, 0, 0});
    r2.setField("st", GenericRecord.create(POINT));
    r2.setField("l", Arrays.asList(null, -5L));
    r2.setField("m", Map.of());

    Record r3 = GenericRecord.create(ALL_TYPES);
    r3.setField("id", 3);

    append(table, files.data(List.of(r1, r2, r3)));
  }

  private static Table create(Tables tables, String location, int formatVersion, PartitionSpec spec) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion));
    return tables.create(SCHEMA, spec, props, location);
  }

  private static void append(Table table, DataFile... files) {
    AppendFiles append = table.newAppend();
    for (DataFile file : files) {
      append.appendFile(file);
    }
    append.commit();
  }

  /** A row delta validated from the current snapshot, as engines do; without it Java treats every
   * earlier DV as concurrent. */
  private static RowDelta rowDelta(Table table) {
    return table.newRowDelta().validateFromSnapshot(table.currentSnapshot().snapshotId());
  }

  private static void commit(RowDelta delta, DeleteWriteResult dvs) {
    dvs.deleteFiles().forEach(delta::addDeletes);
    dvs.rewrittenDeleteFiles().forEach(delta::removeDeletes);
    delta.commit();
  }

  private static List<Record> rows(Table table, int from, int to, String category) {
    List<Record> rows = new ArrayList<>();
    for (int id = from; id <= to; id++) {
      rows.add(row(table.schema(), id, category));
    }
    return rows;
  }

  /**
   * The row for an id. Edge values on purpose: id 3 and 9 have longs beyond 2^53, 5 a null long, 4 a
   * NaN double, 6 a null double, 10 a pre-1970 date, 7 a null timestamptz and boolean, 2 a decimal
   * below one, multiples of 4 a negative decimal, 11 a non-ASCII note, 10 a null note.
   */
  static Record row(Schema schema, int id, String category) {
    Record r = GenericRecord.create(schema);
    r.setField("id", id);
    Long big = id * 1_000_000_007L;
    if (id == 3) {
      big = 9007199254740993L;
    } else if (id == 9) {
      big = -9007199254740995L;
    } else if (id == 5) {
      big = null;
    }
    r.setField("big", big);
    r.setField("category", category);
    Double score = id * 1.1;
    if (id == 4) {
      score = Double.NaN;
    } else if (id == 6) {
      score = null;
    }
    r.setField(schema.findField(4).name(), score);
    r.setField("day", id == 10 ? LocalDate.of(1969, 7, 20) : LocalDate.of(2024, 1, 1).plusDays(id * 10L));
    r.setField(
        "ts",
        LocalDateTime.of(2024, 1, 1, 0, 0)
            .plusDays(id)
            .plusHours(id)
            .plusMinutes(id)
            .plusSeconds(id)
            .plusNanos(id * 1000L));
    r.setField(
        "tstz",
        id == 7
            ? null
            : OffsetDateTime.of(2024, 6, 1, 12, 0, 0, 0, ZoneOffset.UTC)
                .plusSeconds(id * 3601L)
                .plusNanos(id * 123_000L));
    BigDecimal amount = id == 2 ? new BigDecimal("0.05") : new BigDecimal(BigInteger.valueOf(id * 12345L), 2);
    r.setField("amount", id % 4 == 0 ? amount.negate() : amount);
    r.setField("flag", id == 7 ? null : Boolean.valueOf(id % 2 == 0));
    if (schema.findField("note") != null) {
      r.setField("note", id == 10 ? null : id == 11 ? "naïve ✓ \"q\"" : "note-" + id);
    }
    return r;
  }

  /** A deleted position in a data file (the file also gives the delete's spec and partition). */
  record Pos(DataFile file, long pos) {}

  static Pos pos(DataFile file, long position) {
    return new Pos(file, position);
  }

  /** Writes data and delete files for one table through Java's own writers. */
  static final class Files {
    private final Table table;
    private final OutputFileFactory parquet;
    private final OutputFileFactory puffin;

    Files(Table table) {
      this.table = table;
      this.parquet = OutputFileFactory.builderFor(table, 1, 1).format(FileFormat.PARQUET).build();
      this.puffin = OutputFileFactory.builderFor(table, 1, 2).format(FileFormat.PUFFIN).build();
    }

    private EncryptedOutputFile newFile(OutputFileFactory factory, PartitionSpec spec, StructLike partition) {
      return spec.isUnpartitioned() ? factory.newOutputFile() : factory.newOutputFile(spec, partition);
    }

    /** One data file in the current spec; every row must fall in the same partition. */
    DataFile data(List<Record> rows) throws IOException {
      Schema schema = table.schema();
      PartitionSpec spec = table.spec();
      PartitionKey partition = null;
      if (!spec.isUnpartitioned()) {
        InternalRecordWrapper wrapper = new InternalRecordWrapper(schema.asStruct());
        for (Record row : rows) {
          PartitionKey key = new PartitionKey(spec, schema);
          key.partition(wrapper.wrap(row));
          if (partition == null) {
            partition = key;
          } else if (!partition.equals(key)) {
            throw new IllegalArgumentException("rows span partitions " + partition + " and " + key);
          }
        }
      }
      DataWriter<Record> writer =
          Parquet.writeData(newFile(parquet, spec, partition))
              .forTable(table)
              .createWriterFunc(GenericParquetWriter::create)
              .withSpec(spec)
              .withPartition(partition)
              .overwrite()
              .build();
      try (DataWriter<Record> w = writer) {
        for (Record row : rows) {
          w.write(row);
        }
      }
      return writer.toDataFile();
    }

    /** One position delete file for data files that share a spec and partition. */
    DeleteFile positionDeletes(List<Pos> deletes) throws IOException {
      DataFile first = deletes.get(0).file();
      PartitionSpec spec = table.specs().get(first.specId());
      List<Pos> sorted = new ArrayList<>(deletes);
      // the spec requires position deletes sorted by file path, then position
      sorted.sort(
          Comparator.comparing((Pos d) -> d.file().location()).thenComparingLong(Pos::pos));
      PositionDeleteWriter<Record> writer =
          Parquet.writeDeletes(newFile(parquet, spec, first.partition()))
              .setAll(table.properties())
              .metricsConfig(MetricsConfig.forPositionDelete())
              .withSpec(spec)
              .withPartition(first.partition())
              .overwrite()
              .buildPositionWriter();
      PositionDelete<Record> delete = PositionDelete.create();
      try (PositionDeleteWriter<Record> w = writer) {
        for (Pos p : sorted) {
          w.write(delete.set(p.file().location(), p.pos()));
        }
      }
      return writer.toDeleteFile();
    }

    /**
     * Equality deletes on id, scoped to the partition of {@code like} (a data file of the current
     * spec) or global when the current spec is unpartitioned.
     */
    DeleteFile equalityDeletes(List<Integer> ids, DataFile like) throws IOException {
      Schema idSchema = table.schema().select("id");
      PartitionSpec spec = table.spec();
      StructLike partition = like == null ? null : like.partition();
      EqualityDeleteWriter<Record> writer =
          Parquet.writeDeletes(newFile(parquet, spec, partition))
              .forTable(table)
              .rowSchema(idSchema)
              .createWriterFunc(GenericParquetWriter::create)
              .withSpec(spec)
              .withPartition(partition)
              .equalityFieldIds(table.schema().findField("id").fieldId())
              .overwrite()
              .buildEqualityWriter();
      try (EqualityDeleteWriter<Record> w = writer) {
        for (int id : ids) {
          Record r = GenericRecord.create(idSchema);
          r.setField("id", id);
          w.write(r);
        }
      }
      return writer.toDeleteFile();
    }

    /** One Puffin file with a DV per referenced data file, merged with previous deletes. */
    DeleteWriteResult deletionVectors(
        List<Pos> deletes, Function<String, PositionDeleteIndex> previous)
        throws IOException {
      BaseDVFileWriter writer = new BaseDVFileWriter(puffin, previous);
      try (BaseDVFileWriter w = writer) {
        for (Pos p : deletes) {
          DataFile file = p.file();
          w.delete(file.location(), p.pos(), table.specs().get(file.specId()), file.partition());
        }
      }
      return writer.result();
    }
  }
}
