package packice.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Spark's `rewrite_data_files` on a copy of a packice (object-store layout) table, for
 * bench/rewrite-rate.ts and issue 11's Spark column.
 *
 * <pre>java @bench/spark/jvm-options.txt -cp "$(cat .cache/spark/classpath.txt)" packice.bench.SparkRewrite &lt;table&gt; &lt;empty work dir&gt; [target-file-size-bytes]</pre>
 *
 * The copy is metadata only: `<work>/wh/db/t/metadata/v1.metadata.json` is the table's current
 * metadata with its location moved to the copy and its metadata log emptied (so a commit never
 * deletes the original's metadata files), and a version hint; manifests and data files stay where
 * they are and are only read. Spark (local[*]) writes its outputs and commit under the copy.
 * The rewrite call is timed alone after the session is warm (it has run a job on the table's
 * metadata). Prints one JSON line on stdout: the call's wall and CPU seconds (process CPU, all
 * threads), the whole process's, and its peak RSS (VmHWM).
 */
public final class SparkRewrite {
  private SparkRewrite() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: SparkRewrite <table location> <empty work dir> [target-file-size-bytes]");
      System.exit(2);
    }
    Path source = Path.of(args[0].replaceFirst("^file://", ""));
    Path work = Path.of(args[1]);
    Path copy = copyTable(source, work.resolve("wh").resolve("db").resolve("t"));

    SparkSession spark =
        SparkSession.builder()
            .master("local[*]")
            .appName("packice-spark-bench")
            .config("spark.ui.enabled", "false")
            // local[*] talks to itself: keep its RPC and block manager on loopback
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog.bench", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.bench.type", "hadoop")
            .config("spark.sql.catalog.bench.warehouse", work.resolve("wh").toUri().toString())
            .config("spark.local.dir", work.resolve("spark-local").toString())
            .config("spark.sql.warehouse.dir", work.resolve("spark-warehouse").toUri().toString())
            .getOrCreate();
    try {
      // Warm-up: a job over the table's metadata (planning, task scheduling, codegen), no data file read.
      long snapshots = spark.sql("SELECT count(*) FROM bench.db.t.snapshots").first().getLong(0);
      Table table = Spark3Util.loadIcebergTable(spark, "bench.db.t");
      String target =
          args.length > 2
              ? args[2]
              : table.properties().getOrDefault("write.target-file-size-bytes", String.valueOf(512L * 1024 * 1024));

      long cpu0 = processCpuNanos();
      long wall0 = System.nanoTime();
      Row result =
          spark
              .sql(
                  "CALL bench.system.rewrite_data_files(table => 'db.t', options => map("
                      + "'min-input-files', '2', 'target-file-size-bytes', '" + Long.parseLong(target) + "'))")
              .first();
      long wall1 = System.nanoTime();
      long cpu1 = processCpuNanos();

      table.refresh();
      Snapshot current = table.currentSnapshot();
      Map<String, String> summary = current.summary();
      List<String> info = new ArrayList<>();
      info.add(str("spark", spark.version()));
      info.add(str("iceberg", org.apache.iceberg.IcebergBuild.version()));
      info.add(str("java", System.getProperty("java.version")));
      info.add(num("maxHeapMiB", Runtime.getRuntime().maxMemory() >> 20));
      info.add(num("cores", Runtime.getRuntime().availableProcessors()));
      info.add(num("snapshotsBefore", snapshots));
      info.add(num("targetFileSizeBytes", Long.parseLong(target)));
      for (String field : result.schema().fieldNames()) info.add(num(field, ((Number) result.getAs(field)).longValue()));
      info.add(str("operation", current.operation()));
      info.add(num("bytesOut", Long.parseLong(summary.getOrDefault("added-files-size", "0"))));
      info.add(num("filesOut", Long.parseLong(summary.getOrDefault("added-data-files", "0"))));
      info.add(num("rowsOut", Long.parseLong(summary.getOrDefault("total-records", "0"))));
      info.add(num("processCpuS", processCpuNanos() / 1e9));
      info.add(num("processWallS", (System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime()) / 1e3));
      info.add(str("copy", copy.toString()));
      System.out.println(
          String.format(
              Locale.ROOT,
              "{\"wallS\":[%.3f],\"cpuS\":[%.3f],\"maxRssKiB\":%d,\"info\":{%s}}",
              (wall1 - wall0) / 1e9,
              (cpu1 - cpu0) / 1e9,
              peakRssKiB(),
              String.join(",", info)));
    } finally {
      spark.stop();
    }
  }

  /** The table's current metadata, moved to `dest` (see the class comment). */
  static Path copyTable(Path source, Path dest) throws IOException {
    Path metadata = source.resolve("metadata");
    String version = Files.readString(metadata.resolve("version-hint.text"), StandardCharsets.UTF_8).trim();
    ObjectMapper json = new ObjectMapper();
    ObjectNode current = (ObjectNode) json.readTree(metadata.resolve("v" + version + ".metadata.json").toFile());
    current.put("location", dest.toUri().toString().replaceFirst("/$", ""));
    current.putArray("metadata-log");
    // Belt and braces: nothing under the original is ever deleted by a commit on the copy.
    ObjectNode props = current.has("properties") ? (ObjectNode) current.get("properties") : current.putObject("properties");
    props.put("write.metadata.delete-after-commit.enabled", "false");
    Path out = dest.resolve("metadata");
    Files.createDirectories(out);
    try (var entries = Files.list(out)) {
      if (entries.findAny().isPresent()) throw new IOException(out + " is not empty: give SparkRewrite a fresh work dir");
    }
    json.writeValue(out.resolve("v1.metadata.json").toFile(), current);
    Files.writeString(out.resolve("version-hint.text"), "1", StandardCharsets.UTF_8);
    return dest;
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** VmHWM of /proc/self/status: the process's peak resident set, KiB. */
  private static long peakRssKiB() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
    }
    return -1;
  }

  private static String str(String key, String value) {
    return "\"" + key + "\":\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  private static String num(String key, double value) {
    return "\"" + key + "\":" + (value == Math.rint(value) ? String.valueOf((long) value) : String.format(Locale.ROOT, "%.3f", value));
  }
}
