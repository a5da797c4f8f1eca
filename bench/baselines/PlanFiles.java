import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Baseline for bench/compaction.ts: Java Iceberg plans a full scan of the same table.
 *
 * <pre>
 *   javac -d /tmp/x -cp "$(cat .cache/interop/classpath.txt)" bench/baselines/PlanFiles.java
 *   java -cp /tmp/x:"$(cat .cache/interop/classpath.txt)" PlanFiles &lt;tableLocation&gt; &lt;runs&gt; &lt;stats:on|off&gt;
 * </pre>
 *
 * Loads the table once with HadoopTables (timed apart), then runs `runs` times
 * table.newScan().planFiles() and iterates every FileScanTask, counting tasks and the delete
 * files attached to them. Only the planning is timed; the JVM start and the table load are
 * reported beside it. With stats on, the scan also keeps each file's column metrics
 * (includeColumnStats), which packice's planner always decodes. All runs share one JVM, so the
 * first includes JIT warm-up. Prints one JSON line.
 */
public final class PlanFiles {
  private PlanFiles() {}

  public static void main(String[] args) throws Exception {
    String location = args[0];
    int runs = Integer.parseInt(args[1]);
    boolean stats = "on".equals(args[2]);
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    Configuration conf = new Configuration();
    // As the interop harness: no .crc side files, no cached file system.
    conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
    conf.setBoolean("fs.file.impl.disable.cache", true);
    long l0 = System.nanoTime();
    Table table = new HadoopTables(conf).load(location);
    long l1 = System.nanoTime();

    StringBuilder wall = new StringBuilder();
    StringBuilder cpu = new StringBuilder();
    long tasks = 0;
    long deletes = 0;
    for (int r = 0; r < runs; r++) {
      long w0 = System.nanoTime();
      long c0 = os.getProcessCpuTime();
      long n = 0;
      long d = 0;
      TableScan scan = table.newScan();
      if (stats) {
        scan = scan.includeColumnStats();
      }
      try (CloseableIterable<FileScanTask> planned = scan.planFiles()) {
        for (FileScanTask task : planned) {
          n++;
          d += task.deletes().size();
        }
      }
      long c1 = os.getProcessCpuTime();
      long w1 = System.nanoTime();
      tasks = n;
      deletes = d;
      wall.append(r == 0 ? "" : ",").append((w1 - w0) / 1e9);
      cpu.append(r == 0 ? "" : ",").append((c1 - c0) / 1e9);
    }
    double sinceJvmStart = (System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime()) / 1e3;
    System.out.println(
        "{\"wallS\":[" + wall + "],\"cpuS\":[" + cpu + "],\"maxRssKiB\":" + peakRssKiB()
            + ",\"info\":{\"version\":\"" + org.apache.iceberg.IcebergBuild.version()
            + "\",\"jvm\":\"" + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
            + "\",\"tasks\":" + tasks + ",\"deletes\":" + deletes
            + ",\"loadS\":" + (l1 - l0) / 1e9 + ",\"sinceJvmStartS\":" + sinceJvmStart
            + ",\"maxHeapMiB\":" + Runtime.getRuntime().maxMemory() / (1024 * 1024)
            + ",\"processors\":" + Runtime.getRuntime().availableProcessors() + "}}");
  }

  /** VmHWM: the peak resident set, what getrusage's ru_maxrss reports on Linux. */
  private static long peakRssKiB() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }
}
