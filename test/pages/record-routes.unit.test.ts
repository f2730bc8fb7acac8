import { expect } from 'chai';
import { recordRoutes, SENT, type Route } from '../../src/surfaces/web/routes.js';

const handler = () => Promise.resolve(SENT);
const lines = (routes: Route<unknown>[]) => routes.map((r) => `${r.method} ${r.path}${r.nav ? ' (nav)' : ''}`);

describe('pages: a kind of record in a route table (recordRoutes, src/surfaces/web/routes.ts)', () => {
  it('lists its pages in the order the router tries them, the empty form before a record of id `new`', () => {
    const all = recordRoutes('/admin/clubs', {
      list: handler,
      nav: () => 'Clubs',
      blank: handler,
      create: handler,
      detail: handler,
      update: handler,
      actions: { abolish: handler, delete: handler },
    });
    expect(lines(all)).to.deep.equal([
      'GET /admin/clubs (nav)',
      'GET /admin/clubs/new',
      'POST /admin/clubs',
      'GET /admin/clubs/:id',
      'POST /admin/clubs/:id',
      'POST /admin/clubs/:id/abolish',
      'POST /admin/clubs/:id/delete',
    ]);
  });

  it('serves no page it is not given', () => {
    expect(lines(recordRoutes('/admin/keys', { list: handler, actions: { renew: handler } }))).to.deep.equal([
      'GET /admin/keys',
      'POST /admin/keys/:id/renew',
    ]);
  });
});
