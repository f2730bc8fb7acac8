import { expect } from 'chai';
import { migrate } from '../../src/data/migrations.js';
import { createTestDatabase } from '../helpers/database.js';

/**
 * Migrations 5 to 7: accounts approved as teachers become TEACHER unless changed since the
 * approval (a ROOT's deliberate ADMIN is kept, and listed for review); developer-console apps in
 * use before the app registry count as approved.
 */
describe('operations: migrations 5 to 7, apps in use stay usable; approved teachers become TEACHER; keys keep what they asked for', function () {
  this.timeout(60000);

  it('tells approved teachers from deliberate ADMINs, and approves the apps already registered', async () => {
    const db = await createTestDatabase('access_migrations');
    try {
      // A database at schema 4, as the code left it before the app registry and the TEACHER role.
      await migrate(db);
      await db.client
        .db()
        .collection('meta')
        .updateOne({ _id: 'schema' } as never, { $set: { version: 4 } });
      const decided = new Date('2026-03-02T01:00:00Z');
      const later = new Date('2026-05-01T01:00:00Z');
      const base = { passwordHash: 'x', createdAt: new Date('2026-03-01T00:00:00Z') };
      await db.models.accounts.insertMany([
        // Approved as a teacher, untouched since: ADMIN by the approval alone.
        {
          _id: 1,
          email: 'kim@school.test',
          role: 'ADMIN',
          approval: 'APPROVED',
          approvalDecidedAt: decided,
          approvalDecidedBy: 9,
          updatedAt: decided,
          ...base,
        },
        // Approved as a teacher, its role changed by a ROOT since (taken away and given back).
        {
          _id: 2,
          email: 'lee@school.test',
          role: 'ADMIN',
          approval: 'APPROVED',
          approvalDecidedAt: decided,
          approvalDecidedBy: 9,
          updatedAt: later,
          ...base,
        },
        // Made ADMIN by an operator, never a teacher's sign-up.
        { _id: 3, email: 'ops@school.test', role: 'ADMIN', approval: null, updatedAt: decided, ...base },
        // Approved, then made a USER by a ROOT.
        { _id: 4, email: 'park@school.test', role: 'USER', approval: 'APPROVED', approvalDecidedAt: decided, updatedAt: later, ...base },
      ]);
      const app = { secretHash: null, redirectUris: ['https://a.example/cb'], type: 'public', firstParty: false, updatedAt: decided };
      await db.models.oauthClients.collection.insertMany([
        { _id: 'owned', name: 'Club app', scopes: ['self:read'], ownerAccountId: 1, createdAt: decided, ...app },
        { _id: 'school', name: 'School app', scopes: ['self:read'], ownerAccountId: null, createdAt: decided, ...app },
      ] as never[]);

      const applied = await migrate(db);
      expect(applied.map((m) => m.version)).to.deep.equal([5, 6, 7]);
      const roles = Object.fromEntries((await db.models.accounts.find({}).lean()).map((a) => [a.email, a.role]));
      expect(roles).to.deep.equal({
        'kim@school.test': 'TEACHER',
        'lee@school.test': 'ADMIN',
        'ops@school.test': 'ADMIN',
        'park@school.test': 'USER',
      });
      const log = await db.models.accessAudit.find({}).sort({ targetId: 1 }).lean();
      expect(log.map((e) => [e.actorKind, e.action, e.targetLabel, (e.detail as { to: string }).to])).to.deep.equal([
        ['MIGRATION', 'ROLE_CHANGED', 'kim@school.test', 'TEACHER'],
        ['MIGRATION', 'ROLE_CHANGED', 'lee@school.test', 'ADMIN'],
      ]);
      expect(log[1]?.detail).to.deep.include({ kept: true });
      const owned = await db.models.oauthClients.findOne({ _id: 'owned' }).lean();
      expect(owned?.approvedAt?.toISOString()).to.equal(decided.toISOString());
      const school = await db.models.oauthClients.findOne({ _id: 'school' }).lean();
      expect(school?.approvedAt ?? null).to.equal(null);
    } finally {
      await db.drop();
    }
  });
  it('migration 7: an owned key keeps everything it asked for; what an admin decided stays approved or refused', async () => {
    const db = await createTestDatabase('key_migration');
    try {
      await migrate(db);
      await db.client
        .db()
        .collection('meta')
        .updateOne({ _id: 'schema' } as never, { $set: { version: 6 } });
      const now = new Date('2026-06-01T00:00:00Z');
      const key = (id: string, fields: Record<string, unknown>) => ({
        hash: id.repeat(8),
        prefix: id,
        createdAt: now,
        renewedAt: now,
        expiresAt: new Date('2027-01-01T00:00:00Z'),
        revokedAt: null,
        ...fields,
      });
      await db.models.apiKeys.collection.insertMany([
        // A teacher's key: everything granted at once, never decided.
        key('a', { ownerAccountId: 1, scopes: ['STUDENT_READ', 'CLUB_READ'], pendingScopes: [], refusedScopes: [], decidedAt: null }),
        // A student's key whose STUDENT_READ an admin approved.
        key('b', { ownerAccountId: 2, scopes: ['CLUB_READ', 'STUDENT_READ'], pendingScopes: [], refusedScopes: [], decidedAt: now }),
        // A student's key still waiting, and one refused.
        key('c', { ownerAccountId: 2, scopes: ['CLUB_READ'], pendingScopes: ['STUDENT_READ'], refusedScopes: [], decidedAt: null }),
        key('d', { ownerAccountId: 2, scopes: ['CLUB_READ'], pendingScopes: [], refusedScopes: ['STUDENT_READ'], decidedAt: now }),
        // An operator's key.
        key('e', { ownerAccountId: null, scopes: ['NEIS_READ'], pendingScopes: [], refusedScopes: [], decidedAt: null }),
      ] as never[]);
      expect((await migrate(db)).map((m) => m.version)).to.deep.equal([7]);
      const keys = await db.client.db().collection('api_keys').find({}).sort({ prefix: 1 }).toArray();
      expect(keys.map((k) => [k['prefix'], k['scopes'], k['approvedScopes'], k['refusedScopes'], 'pendingScopes' in k])).to.deep.equal([
        ['a', ['STUDENT_READ', 'CLUB_READ'], [], [], false],
        ['b', ['CLUB_READ', 'STUDENT_READ'], ['CLUB_READ', 'STUDENT_READ'], [], false],
        ['c', ['CLUB_READ', 'STUDENT_READ'], [], [], false],
        ['d', ['CLUB_READ', 'STUDENT_READ'], ['CLUB_READ'], ['STUDENT_READ'], false],
        ['e', ['NEIS_READ'], [], [], false],
      ]);
      // Run again (an interrupted migration is run again): nothing changes.
      await db.client
        .db()
        .collection('meta')
        .updateOne({ _id: 'schema' } as never, { $set: { version: 6 } });
      await migrate(db);
      expect(await db.client.db().collection('api_keys').find({}).sort({ prefix: 1 }).toArray()).to.deep.equal(keys);
    } finally {
      await db.drop();
    }
  });
});
