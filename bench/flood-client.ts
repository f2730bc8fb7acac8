// The floods of bench/flood.ts, in their own process so that the load generator does not take
// CPU from what is measured beside it. FLOOD_KIND picks one:
// - `password` (the default): concurrent `PUT /v1/accounts/password`, each with a fresh random
//   email, a wrong code and a long password;
// - `graphql`: concurrent `POST /graphql` with FLOOD_API_KEY, each document asking a page no
//   earlier one asked (so no answer can come from a cache), most refused by the key's rate limit.
// FLOOD_CONNECTIONS at once for FLOOD_SECONDS; prints one JSON line of figures and statuses.
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';

const url = process.env['FLOOD_URL'] ?? '';
const statuses: Record<string, number> = {};

/** Where a flood goes, and the body of its next request. */
interface Flood {
  readonly path: string;
  readonly method: 'PUT' | 'POST';
  readonly headers: Record<string, string>;
  readonly body: () => string;
}

const password = 'x'.repeat(20) + ' '.repeat(20) + 'long password of a flood '.repeat(2);
const passwordFlood: Flood = {
  path: '/v1/accounts/password',
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: () =>
    JSON.stringify({
      email: `${randomBytes(6).toString('hex')}@gsm.hs.kr`,
      code: String(Math.floor(Math.random() * 1e8)).padStart(8, '0'),
      newPassword: `${password}${randomBytes(4).toString('hex')}`.slice(0, 100),
    }),
};

let sent = 0;
const graphqlFlood: Flood = {
  path: '/graphql',
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': process.env['FLOOD_API_KEY'] ?? '' },
  // Sizes 1-97 and pages 0-9 (coprime moduli) with a counter in the document text: no document repeats.
  body: () => {
    const n = sent++;
    return JSON.stringify({ query: `{ students(page: ${n % 10}, size: ${1 + (n % 97)}) { students { id name email } } } # ${n}` });
  },
};

const flood = process.env['FLOOD_KIND'] === 'graphql' ? graphqlFlood : passwordFlood;
const result = await autocannon({
  url: `${url}${flood.path}`,
  method: flood.method,
  connections: Number(process.env['FLOOD_CONNECTIONS'] ?? 32),
  duration: Number(process.env['FLOOD_SECONDS'] ?? 10),
  headers: flood.headers,
  requests: [{ setupRequest: (request) => ({ ...request, body: flood.body() }) }],
  setupClient: (client) => {
    client.on('response', (status: number) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  },
});
console.log(
  JSON.stringify({
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    statuses,
  }),
);
