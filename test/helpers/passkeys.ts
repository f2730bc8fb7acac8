import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { buildTestApp, type TestApp, type TestAppOptions } from './app.js';

/**
 * Passkeys in tests. Browsers offer passkeys only at a domain name (a relying-party id is never
 * an IP address), so the app runs at http://localhost:PORT (AUTH_URL, BASE_URL and USERINFO_URL
 * say so) and `url` is that address: the CSRF check compares the Origin header with it. A
 * software authenticator (P-256, `none` attestation, user verified) makes the responses a browser
 * would send, so HTTP tests can also craft the ones a browser never would: a replayed assertion,
 * a counter that goes backwards, another origin.
 */

/** The real app on a real listener, as `buildTestApp` makes it, public at http://localhost:PORT. */
export async function buildLocalhostApp(name: string, options: TestAppOptions = {}): Promise<TestApp> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const t = await buildTestApp(name, {
    ...options,
    port,
    env: { AUTH_URL: origin, BASE_URL: origin, USERINFO_URL: origin, ...options.env },
  });
  return {
    app: t.app,
    db: t.db,
    config: t.config,
    url: origin,
    server: t.server,
    get logs() {
      return t.logs;
    },
    logText: () => t.logText(),
    request: (path, init) => fetch(`${origin}${path}`, init),
    close: () => t.close(),
  };
}

/** What a software authenticator puts in a response (defaults: what a real one would). */
export interface Gesture {
  /** The page's origin the browser writes in the client data. */
  readonly origin: string;
  /** The relying-party id whose hash the authenticator data carries (defaults to the options' `rpId`). */
  readonly rpId?: string;
  /** The signature counter to report (defaults to one more than the last). */
  readonly counter?: number;
  /** Whether the user was verified (PIN, biometrics). */
  readonly userVerified?: boolean;
}

/** One passkey of a software authenticator: a P-256 key pair, a credential id, a counter. */
export class SoftPasskey {
  readonly id = randomBytes(16).toString('base64url');
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private userHandle = '';
  counter: number;

  /** `counter`: where this authenticator's signature counter starts (0: an authenticator that keeps none). */
  constructor(counter = 1) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.counter = counter;
  }

  /** The answer to `navigator.credentials.create(options)`: a new passkey, `none` attestation. */
  register(options: PublicKeyCredentialCreationOptionsJSON, gesture: Gesture): string {
    this.userHandle = options.user.id;
    const clientDataJSON = clientData('webauthn.create', options.challenge, gesture.origin);
    const jwk = this.publicKey.export({ format: 'jwk' });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ]);
    const idBytes = Buffer.from(this.id, 'base64url');
    const attested = Buffer.concat([Buffer.alloc(16), u16(idBytes.length), idBytes, Buffer.from(isoCBOR.encode(cose))]);
    const authData = authenticatorData(gesture.rpId ?? options.rp.id ?? '', 0x40, this.counter, gesture.userVerified, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, never> | Uint8Array>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, never>()],
        ['authData', authData],
      ]),
    );
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
    });
  }

  /** The answer to `navigator.credentials.get(options)`, signed with this passkey's key. */
  assert(options: PublicKeyCredentialRequestOptionsJSON, gesture: Gesture): string {
    this.counter = gesture.counter ?? this.counter + 1;
    const clientDataJSON = clientData('webauthn.get', options.challenge, gesture.origin);
    const authData = authenticatorData(gesture.rpId ?? options.rpId ?? '', 0, this.counter, gesture.userVerified, Buffer.alloc(0));
    const signer = createSign('sha256');
    signer.update(Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()]));
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signer.sign(this.privateKey).toString('base64url'),
        userHandle: this.userHandle,
      },
    });
  }
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

/** rpIdHash, flags (user present, user verified unless told not, plus `extra`), counter, then `attested`. */
function authenticatorData(rpId: string, extra: number, counter: number, userVerified = true, attested: Buffer): Buffer {
  const flags = 0x01 | (userVerified ? 0x04 : 0) | extra;
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), count, attested]);
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}
