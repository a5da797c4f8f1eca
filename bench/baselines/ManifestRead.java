import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * Baseline for bench/manifest-read.ts: Java Iceberg's ManifestReader reads the same manifest.
 *
 * <pre>
 *   java -cp "$(cat .cache/interop/classpath.txt)" bench/baselines/ManifestRead.java \
 *     &lt;manifest.avro&gt; &lt;entries&gt; &lt;runs&gt; &lt;snapshot-id&gt;
 * </pre>
 *
 * Each run iterates ManifestFiles.read(...) (live files, each copied with its stats, sequence
 * numbers and first row ids inherited), reading the spec from the file. All runs share one JVM,
 * so the first includes JIT warm-up, as the first read in a Lambda would. Prints one JSON line.
 */
public final class ManifestRead {
  private ManifestRead() {}

  public static void main(String[] args) throws Exception {
    String path = args[0];
    int entries = Integer.parseInt(args[1]);
    int runs = Integer.parseInt(args[2]);
    long snapshotId = Long.parseLong(args[3]);
    ManifestFile manifest = new Manifest(path, Files.size(Path.of(path)), snapshotId, entries);
    FileIO io = new LocalIO();
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    StringBuilder wall = new StringBuilder();
    StringBuilder cpu = new StringBuilder();
    long recordCountSum = 0;
    for (int r = 0; r < runs; r++) {
      long w0 = System.nanoTime();
      long c0 = os.getProcessCpuTime();
      int n = 0;
      long sum = 0;
      long lastRowId = -1;
      try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, io, null)) {
        for (DataFile f : reader) {
          n++;
          sum += f.recordCount();
          lastRowId = f.firstRowId() == null ? -1 : f.firstRowId();
        }
      }
      long c1 = os.getProcessCpuTime();
      long w1 = System.nanoTime();
      if (n != entries || lastRowId <= 0) {
        throw new IllegalStateException(path + ": read " + n + " entries, expected " + entries);
      }
      recordCountSum = sum;
      wall.append(r == 0 ? "" : ",").append((w1 - w0) / 1e9);
      cpu.append(r == 0 ? "" : ",").append((c1 - c0) / 1e9);
    }
    System.out.println(
        "{\"wallS\":[" + wall + "],\"cpuS\":[" + cpu + "],\"maxRssKiB\":" + peakRssKiB()
            + ",\"info\":{\"version\":\"" + org.apache.iceberg.IcebergBuild.version()
            + "\",\"jvm\":\"" + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
            + "\",\"recordCountSum\":\"" + recordCountSum + "\"}}");
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

  private static final class LocalIO implements FileIO {
    @Override
    public InputFile newInputFile(String location) {
      return org.apache.iceberg.Files.localInput(location);
    }

    @Override
    public OutputFile newOutputFile(String location) {
      throw new UnsupportedOperationException("read-only");
    }

    @Override
    public void deleteFile(String location) {
      throw new UnsupportedOperationException("read-only");
    }
  }

  /** The manifest-list entry the bench's packice reader is given, field for field. */
  private record Manifest(String path, long length, Long snapshotId, Integer addedFilesCount)
      implements ManifestFile {
    @Override
    public int partitionSpecId() {
      return 0;
    }

    @Override
    public ManifestContent content() {
      return ManifestContent.DATA;
    }

    @Override
    public long sequenceNumber() {
      return 1;
    }

    @Override
    public long minSequenceNumber() {
      return 1;
    }

    @Override
    public Long addedRowsCount() {
      return null;
    }

    @Override
    public Integer existingFilesCount() {
      return 0;
    }

    @Override
    public Long existingRowsCount() {
      return 0L;
    }

    @Override
    public Integer deletedFilesCount() {
      return 0;
    }

    @Override
    public Long deletedRowsCount() {
      return 0L;
    }

    @Override
    public List<PartitionFieldSummary> partitions() {
      return null;
    }

    @Override
    public Long firstRowId() {
      return 0L;
    }

    @Override
    public int formatVersion() {
      return 3;
    }

    @Override
    public ManifestFile copy() {
      return this;
    }
  }
}
