export * from './footer.js';
export * from './metrics.js';
export * from './reader.js';
export * from './schema.js';
export * from './values.js';
export * from './writer.js';
