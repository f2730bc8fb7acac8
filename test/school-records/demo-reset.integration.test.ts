import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/data/database.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { createAccount, signInToConsole } from '../helpers/oauth.js';

/**
 * `campus seed --demo` keeps the school's data (the demo keeps your work): run again
 * after an import, it leaves the import and says so; `--reset` replaces the school on purpose,
 * as an entry of the audit log, and the import's batch then reads as superseded, its undo
 * refused with the reason.
 */
describe('school records: campus seed --demo keeps the school; --reset replaces it in the audit log', function () {
  this.timeout(180000);
  let uri: string;
  let db: Database;
  let dir: string;
  const campus = (...args: string[]) => runCampus({ MONGODB_URI: uri }, args);

  before(async () => {
    uri = testDatabaseUri('demo_reset');
    db = await openDatabase(uri);
    dir = mkdtempSync(join(tmpdir(), 'demo-reset-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db.connection.dropDatabase();
    await db.close();
  });

  it('after an applied import, seed --demo keeps it; --reset drops it, shows in the audit log, and the import reads as superseded', async () => {
    const first = await campus('seed', '--demo');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout.split('\n')[0]).to.equal('Demo school loaded: 228 students, 16 clubs, 24 projects.');

    const file = join(dir, 'students.csv');
    writeFileSync(
      file,
      ['학생명,학번,이메일,성별,소속,호실,전공동아리', '김새봄,2117,spring@gsm.hs.kr,여자,일반학생,318,Quokka'].join('\r\n'),
    );
    const imported = await campus('import', 'students', file, '--apply', '--json');
    expect(imported.code, imported.stderr).to.equal(0);
    const importBatch = (JSON.parse(imported.stdout) as { batchId: string }).batchId;
    expect(await db.models.students.countDocuments({ email: 'spring@gsm.hs.kr' })).to.equal(1);

    // Run again (as `npm run demo` does): the import stays, and the command says so.
    const again = await campus('seed', '--demo');
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout.split('\n').slice(0, 2)).to.deep.equal([
      'The database already holds a school (229 students, 16 clubs, 24 projects): kept as it is, with every import and edit.',
      'To replace it with the demo school, run `campus seed --demo --reset` (recorded in the audit log).',
    ]);
    expect(await db.models.students.countDocuments({ email: 'spring@gsm.hs.kr' })).to.equal(1);
    expect((await db.models.auditBatches.findById(importBatch).lean())?.status).to.equal('APPLIED');

    // --reset: replaced on purpose, and recorded.
    const reset = await campus('seed', '--demo', '--reset', '--json');
    expect(reset.code, reset.stderr).to.equal(0);
    const summary = JSON.parse(reset.stdout) as Record<string, unknown>;
    expect(summary).to.deep.include({
      outcome: 'reset',
      students: 228,
      clubs: 16,
      projects: 24,
      replaced: { students: 229, clubs: 16, projects: 24 },
      superseded: 1,
    });
    const resetBatch = String(summary['batchId']);
    expect(await db.models.students.countDocuments({ email: 'spring@gsm.hs.kr' })).to.equal(0);
    expect(await db.models.auditBatches.findById(resetBatch).lean()).to.deep.include({
      action: 'RESET',
      status: 'APPLIED',
      actorKind: 'CLI',
      summary: 'Demo school loaded (228 students, 16 clubs, 24 projects), replacing 229 students, 16 clubs, 24 projects',
    });
    expect(await db.models.auditBatches.findById(importBatch).lean()).to.deep.include({ status: 'SUPERSEDED', supersededBy: resetBatch });

    // The admin console: the reset is named at the top of the audit log; the import's undo says why it cannot be.
    const admin = { email: 'reset-admin@gsm.hs.kr', password: 'reset admin long password' };
    await db.models.accounts.updateOne({ _id: await createAccount(db, admin.email, admin.password) }, { $set: { role: 'ADMIN' } });
    const t: TestApp = await buildTestApp('demo_reset_console', { db });
    try {
      const adminConsole = await signInToConsole(t, admin, '/admin/audit');
      const log = await adminConsole.get('/admin/audit');
      expect(log.html).to.match(/CLI이\(가\) 학교 데이터 전체를 데모 학교로 초기화했습니다 \(campus seed --demo --reset\)/);
      expect(log.html).to.include(`<a href="/admin/audit?batchId=${resetBatch}">초기화 보기</a>`);
      // The import's entry is still listed, as superseded.
      expect(log.html).to.include('김새봄').and.include('초기화로 대체됨');
      const batch = await adminConsole.get(`/admin/audit?batchId=${importBatch}`);
      expect(batch.html).to.include(`<dd data-status="SUPERSEDED">초기화로 대체됨</dd>`);
      expect(batch.html).to.not.include('action="/admin/audit/undo"');
      const undo = await adminConsole.post('/admin/audit/undo', { batchId: importBatch });
      expect(undo.res.status).to.equal(422);
      expect(undo.html).to.match(
        /에 학교 데이터 전체가 데모 학교로 초기화되어\(campus seed --demo --reset\) 이 변경은 대체되었습니다; 되돌릴 수 없습니다/,
      );
      const undoReset = await adminConsole.post('/admin/audit/undo', { batchId: resetBatch });
      expect(undoReset.res.status).to.equal(422);
      expect(undoReset.html).to.include('초기화는 되돌릴 수 없습니다; 이전 데이터는 백업에서 복원하세요 (campus restore)');
    } finally {
      await t.close();
    }
  });
});
