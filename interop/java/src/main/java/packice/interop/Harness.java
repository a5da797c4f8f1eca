package packice.interop;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.LocationProviders;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.Tables;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.LocationProvider;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.JsonUtil;

/**
 * Java Iceberg as a reference engine for packice's interop tests.
 *
 * <pre>
 *   read  &lt;tableLocation&gt; [--snapshot ID]   live rows, one canonical JSON object per line
 *   write &lt;scenario&gt; &lt;tableLocation&gt;         create a table (see {@link Scenarios})
 *   info  &lt;tableLocation&gt;                   {formatVersion, currentSnapshotId, dataFiles, deleteFiles, ...}
 *   locations &lt;tableLocation&gt;               per live data and delete file: its path, Java's
 *                                          partitionToPath and where Java's location provider puts it
 *   metadata-table &lt;tableLocation&gt; &lt;snapshots|files|...&gt;
 *                                          rows of Iceberg's metadata table, one JSON object per line
 *                                          (its primitive and map columns; longs as strings)
 *   location-provider &lt;tableLocation&gt; &lt;propertiesJson&gt; &lt;fileName&gt;...
 *                                          LocationProviders.locationsFor(...).newDataLocation(fileName)
 *   plan-files &lt;tableLocation&gt; &lt;expressionJson&gt;
 *                                          the data files table.newScan().filter(expr).planFiles()
 *                                          selects, one JSON string a line (expr: ExpressionParser
 *                                          JSON, literals in the columns' JSON single-value form)
 *   delete &lt;tableLocation&gt; [--granularity partition|file] &lt;column&gt; &lt;value&gt;...
 *                                          deletes the rows whose column is one of the values by
 *                                          position (v3: deletion vectors; v2: position delete
 *                                          files) in one RowDelta (see {@link RowDeletes})
 * </pre>
 *
 * A {@code <tableLocation>} may also name a table behind an Iceberg REST catalog:
 * {@code rest+http://host:port/<namespace>/<table>} (see {@link RestTables}).
 *
 * Only results go to stdout; logs go to stderr. Exit code 2 on bad usage, 1 on any failure.
 */
public final class Harness {
  private static final long MAX_SAFE_INTEGER = 1L << 53;
  private static final DateTimeFormatter DATE = DateTimeFormatter.ofPattern("uuuu-MM-dd");
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TS_MICROS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TS_NANOS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS");
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Harness() {}

  public static void main(String[] args) {
    // Anything a library prints to stdout would corrupt the JSON lines: route it to stderr and
    // keep the real stdout for results only.
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    System.setOut(System.err);
    try {
      int code = run(args, out);
      out.flush();
      System.exit(code);
    } catch (Throwable t) {
      out.flush();
      t.printStackTrace(System.err);
      System.exit(1);
    }
  }

  private static int run(String[] args, PrintStream out) throws IOException {
    if (args.length < 2) {
      return usage();
    }
    switch (args[0]) {
      case "read":
        Long snapshotId = null;
        if (args.length == 4 && args[2].equals("--snapshot")) {
          snapshotId = Long.parseLong(args[3]);
        } else if (args.length != 2) {
          return usage();
        }
        read(load(args[1]), snapshotId, out);
        return 0;
      case "write":
        if (args.length != 3) {
          return usage();
        }
        Scenarios.write(args[1], args[2], tablesFor(args[2]));
        return 0;
      case "info":
        if (args.length != 2) {
          return usage();
        }
        info(load(args[1]), out);
        return 0;
      case "locations":
        if (args.length != 2) {
          return usage();
        }
        locations(load(args[1]), out);
        return 0;
      case "metadata-table":
        if (args.length != 3) {
          return usage();
        }
        metadataTable(load(args[1]), args[2], out);
        return 0;
      case "location-provider":
        if (args.length < 4) {
          return usage();
        }
        locationProvider(args, out);
        return 0;
      case "plan-files":
        if (args.length != 3) {
          return usage();
        }
        planFiles(load(args[1]), args[2], out);
        return 0;
      case "delete":
        return delete(args, out);
      case "selftest":
        if (args.length != 2) {
          return usage();
        }
        selftest(args[1]);
        return 0;
      default:
        return usage();
    }
  }

  private static int usage() {
    System.err.println(
        "usage: Harness read <tableLocation> [--snapshot ID]\n"
            + "       Harness write <scenario> <tableLocation>   scenarios: "
            + String.join(", ", Scenarios.NAMES)
            + "\n"
            + "       Harness info <tableLocation>\n"
            + "       Harness locations <tableLocation>\n"
            + "       Harness location-provider <tableLocation> <propertiesJson> <fileName>...\n"
            + "       Harness plan-files <tableLocation> <expressionJson>\n"
            + "       Harness delete <tableLocation> [--granularity partition|file] <column> <value>...\n"
            + "       Harness selftest <emptyDir>   writes, reads and checks every scenario");
    return 2;
  }

  private static int delete(String[] args, PrintStream out) throws IOException {
    int i = 2;
    boolean perFile = false;
    if (args.length > 3 && args[2].equals("--granularity")) {
      if (!args[3].equals("file") && !args[3].equals("partition")) {
        return usage();
      }
      perFile = args[3].equals("file");
      i = 4;
    }
    if (args.length < i + 2) {
      return usage();
    }
    Set<String> values = new HashSet<>(List.of(args).subList(i + 1, args.length));
    RowDeletes.delete(load(args[1]), args[i], values, perFile, out);
    return 0;
  }

  static Configuration conf() {
    Configuration conf = new Configuration();
    // The raw local filesystem writes no .crc side files, so tables look as on an object store.
    conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
    conf.setBoolean("fs.file.impl.disable.cache", true);
    return conf;
  }

  /** Tables at a location (HadoopTables), or behind a REST catalog for {@code rest+http://} names. */
  private static Tables tablesFor(String location) {
    return RestTables.isRest(location) ? new RestTables() : new HadoopTables(conf());
  }

  private static Table load(String location) {
    return tablesFor(location).load(location);
  }

  static void read(Table table, Long snapshotId, PrintStream out) throws IOException {
    IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table);
    if (snapshotId != null) {
      scan = scan.useSnapshot(snapshotId);
    }
    Writer writer = new OutputStreamWriter(out, StandardCharsets.UTF_8);
    JsonFactory factory = new JsonFactory();
    try (CloseableIterable<Record> rows = scan.build()) {
      for (Record row : rows) {
        JsonGenerator gen = factory.createGenerator(writer);
        writeStruct(gen, row.struct(), row);
        gen.flush();
        writer.write('\n');
      }
    }
    writer.flush();
  }

  private static void writeStruct(JsonGenerator gen, Types.StructType type, Record record)
      throws IOException {
    gen.writeStartObject();
    List<Types.NestedField> fields = type.fields();
    for (int i = 0; i < fields.size(); i++) {
      Types.NestedField field = fields.get(i);
      if (MetadataColumns.isMetadataColumn(field.fieldId())) {
        // e.g. _pos, which the generic reader adds to apply position deletes
        continue;
      }
      gen.writeFieldName(field.name());
      writeValue(gen, field.type(), record.get(i));
    }
    gen.writeEndObject();
  }

  private static void writeValue(JsonGenerator gen, Type type, Object value) throws IOException {
    if (value == null) {
      gen.writeNull();
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN:
        gen.writeBoolean((Boolean) value);
        return;
      case INTEGER:
        gen.writeNumber((Integer) value);
        return;
      case LONG:
        long v = (Long) value;
        if (Math.abs(v) <= MAX_SAFE_INTEGER && v != Long.MIN_VALUE) {
          gen.writeNumber(v);
        } else {
          gen.writeString(Long.toString(v));
        }
        return;
      case FLOAT:
        // widened exactly, as a JS number holding the float32 value would print it
        writeDouble(gen, ((Float) value).doubleValue());
        return;
      case DOUBLE:
        writeDouble(gen, (Double) value);
        return;
      case DECIMAL:
        gen.writeString(((BigDecimal) value).toPlainString());
        return;
      case STRING:
        gen.writeString(value.toString());
        return;
      case UUID:
        gen.writeString(((UUID) value).toString());
        return;
      case DATE:
        gen.writeString(((LocalDate) value).format(DATE));
        return;
      case TIME:
        gen.writeString(((LocalTime) value).format(TIME));
        return;
      case TIMESTAMP:
        writeTimestamp(gen, value, ((Types.TimestampType) type).shouldAdjustToUTC(), TS_MICROS);
        return;
      case TIMESTAMP_NANO:
        writeTimestamp(
            gen, value, ((Types.TimestampNanoType) type).shouldAdjustToUTC(), TS_NANOS);
        return;
      case BINARY:
      case FIXED:
        gen.writeString(hex(value));
        return;
      case STRUCT:
        writeStruct(gen, type.asStructType(), (Record) value);
        return;
      case LIST:
        gen.writeStartArray();
        for (Object element : (List<?>) value) {
          writeValue(gen, type.asListType().elementType(), element);
        }
        gen.writeEndArray();
        return;
      case MAP:
        gen.writeStartArray();
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
          gen.writeStartArray();
          writeValue(gen, type.asMapType().keyType(), entry.getKey());
          writeValue(gen, type.asMapType().valueType(), entry.getValue());
          gen.writeEndArray();
        }
        gen.writeEndArray();
        return;
      default:
        throw new UnsupportedOperationException("No canonical JSON encoding for type " + type);
    }
  }

  private static void writeDouble(JsonGenerator gen, double d) throws IOException {
    if (Double.isNaN(d)) {
      gen.writeString("NaN");
    } else if (Double.isInfinite(d)) {
      gen.writeString(d > 0 ? "Infinity" : "-Infinity");
    } else {
      gen.writeNumber(d);
    }
  }

  private static void writeTimestamp(
      JsonGenerator gen, Object value, boolean utc, DateTimeFormatter format) throws IOException {
    if (utc) {
      OffsetDateTime odt = ((OffsetDateTime) value).withOffsetSameInstant(ZoneOffset.UTC);
      gen.writeString(odt.toLocalDateTime().format(format) + "Z");
    } else {
      gen.writeString(((LocalDateTime) value).format(format));
    }
  }

  private static String hex(Object value) {
    byte[] bytes;
    if (value instanceof ByteBuffer) {
      ByteBuffer buf = ((ByteBuffer) value).duplicate();
      bytes = new byte[buf.remaining()];
      buf.get(bytes);
    } else {
      bytes = (byte[]) value;
    }
    char[] chars = new char[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      chars[2 * i] = HEX[(bytes[i] >> 4) & 0xF];
      chars[2 * i + 1] = HEX[bytes[i] & 0xF];
    }
    return new String(chars);
  }

  /**
   * Writes every scenario under {@code dir}, reads it back and checks the live ids. setup-java.sh
   * runs it once after a build, as a smoke test and to record the class-data-sharing archive that
   * makes later JVM starts fast.
   */
  private static void selftest(String dir) throws IOException {
    HadoopTables tables = new HadoopTables(conf());
    PrintStream sink = new PrintStream(OutputStream.nullOutputStream());
    for (String scenario : Scenarios.NAMES) {
      String location = dir + "/" + scenario;
      Scenarios.write(scenario, location, tables);
      Table table = tables.load(location);
      read(table, null, sink);
      info(table, sink);
      List<Integer> ids = new ArrayList<>();
      try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
        rows.forEach(row -> ids.add((Integer) row.getField("id")));
      }
      Collections.sort(ids);
      List<Integer> expected = Scenarios.LIVE_IDS.get(scenario);
      if (!ids.equals(expected)) {
        throw new IllegalStateException(
            scenario + ": live ids " + ids + ", expected " + expected);
      }
      System.err.println("selftest " + scenario + ": live ids " + ids);
    }
  }

  /**
   * Where Java 1.12 would put each live data and delete file of the current snapshot: {@code
   * PartitionSpec.partitionToPath} of the file's partition as Java reads it from the manifest, and
   * the table's location provider for the file's name, partitioned as OutputFileFactory does
   * (unpartitioned specs and Puffin deletion vectors take {@code newDataLocation(name)}). A
   * provider that refuses the table's properties is reported as {@code locationError}.
   */
  /** Rows of a metadata table as Java core plans them: every task of a metadata table is a DataTask. */
  static void metadataTable(Table table, String name, PrintStream out) throws IOException {
    Table meta =
        org.apache.iceberg.MetadataTableUtils.createMetadataTableInstance(
            table, org.apache.iceberg.MetadataTableType.from(name));
    List<Types.NestedField> columns = meta.schema().columns();
    Writer writer = new OutputStreamWriter(out, StandardCharsets.UTF_8);
    JsonFactory factory = new JsonFactory();
    try (CloseableIterable<FileScanTask> tasks = meta.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        try (CloseableIterable<org.apache.iceberg.StructLike> rows =
            ((org.apache.iceberg.DataTask) task).rows()) {
          for (org.apache.iceberg.StructLike row : rows) {
            JsonGenerator gen = factory.createGenerator(writer);
            gen.writeStartObject();
            for (int i = 0; i < columns.size(); i++) {
              Types.NestedField field = columns.get(i);
              Object value = row.get(i, Object.class);
              if (value == null) {
                gen.writeNullField(field.name());
              } else if (value instanceof Long || value instanceof CharSequence) {
                gen.writeStringField(field.name(), value.toString());
              } else if (value instanceof Integer) {
                gen.writeNumberField(field.name(), (Integer) value);
              } else if (value instanceof Boolean) {
                gen.writeBooleanField(field.name(), (Boolean) value);
              } else if (value instanceof Map) {
                gen.writeObjectFieldStart(field.name());
                for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                  gen.writeStringField(String.valueOf(e.getKey()), String.valueOf(e.getValue()));
                }
                gen.writeEndObject();
              }
            }
            gen.writeEndObject();
            gen.flush();
            writer.write('\n');
          }
        }
      }
    }
    writer.flush();
  }

  static void locations(Table table, PrintStream out) throws IOException {
    LocationProvider provider = null;
    String providerError = null;
    try {
      provider = table.locationProvider();
    } catch (IllegalArgumentException e) {
      providerError = e.getMessage();
    }
    Map<String, ContentFile<?>> files = new LinkedHashMap<>();
    Snapshot current = table.currentSnapshot();
    for (ManifestFile manifest : current == null ? List.<ManifestFile>of() : current.allManifests(table.io())) {
      // live entries only, deletes that apply to no data file included
      if (manifest.content() == ManifestContent.DATA) {
        try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, table.io(), table.specs())) {
          reader.forEach(f -> files.putIfAbsent(f.location(), f.copy()));
        }
      } else {
        try (ManifestReader<DeleteFile> reader =
            ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
          reader.forEach(f -> files.putIfAbsent(f.location(), f.copy()));
        }
      }
    }
    Writer writer = new OutputStreamWriter(out, StandardCharsets.UTF_8);
    JsonFactory factory = new JsonFactory();
    for (ContentFile<?> file : files.values()) {
      PartitionSpec spec = table.specs().get(file.specId());
      String path = file.location();
      String name = path.substring(path.lastIndexOf('/') + 1);
      JsonGenerator gen = factory.createGenerator(writer);
      gen.writeStartObject();
      gen.writeStringField("path", path);
      gen.writeStringField("content", file.content().name());
      gen.writeStringField("format", file.format().name());
      gen.writeNumberField("specId", file.specId());
      gen.writeStringField("partitionPath", spec.partitionToPath(file.partition()));
      if (provider == null) {
        gen.writeStringField("locationError", providerError);
      } else if (spec.isUnpartitioned() || file.format() == FileFormat.PUFFIN) {
        gen.writeStringField("location", provider.newDataLocation(name));
      } else {
        gen.writeStringField("location", provider.newDataLocation(spec, file.partition(), name));
      }
      gen.writeEndObject();
      gen.flush();
      writer.write('\n');
    }
    writer.flush();
  }

  /** One line per file name: {@code {"fileName", "location"}}, or {@code {"error"}} when Java refuses. */
  @SuppressWarnings("unchecked")
  static void locationProvider(String[] args, PrintStream out) throws IOException {
    Map<String, String> properties = JsonUtil.mapper().readValue(args[2], Map.class);
    Writer writer = new OutputStreamWriter(out, StandardCharsets.UTF_8);
    JsonFactory factory = new JsonFactory();
    for (int i = 3; i < args.length; i++) {
      JsonGenerator gen = factory.createGenerator(writer);
      gen.writeStartObject();
      gen.writeStringField("fileName", args[i]);
      try {
        gen.writeStringField(
            "location", LocationProviders.locationsFor(args[1], properties).newDataLocation(args[i]));
      } catch (IllegalArgumentException e) {
        gen.writeStringField("error", e.getMessage());
      }
      gen.writeEndObject();
      gen.flush();
      writer.write('\n');
    }
    writer.flush();
  }

  static void planFiles(Table table, String expressionJson, PrintStream out) throws IOException {
    Expression filter = ExpressionParser.fromJson(expressionJson, table.schema());
    try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(filter).planFiles()) {
      for (FileScanTask task : tasks) {
        out.println(JsonUtil.generate(gen -> gen.writeString(task.file().location()), false));
      }
    }
  }

  static void info(Table table, PrintStream out) throws IOException {
    Set<String> dataFiles = new HashSet<>();
    Set<String> deleteFiles = new HashSet<>();
    int positionDeletes = 0;
    int equalityDeletes = 0;
    int deletionVectors = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        dataFiles.add(task.file().location());
        for (DeleteFile delete : task.deletes()) {
          // DVs share one Puffin file: a DV is identified by its file and offset
          String key = delete.location() + "#" + delete.contentOffset();
          if (deleteFiles.add(key)) {
            if (delete.content() == FileContent.EQUALITY_DELETES) {
              equalityDeletes++;
            } else if (delete.referencedDataFile() != null && delete.contentOffset() != null) {
              deletionVectors++;
            } else {
              positionDeletes++;
            }
          }
        }
      }
    }
    Snapshot current = table.currentSnapshot();
    int formatVersion = ((HasTableOperations) table).operations().current().formatVersion();
    Writer writer = new OutputStreamWriter(out, StandardCharsets.UTF_8);
    JsonGenerator gen = new JsonFactory().createGenerator(writer);
    gen.writeStartObject();
    gen.writeNumberField("formatVersion", formatVersion);
    gen.writeFieldName("currentSnapshotId");
    if (current == null) {
      gen.writeNull();
    } else {
      gen.writeString(Long.toString(current.snapshotId()));
    }
    gen.writeNumberField("dataFiles", dataFiles.size());
    gen.writeNumberField("deleteFiles", deleteFiles.size());
    gen.writeNumberField("positionDeleteFiles", positionDeletes);
    gen.writeNumberField("equalityDeleteFiles", equalityDeletes);
    gen.writeNumberField("deletionVectors", deletionVectors);
    gen.writeEndObject();
    gen.flush();
    writer.write('\n');
    writer.flush();
  }
}
