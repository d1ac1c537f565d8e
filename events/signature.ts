// Webhook delivery signatures as receivers check them: `X-Signature` is the URL-safe base64 of
// HMAC-SHA256 over the bytes "{X-Timestamp}.{raw body}", keyed with the URL-safe-base64-decoded
// webhook secret; timestamps further than 300 s from now are refused, digests compared in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS } from '../contract/limits.js';

/** Why a delivery was refused before its body was read; the receiver answers 401 with this code. */
export type SignatureFailure = 'missing_signature' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature';

const SIGNATURE_FORM = /^[A-Za-z0-9_-]{43}=?$/;
const DIGEST_BYTES = 32;

/** The secret's key bytes; accepts the padded (as issued) and unpadded forms. */
export function secretKey(webhookSecret: string): Buffer {
  return Buffer.from(webhookSecret.trim(), 'base64url');
}

/** HMAC-SHA256 of "{timestamp}.{raw body}". `timestamp` is the header text exactly as received. */
export function deliveryDigest(key: Buffer, timestamp: string, rawBody: Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${timestamp}.`).update(rawBody).digest();
}

/** The `X-Signature` a sender puts on a delivery: URL-safe base64 with `=` padding (44 characters). */
export function signDeliveryBody(webhookSecret: string, timestamp: number | string, rawBody: string): string {
  return deliveryDigest(secretKey(webhookSecret), String(timestamp), Buffer.from(rawBody))
    .toString('base64')
    .replaceAll('+', '-')
    .replaceAll('/', '_');
}

/** Checks `X-Timestamp` (unix seconds) against the clock; returns the failure, or undefined when fresh. */
export function checkTimestamp(
  header: string | undefined,
  nowMs: number,
  toleranceSeconds = WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS,
): SignatureFailure | undefined {
  if (header === undefined || !/^\d{1,12}$/.test(header)) return 'bad_timestamp';
  return Math.abs(nowMs / 1000 - Number(header)) > toleranceSeconds ? 'stale_timestamp' : undefined;
}

/** The 32 digest bytes an `X-Signature` header carries (padded or not), or undefined when malformed. */
export function decodeSignature(header: string | undefined): Buffer | undefined {
  if (header === undefined || !SIGNATURE_FORM.test(header)) return undefined;
  const bytes = Buffer.from(header, 'base64url');
  return bytes.length === DIGEST_BYTES ? bytes : undefined;
}

/** Constant-time comparison of two digests of equal length. */
export function digestsMatch(expected: Buffer, given: Buffer): boolean {
  return expected.length === given.length && timingSafeEqual(expected, given);
}
