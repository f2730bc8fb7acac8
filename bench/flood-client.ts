// The flood of the self-service bench row (bench/flood.ts), in its own process so that its
// load generator does not take CPU from the logins measured beside it: FLOOD_CONNECTIONS
// concurrent `PUT /v1/accounts/password` with a fresh random email, a wrong code and a long
// password each, for FLOOD_SECONDS; prints one JSON line of figures and statuses.
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';

const url = process.env['FLOOD_URL'] ?? '';
const statuses: Record<string, number> = {};
const password = 'x'.repeat(20) + ' '.repeat(20) + 'long password of a flood '.repeat(2);
const result = await autocannon({
  url: `${url}/v1/accounts/password`,
  method: 'PUT',
  connections: Number(process.env['FLOOD_CONNECTIONS'] ?? 32),
  duration: Number(process.env['FLOOD_SECONDS'] ?? 10),
  headers: { 'content-type': 'application/json' },
  requests: [
    {
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          email: `${randomBytes(6).toString('hex')}@gsm.hs.kr`,
          code: String(Math.floor(Math.random() * 1e8)).padStart(8, '0'),
          newPassword: `${password}${randomBytes(4).toString('hex')}`.slice(0, 100),
        }),
      }),
    },
  ],
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
