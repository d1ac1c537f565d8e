// Public face of the sandbox's events part: the fastify plugin, the service behind it, and the
// generator of the seeded event history that the data generator calls.
export { eventsPlugin, parseEventTimeBound, ADMIN_KEY_HEADER, type EventsPluginOptions } from './plugin.js';
export {
  EventsService,
  NoBusinessesError,
  InvalidEventTimeError,
  type EmitEventSpec,
  type EmitResult,
  type EventsServiceOptions,
} from './service.js';
export {
  generateEvents,
  DEFAULT_EVENTS_ANCHOR,
  type GenerateEventsOptions,
  type GenerateEventsResult,
} from './generate.js';
export {
  ensureEventsSchema,
  EventsStore,
  type EventScope,
  type DeliveryRow,
  type DeliveryStatus,
  type WebhookRecord,
} from './store.js';
export { DEFAULT_DELIVERY_OPTIONS, retryDelayMs, type DeliveryOptions } from './delivery.js';
export { newWebhookSecret, signDelivery } from './signing.js';
