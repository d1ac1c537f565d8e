// Webhook registration (spec 4.5, 2.8) and the payload the service delivers to a registered URL
// (reference README: signed with HMAC-SHA256 of "{X-Timestamp}.{raw body}").
import { Type, type Static } from 'typebox';
import { BusinessEventTypeSchema, EntityTypeSchema } from '../enums.js';
import {
  Nullable,
  OpenObject,
  RequestContextField,
  ResponseContextSchema,
  StrictObject,
  Timestamp,
} from './common.js';

export const RegisterWebhookRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    partner_id: Type.String({ minLength: 1 }),
    webhook_url: Type.String({
      pattern: '^https?://\\S+$',
      description: 'http(s) address that receives deliveries.',
    }),
  },
  { title: 'RegisterWebhookRequest' },
);

/** One URL per partner; registering again replaces the URL and issues a new secret. */
export const WebhookRegistrationResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    created_at: Timestamp(),
    last_modified_time: Timestamp(),
    webhook_url: Type.String(),
    webhook_secret: Type.String({ description: 'URL-safe base64 of the HMAC key.' }),
  },
  { title: 'WebhookRegistrationResponse' },
);
export type WebhookRegistrationResponse = Static<typeof WebhookRegistrationResponseSchema>;

export const WebhookPartnerParamsSchema = Type.Object(
  { partner_id: Type.String({ minLength: 1 }) },
  { title: 'WebhookPartnerParams' },
);

export const DeleteWebhookResponseSchema = StrictObject(
  { response_context: ResponseContextSchema },
  { title: 'DeleteWebhookResponse' },
);

/** Body of a webhook delivery (`POST`, `Content-Type: application/json`). */
export const WebhookDeliverySchema = StrictObject(
  {
    tenant_id: Nullable(Type.String()),
    partner_id: Type.String(),
    event_id: Type.String(),
    event_name: BusinessEventTypeSchema,
    entity_id: Type.String(),
    entity_type: EntityTypeSchema,
    data: OpenObject('Event details; fields depend on the event type.'),
    enrollment_key: Type.String(),
  },
  { title: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
