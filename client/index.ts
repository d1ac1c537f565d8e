// The Data Service client: a typed method per operation, named errors, and the retry classification
// Temporal retry policies use.
export * from './client.js';
export * from './errors.js';
