import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectOk } from '../helpers/expect.js';
import { buildStudent, insertSchool, issueKey } from '../helpers/factories.js';

describe('data API: smoke, the app over HTTP', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await buildTestApp('smoke');
    await insertSchool(t.db, { students: [buildStudent({ _id: 1, name: 'Kim' })] });
    key = await issueKey(t.db);
  });
  after(() => t.close());

  it('serves /v1/students through GraphQL', async () => {
    const data = await expectOk<{ totalElements: number }>(await t.request('/v1/students', { headers: { 'X-API-KEY': key } }));
    expect(data.totalElements).to.equal(1);
  });
});
