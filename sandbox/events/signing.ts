// Webhook secrets and delivery signatures: X-Signature is the URL-safe base64 HMAC-SHA256 of
// "{X-Timestamp}.{raw body}", keyed with the decoded secret, exactly as receivers verify it.
import { createHmac, randomBytes } from 'node:crypto';

/**
 * RFC 4648 URL-safe base64 WITH `=` padding, the form Python's `urlsafe_b64encode` (the provider's
 * stack) produces; Node's `base64url` drops the padding, and receivers comparing strings would differ.
 */
export function toUrlSafeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replaceAll('+', '-').replaceAll('/', '_');
}

/** A fresh webhook secret: 32 random bytes, URL-safe base64 (44 characters). */
export function newWebhookSecret(): string {
  return toUrlSafeBase64(randomBytes(32));
}

/** The X-Signature value for one delivery attempt. Accepts the secret padded or not. */
export function signDelivery(secret: string, timestampSeconds: number, rawBody: string): string {
  const key = Buffer.from(secret, 'base64url');
  return toUrlSafeBase64(createHmac('sha256', key).update(`${timestampSeconds}.${rawBody}`).digest());
}
