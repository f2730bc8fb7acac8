// An app's server that keeps a copy of the school's clubs, with no person signed in: it gets a
// machine token (OAuth client credentials) with its app's id and secret, and the typed client
// renews the token before it expires. The copy is kept with its ETag; the next run sends
// If-None-Match and, while no club changed, gets a 304 without a body. See README.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { clientCredentials, createClient, type paths } from '@campus/client';

/** The envelope of GET /v1/clubs, typed from the service's OpenAPI document. */
type ClubsAnswer = paths['/v1/clubs']['get']['responses'][200]['content']['application/json'];
interface Copy {
  readonly etag: string;
  readonly syncedAt: string;
  readonly answer: ClubsAnswer;
}

const issuer = process.env['CAMPUS_ISSUER'] ?? 'http://127.0.0.1:8080';
const baseUrl = process.env['CAMPUS_URL'] ?? issuer;
const clientId = process.env['CLIENT_ID'];
const clientSecret = process.env['CLIENT_SECRET'];
const out = process.env['OUT'] ?? '.cache/clubs.json';
// Run once (a cron job), or every N seconds (a long-running server).
const every = Number(process.env['EVERY_SECONDS'] ?? 0);

if (!clientId || !clientSecret) {
  console.error('nightly-sync: set CLIENT_ID and CLIENT_SECRET (an app registered with --grant client_credentials --data-scope CLUB_READ)');
  process.exit(2);
}

// One token source for the whole life of the server: it asks again only when the token is about to expire.
const tokens = clientCredentials({ issuer, clientId, clientSecret, scope: 'CLUB_READ' });
const campus = createClient({ baseUrl, tokens });

function readCopy(): Copy | undefined {
  try {
    return JSON.parse(readFileSync(out, 'utf8')) as Copy;
  } catch {
    return undefined;
  }
}

async function sync(): Promise<void> {
  const copy = readCopy();
  const { data, error, response } = await campus.GET('/v1/clubs', {
    params: { query: { size: 1000, includeLeaderInParticipants: true } },
    headers: copy ? { 'If-None-Match': copy.etag } : {},
  });
  if (response.status === 304 && copy) {
    console.log(`nightly-sync: clubs unchanged since ${copy.syncedAt} (304 Not Modified)`);
    return;
  }
  if (!data) throw new Error(`could not read the clubs: ${response.status} ${error ? error.message : ''}`);
  const etag = response.headers.get('ETag') ?? '';
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ etag, syncedAt: new Date().toISOString(), answer: data } satisfies Copy));
  const members = data.data.clubs.reduce((sum, club) => sum + club.participants.length, 0);
  console.log(`nightly-sync: ${data.data.clubs.length} clubs, ${members} members written to ${out}`);
}

try {
  await sync();
  while (every > 0) {
    await new Promise((resolve) => setTimeout(resolve, every * 1000));
    await sync();
  }
} catch (err) {
  console.error(`nightly-sync: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
