package packice.interop;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * {@code Harness delete}: Java Iceberg 1.12 deletes rows by position, as an engine's merge-on-read
 * DELETE does. It plans the current snapshot, reads each data file in file order to find the
 * positions of rows whose column equals one of the given values (compared as strings) and that no
 * position delete or deletion vector removes yet, and writes them with Java's own writers: on a v3
 * table one deletion vector per data file (BaseDVFileWriter, merged with the file's live vector,
 * which the commit replaces); on a v2 table position delete files, one per partition or, with
 * {@code --granularity file}, one per data file. Everything commits in one RowDelta validated from
 * the snapshot it planned. Prints {@code {snapshotId, deleted, deleteFiles, removedDeleteFiles}}.
 */
final class RowDeletes {
  private RowDeletes() {}

  static void delete(Table table, String column, Set<String> values, boolean perFile, PrintStream out)
      throws IOException {
    Snapshot base = table.currentSnapshot();
    if (base == null) {
      throw new IllegalArgumentException("table " + table.location() + " has no snapshot");
    }
    int formatVersion = ((HasTableOperations) table).operations().current().formatVersion();
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f));
    // per data file: its positions to delete, its live deletion vector
    Map<String, List<Scenarios.Pos>> hits = new LinkedHashMap<>();
    Map<String, DeleteFile> liveDvs = new LinkedHashMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(base.snapshotId()).planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        List<DeleteFile> positional = new ArrayList<>();
        for (DeleteFile d : task.deletes()) {
          if (d.content() == FileContent.POSITION_DELETES) {
            positional.add(d);
            if (ContentFileUtil.isDV(d)) {
              liveDvs.put(file.location(), d);
            }
          }
        }
        PositionDeleteIndex deleted = loader.loadPositionDeletes(positional, file.location());
        List<Scenarios.Pos> found = new ArrayList<>();
        try (CloseableIterable<Record> rows =
            Parquet.read(table.io().newInputFile(file.location()))
                .project(table.schema())
                .createReaderFunc(schema -> GenericParquetReaders.buildReader(table.schema(), schema))
                .build()) {
          long pos = 0;
          for (Record row : rows) {
            if (!deleted.isDeleted(pos) && values.contains(String.valueOf(row.getField(column)))) {
              found.add(Scenarios.pos(file, pos));
            }
            pos++;
          }
        }
        if (!found.isEmpty()) {
          hits.put(file.location(), found);
        }
      }
    }

    RowDelta delta =
        table
            .newRowDelta()
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist(hits.keySet())
            .validateDeletedFiles();
    Scenarios.Files files = new Scenarios.Files(table);
    List<DeleteFile> added = new ArrayList<>();
    List<DeleteFile> removed = new ArrayList<>();
    if (formatVersion >= 3) {
      List<Scenarios.Pos> all = hits.values().stream().flatMap(List::stream).toList();
      DeleteWriteResult dvs =
          files.deletionVectors(
              all,
              path -> {
                DeleteFile old = liveDvs.get(path);
                return old == null ? null : loader.loadPositionDeletes(List.of(old), path);
              });
      added.addAll(dvs.deleteFiles());
      removed.addAll(dvs.rewrittenDeleteFiles());
    } else {
      Map<String, List<Scenarios.Pos>> byFile = new LinkedHashMap<>();
      for (List<Scenarios.Pos> found : hits.values()) {
        DataFile file = found.get(0).file();
        String key = perFile ? file.location() : file.specId() + "/" + file.partition();
        byFile.computeIfAbsent(key, k -> new ArrayList<>()).addAll(found);
      }
      for (List<Scenarios.Pos> group : byFile.values()) {
        added.add(files.positionDeletes(group));
      }
    }
    int deleted = hits.values().stream().mapToInt(List::size).sum();
    if (deleted > 0) {
      added.forEach(delta::addDeletes);
      removed.forEach(delta::removeDeletes);
      delta.commit();
      table.refresh();
    }

    Writer writer = new OutputStreamWriter(out, StandardCharsets.UTF_8);
    JsonGenerator gen = new JsonFactory().createGenerator(writer);
    gen.writeStartObject();
    gen.writeStringField("snapshotId", Long.toString(table.currentSnapshot().snapshotId()));
    gen.writeNumberField("deleted", deleted);
    gen.writeNumberField("deleteFiles", added.size());
    gen.writeNumberField("removedDeleteFiles", removed.size());
    gen.writeEndObject();
    gen.flush();
    writer.write('\n');
    writer.flush();
  }
}
