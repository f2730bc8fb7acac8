import { expect } from 'chai';
import type { CommandStartedEvent } from 'mongodb';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import type { Database } from '../../src/data/database.js';

/**
 * Database commands per request, counted from the driver's own command events, not from our
 * code. Students, clubs and projects are read once per data version into the read model
 * (src/data/school/read-model.ts): the first request after a change costs that one load (three finds,
 * shared by concurrent requests), every later one none, whatever it asks for. (Before the read
 * model each request cost a count and a page plus one query per kind of reference.)
 */
describe('data API: batching, database commands per request', () => {
  let db: Database & { drop(): Promise<void> };
  let t: TestApp;
  let key: string;
  const commands: { name: string; collection: unknown }[] = [];
  const DATA_COLLECTIONS = new Set(['students', 'clubs', 'projects']);

  before(async function () {
    this.timeout(60000);
    db = await createTestDatabase('batching', { monitorCommands: true });
    db.client.on('commandStarted', (e: CommandStartedEvent) =>
      commands.push({ name: e.commandName, collection: e.command[e.commandName] }),
    );
    const clubs = Array.from({ length: 110 }, (_, i) =>
      buildClub({ _id: i + 1, type: i % 2 === 0 ? 'MAJOR_CLUB' : 'AUTONOMOUS_CLUB', leaderId: i + 1 }),
    );
    const students = Array.from({ length: 320 }, (_, i) =>
      buildStudent({
        _id: i + 1,
        email: `b${i + 1}@school.test`,
        majorClubId: 1 + 2 * (i % 55),
        autonomousClubId: 2 + 2 * (i % 55),
      }),
    );
    const projects = Array.from({ length: 100 }, (_, i) =>
      buildProject({ _id: i + 1, clubId: (i % 110) + 1, participantIds: [i + 1, i + 2, i + 3] }),
    );
    await insertSchool(db, { students, clubs, projects });
    t = await buildTestApp('batching', { db });
    key = await issueKey(db);
  });
  after(async () => {
    await t.close();
    await db.drop();
  });

  /** Runs a request and returns the commands it sent to the data collections (key and version look-ups excluded). */
  async function commandsOf(path: string): Promise<string[]> {
    commands.length = 0;
    const res = await t.request(path, { headers: { 'X-API-KEY': key } });
    await expectOk(res);
    return commands.filter((c) => DATA_COLLECTIONS.has(String(c.collection))).map((c) => `${c.name} ${String(c.collection)}`);
  }

  const LOAD = ['find clubs', 'find projects', 'find students'];

  it('the first request after a change loads the school once: one find per collection', async () => {
    await db.versions.bump('data');
    const issued = await commandsOf('/v1/students?size=300&sortBy=NAME');
    expect(issued.sort()).to.deep.equal(LOAD);
  });

  it('later requests of any list, page size, sort, filter or reference cost no query', async () => {
    await commandsOf('/v1/students?size=1');
    expect(await commandsOf('/v1/students?size=300&sortBy=EMAIL&sortDirection=DESC')).to.deep.equal([]);
    expect(await commandsOf('/v1/students?size=10&name=student&grade=1')).to.deep.equal([]);
    expect(await commandsOf('/v1/clubs?size=100&includeLeaderInParticipants=true')).to.deep.equal([]);
    expect(await commandsOf('/v1/projects?size=100&sortBy=NAME')).to.deep.equal([]);
    expect(await commandsOf('/v1/projects?clubId=3')).to.deep.equal([]);
  });

  it('concurrent requests after a change share one load', async () => {
    await db.versions.bump('data');
    commands.length = 0;
    const paths = ['/v1/students?size=5', '/v1/clubs?size=7', '/v1/projects?size=9', '/v1/students?sortBy=GRADE', '/v1/clubs?sortBy=NAME'];
    await Promise.all(paths.map(async (path) => expectOk(await t.request(path, { headers: { 'X-API-KEY': key } }))));
    const issued = commands.filter((c) => DATA_COLLECTIONS.has(String(c.collection))).map((c) => `${c.name} ${String(c.collection)}`);
    expect(issued.sort()).to.deep.equal(LOAD);
  });

  it('a repeated query at the same data version is answered without any query', async () => {
    await commandsOf('/v1/students?size=300&sortBy=ID');
    const again = await commandsOf('/v1/students?size=300&sortBy=ID');
    expect(again).to.have.length(0);
  });
});
