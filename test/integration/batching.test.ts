import { expect } from 'chai';
import type { CommandStartedEvent } from 'mongodb';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectOk } from '../helpers/expect.js';
import { buildClub, buildProject, buildStudent, insertSchool, issueKey } from '../helpers/factories.js';
import type { Database } from '../../src/data/database.js';

/**
 * DataLoader batching: the number of database commands of one request stays a small constant
 * whatever the page size. Counted from the driver's own command events, not from our code.
 */
describe('batching: database commands per request', () => {
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

  it('a page of 300 students with both clubs costs 3 queries (count, page, clubs)', async () => {
    const issued = await commandsOf('/v1/students?size=300&sortBy=NAME');
    expect(issued.sort()).to.deep.equal(['aggregate students', 'find clubs', 'find students']);
  });

  it('a page of 10 students costs the same 3 queries', async () => {
    const issued = await commandsOf('/v1/students?size=10&sortBy=EMAIL');
    expect(issued).to.have.length(3);
  });

  it('100 clubs with leaders and participants cost 4 queries (count, page, leaders, members)', async () => {
    const issued = await commandsOf('/v1/clubs?size=100&includeLeaderInParticipants=true');
    expect(issued.sort()).to.deep.equal(['aggregate clubs', 'find clubs', 'find students', 'find students']);
  });

  it('100 projects with clubs and participants cost 4 queries (count, page, clubs, students)', async () => {
    const issued = await commandsOf('/v1/projects?size=100');
    expect(issued.sort()).to.deep.equal(['aggregate projects', 'find clubs', 'find projects', 'find students']);
  });

  it('a repeated query at the same data version is answered without any query', async () => {
    await commandsOf('/v1/students?size=300&sortBy=ID');
    const again = await commandsOf('/v1/students?size=300&sortBy=ID');
    expect(again).to.have.length(0);
  });
});
