import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Attempt } from '../data/events/webhooks.js';
import { signedHeaders } from './signature.js';
import { checkTargetUrl, hostOf, safeLookup, UnsafeTargetError, type TargetPolicy } from './targets.js';

/** A 2xx within this long counts as delivered (docs/webhooks.md, "Delivery"). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Bytes of the receiver's answer read at most; the rest is dropped unread. */
export const RESPONSE_CAP_BYTES = 16 * 1024;
/** Characters of the answer kept with the attempt. */
export const RESPONSE_EXCERPT_CHARS = 500;

/** One message to send: where, signed with what, under which id. */
export interface Message {
  readonly url: string;
  readonly secret: string;
  /** The `webhook-id` header. */
  readonly id: string;
  readonly body: string;
}

/**
 * Sends one signed POST and says how it went. Never throws: a refused address, a timeout or a
 * broken connection is an attempt without a status. Redirects are not followed (a 3xx is a
 * failure); the answer is read up to RESPONSE_CAP_BYTES; the connection is made only to an address
 * the policy allows (src/events/targets.ts).
 */
export async function sendMessage(
  message: Message,
  policy: TargetPolicy,
  manual = false,
  now: () => Date = () => new Date(),
): Promise<Attempt> {
  const at = now();
  return sendRequest(
    {
      url: message.url,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'campus-data-service-webhooks',
        ...signedHeaders(message.secret, message.id, message.body, at),
      },
      body: message.body,
    },
    policy,
    manual,
    at,
  );
}

/** A POST to a receiver: its address, headers and body. */
export interface Delivery {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Sends one POST, under the rules of sendMessage (which signs webhooks; a back-channel logout
 * token is its own signature: src/events/logout-delivery.ts), and says how it went at `at`.
 */
export async function sendRequest(delivery: Delivery, policy: TargetPolicy, manual: boolean, at: Date): Promise<Attempt> {
  const started = performance.now();
  const attempt = (status: number | null, response: string): Attempt => ({
    at,
    status,
    durationMs: Math.round(performance.now() - started),
    response: response.slice(0, RESPONSE_EXCERPT_CHARS),
    ok: status !== null && status >= 200 && status < 300,
    manual,
  });
  try {
    const url = checkTargetUrl(delivery.url, policy);
    const { status, body } = await post(url, delivery, policy);
    return attempt(status, body);
  } catch (err) {
    return attempt(null, describeFailure(err));
  }
}

function describeFailure(err: unknown): string {
  if (err instanceof UnsafeTargetError) return `refused: ${err.message}`;
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  return `no answer: ${code || (err instanceof Error ? err.message : String(err))}`;
}

function post(url: URL, delivery: Delivery, policy: TargetPolicy): Promise<{ status: number; body: string }> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method: 'POST',
        // A name is resolved, and refused, where the socket connects; an IP literal was checked by checkTargetUrl.
        ...(isIP(hostOf(url)) ? {} : { lookup: safeLookup(policy) as never }),
        agent: false,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        headers: delivery.headers,
      },
      (res) => {
        readCapped(res).then((body) => done({ status: res.statusCode ?? 0, body }), fail);
      },
    );
    req.on('error', fail);
    req.end(delivery.body);
  });
}

/** The first RESPONSE_CAP_BYTES of an answer as text; then the connection is closed. */
function readCapped(res: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_CAP_BYTES) {
        res.destroy();
        done(Buffer.concat(chunks).subarray(0, RESPONSE_CAP_BYTES).toString('utf8'));
      }
    });
    res.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    res.on('error', fail);
  });
}
