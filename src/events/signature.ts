import { createHmac } from 'node:crypto';

/*
 * Signatures the Standard Webhooks way (standardwebhooks.com, "Signature scheme"), so receivers
 * verify with that project's libraries in any language: the secret is `whsec_` + base64 of random
 * bytes; the signed content is `<webhook-id>.<webhook-timestamp>.<body>`; the signature header is
 * `v1,` + base64 of its HMAC-SHA256 under the secret's bytes.
 */

/** Secrets are made by src/data/events/webhooks.ts (newWebhookSecret). */
const PREFIX = 'whsec_';

/** The headers of one delivery attempt: the message id (the same on every retry), its time in Unix seconds, the signature. */
export function signedHeaders(secret: string, id: string, body: string, at: Date): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
