// The Data Service contract: schemas, types, limits, routes, rules, validation and the OpenAPI
// document, shared by the sandbox (server) and the client.
export * from './limits.js';
export * from './enums.js';
export * from './datasets.js';
export * from './prospect-datasets.js';
export * from './schemas/common.js';
export * from './schemas/filter-types.js';
export * from './schemas/operational.js';
export * from './schemas/businesses.js';
export * from './schemas/bulk.js';
export * from './schemas/prospect-bulk.js';
export * from './schemas/prospects.js';
export * from './schemas/webhooks.js';
export * from './rules.js';
export * from './routes.js';
export * from './validation.js';
export * from './dialect.js';
export * from './openapi.js';
export * from './columns.js';
