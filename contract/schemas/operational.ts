// Health and version endpoints (spec 4.1): plain JSON strings, no envelope.
import { Type } from 'typebox';
import { MAX_RESPONSE_BYTES } from '../limits.js';

export const HealthcheckResponseSchema = Type.String({ title: 'HealthcheckResponse' });

/** A JSON string is at least its two quotes, so fewer than 2 bytes cannot be answered. */
export const MIN_RESPONSE_BYTES = 2;

export const HealthcheckPayloadParamsSchema = Type.Object(
  { response_bytes: Type.Integer({ minimum: MIN_RESPONSE_BYTES, maximum: MAX_RESPONSE_BYTES }) },
  { title: 'HealthcheckPayloadParams' },
);
/** A JSON string whose encoded body is `response_bytes` bytes long. */
export const HealthcheckPayloadResponseSchema = Type.String({ title: 'HealthcheckPayloadResponse' });

export const VersionResponseSchema = Type.String({ title: 'VersionResponse', description: 'e.g. "0.2.286"' });
