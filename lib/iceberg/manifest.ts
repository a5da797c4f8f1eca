/**
 * Manifests (spec "Manifests"), one module per concept as iceberg-rust's
 * `spec/manifest/` splits them: the data file, the manifest entry, the partition
 * summary, the reader and the writer. This file only re-exports.
 */
export { ManifestContent } from './manifest-list.js';
export { type DataFile, FileContent, type FileFormat, dataFileType, isFileFormat } from './manifest/data-file.js';
export { type ManifestEntry, ManifestEntryStatus, manifestAvroSchema, manifestEntryType } from './manifest/manifest-entry.js';
export {
  type ManifestHeader,
  type OpenManifest,
  type ReadManifestFileOptions,
  type ReadManifestOptions,
  readManifest,
  readManifestBatches,
  manifestSourceBatches,
  readManifestFile,
} from './manifest/reader.js';
export { ManifestWriter, type ManifestWriterOptions } from './manifest/writer.js';
