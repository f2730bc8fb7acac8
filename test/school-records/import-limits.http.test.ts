import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeflateRaw, crc32 } from 'node:zlib';
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import { FILE_LIMITS } from '../../src/data/school/spreadsheet.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { createAccount, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * Imports that cannot take the service down (src/data/school/spreadsheet.ts and
 * spreadsheet-thread.ts): a ZIP bomb whose headers lie about its sizes and a sheet with a cell far
 * to the right are refused with their messages, in the admin console and by `campus import`,
 * while /v1/health keeps answering on the same listener during the read.
 */

interface Entry {
  readonly name: string;
  /** The raw deflated data. */
  readonly deflated: Buffer;
  /** What the headers claim it unpacks to (a bomb lies here). */
  readonly declaredSize: number;
  readonly crc: number;
}

/** Deflates `size` bytes of spaces behind `head`, a chunk at a time (the test never holds them whole). */
async function deflatedSpaces(head: string, size: number): Promise<Buffer> {
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  deflate.write(head);
  const chunk = Buffer.alloc(16 * 1024 * 1024, 0x20);
  for (let written = 0; written < size; written += chunk.length) {
    if (!deflate.write(chunk)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await done;
  return Buffer.concat(out);
}

async function entry(name: string, text: string): Promise<Entry> {
  const data = Buffer.from(text);
  const deflate = createDeflateRaw();
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  deflate.end(data);
  await done;
  return { name, deflated: Buffer.concat(out), declaredSize: data.length, crc: crc32(data) };
}

/** A ZIP written by hand, so its headers can say what we like. */
function zip(entries: readonly Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(e.crc, 14);
    local.writeUInt32LE(e.deflated.length, 18);
    local.writeUInt32LE(e.declaredSize, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(e.crc, 16);
    central.writeUInt32LE(e.deflated.length, 20);
    central.writeUInt32LE(e.declaredSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, e.deflated);
    centrals.push(central, name);
    offset += 30 + name.length + e.deflated.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const NS = 'http://schemas.openxmlformats.org/';
/** The parts of a workbook around its sheets. */
async function workbookParts(sheets: number): Promise<Entry[]> {
  const ids = Array.from({ length: sheets }, (_, i) => i + 1);
  return Promise.all([
    entry(
      '[Content_Types].xml',
      `<?xml version="1.0"?><Types xmlns="${NS}package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${ids.map((i) => `<Override PartName="/xl/worksheets/sheet${i}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join('')}</Types>`,
    ),
    entry(
      '_rels/.rels',
      `<?xml version="1.0"?><Relationships xmlns="${NS}package/2006/relationships"><Relationship Id="rId1" Type="${NS}officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ),
    entry(
      'xl/workbook.xml',
      `<?xml version="1.0"?><workbook xmlns="${NS}spreadsheetml/2006/main" xmlns:r="${NS}officeDocument/2006/relationships"><sheets>${ids.map((i) => `<sheet name="S${i}" sheetId="${i}" r:id="rId${i}"/>`).join('')}</sheets></workbook>`,
    ),
    entry(
      'xl/_rels/workbook.xml.rels',
      `<?xml version="1.0"?><Relationships xmlns="${NS}package/2006/relationships">${ids.map((i) => `<Relationship Id="rId${i}" Type="${NS}officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${i}.xml"/>`).join('')}</Relationships>`,
    ),
  ]);
}

const SHEET_HEAD = `<?xml version="1.0"?><worksheet xmlns="${NS}spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>이메일</t></is></c></row>`;
const MB = 1024 * 1024;

/** A sheet entry of `size` bytes of spaces that claims 2 KB, with a CRC that matches nothing. */
async function bombSheet(name: string, size: number): Promise<Entry> {
  return { name, deflated: await deflatedSpaces(SHEET_HEAD, size), declaredSize: 2048, crc: 0 };
}

/** A workbook made as people make them (exceljs), with one cell far to the right (XFD1, column 16,384). */
async function farRightSheet(): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('학생');
  sheet.addRow(['이메일', '학생명']);
  sheet.addRow(['far@gsm.hs.kr', '멀리']);
  sheet.getCell('XFD1').value = 'x';
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/** Calls /v1/health every 25 ms until `work` settles; the longest wait and every status. */
async function healthDuring<T>(t: TestApp, work: Promise<T>): Promise<{ result: T; statuses: number[]; slowestMs: number }> {
  let settled = false;
  const statuses: number[] = [];
  let slowestMs = 0;
  const polling = (async () => {
    while (!settled) {
      const started = performance.now();
      const res = await t.request('/v1/health');
      await res.arrayBuffer();
      slowestMs = Math.max(slowestMs, performance.now() - started);
      statuses.push(res.status);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  const result = await work.finally(() => {
    settled = true;
  });
  await polling;
  return { result, statuses, slowestMs };
}

describe('school records: imports that cannot take the service down (zip bombs, far-right cells, a worker thread)', function () {
  this.timeout(180000);
  let t: TestApp;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ConsoleSession;
  let dir: string;
  let entryBomb: Buffer;
  let totalBomb: Buffer;
  let wide: Buffer;

  before(async () => {
    db = await createTestDatabase('import_limits');
    t = await buildTestApp('import_limits', { db });
    await seedDemoSchool(db);
    const user = { email: 'admin@gsm.hs.kr', password: 'admin has a long password' };
    const id = await createAccount(t.db, user.email, user.password);
    await t.db.models.accounts.updateOne({ _id: id }, { $set: { role: 'ADMIN' } });
    admin = await signInToConsole(t, user, '/admin/import');
    dir = await mkdtemp(join(tmpdir(), 'campus-import-limits-'));
    // One entry that unpacks past the per-entry cap, and three that pass it alone but not together.
    entryBomb = zip([...(await workbookParts(1)), await bombSheet('xl/worksheets/sheet1.xml', FILE_LIMITS.maxEntryBytes + 8 * MB)]);
    const third = await bombSheet('xl/worksheets/sheet1.xml', Math.ceil(FILE_LIMITS.maxUnpackedBytes / 3) + MB);
    totalBomb = zip([
      ...(await workbookParts(3)),
      third,
      { ...third, name: 'xl/worksheets/sheet2.xml' },
      { ...third, name: 'xl/worksheets/sheet3.xml' },
    ]);
    wide = await farRightSheet();
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.close();
    await db.drop();
  });

  async function upload(bytes: Buffer, name: string): Promise<{ status: number; html: string }> {
    const csrf = await admin.csrf();
    const form = new FormData();
    form.set('csrf', csrf);
    form.set('entity', 'STUDENT');
    form.set('file', new Blob([bytes]), name);
    const res = await fetch(`${t.url}/admin/import`, {
      method: 'POST',
      headers: { cookie: admin.jar.header(), origin: t.url, 'accept-language': 'en' },
      body: form,
      redirect: 'manual',
    });
    return { status: res.status, html: await res.text() };
  }

  it('the crafted files are small, and the bombs declare tiny sizes', () => {
    expect(entryBomb.length).to.be.below(FILE_LIMITS.maxBytes);
    expect(totalBomb.length).to.be.below(FILE_LIMITS.maxBytes);
    expect(wide.length).to.be.below(20_000);
    // Every declared uncompressed size (central directory, offset 24) is at most 2 KB: a lie.
    const declared: number[] = [];
    for (let at = entryBomb.indexOf('PK\u0001\u0002', 0, 'latin1'); at >= 0; at = entryBomb.indexOf('PK\u0001\u0002', at + 4, 'latin1'))
      declared.push(entryBomb.readUInt32LE(at + 24));
    expect(declared).to.have.length(5);
    expect(Math.max(...declared)).to.be.at.most(2048);
  });

  it('admin console: a ZIP bomb past the per-entry cap is refused (422, its message) while /v1/health keeps answering', async () => {
    const { result, statuses, slowestMs } = await healthDuring(t, upload(entryBomb, 'bomb.xlsx'));
    expect(result.status, result.html.slice(-600)).to.equal(422);
    expect(result.html).to.include(
      'the workbook unpacks to too much: xl/worksheets/sheet1.xml went past the limit (at most 100 MB an entry, 200 MB in all)',
    );
    expect(statuses.length, 'health was asked during the read').to.be.at.least(2);
    expect(statuses.every((s) => s === 200)).to.equal(true);
    expect(slowestMs, 'health is not held up by the read').to.be.below(1000);
  });

  it('admin console: entries that pass the cap alone but not together are refused by the total cap', async () => {
    const { result, statuses } = await healthDuring(t, upload(totalBomb, 'bombs.xlsx'));
    expect(result.status).to.equal(422);
    expect(result.html).to.include('the workbook unpacks to too much: xl/worksheets/sheet3.xml went past the limit');
    expect(statuses.every((s) => s === 200)).to.equal(true);
  });

  it('admin console: a sheet with a cell at XFD1 is refused before exceljs reads it (422, its message)', async () => {
    const { result, statuses } = await healthDuring(t, upload(wide, 'wide.xlsx'));
    expect(result.status).to.equal(422);
    expect(result.html).to.include(
      'a sheet is too wide: it uses columns up to XFD (at most 34 columns, up to AH); delete the cells to the right of the table and upload it again',
    );
    expect(statuses.every((s) => s === 200)).to.equal(true);
  });

  it('a CSV line with thousands of fields is refused the same way', async () => {
    const res = await upload(Buffer.from(`이메일,학생명${','.repeat(16_382)}\r\nfar@gsm.hs.kr,멀리\r\n`), 'wide.csv');
    expect(res.status).to.equal(422);
    expect(res.html).to.include('a sheet is too wide: it uses columns up to XFD (at most 34 columns, up to AH)');
  });

  it('after the refusals the same process reads a normal file at once', async () => {
    const started = performance.now();
    const res = await upload(Buffer.from('이메일,학생명\r\nhong1@gsm.hs.kr,홍건우\r\n'), 'ok.csv');
    expect(res.status, res.html.slice(-600)).to.equal(200);
    expect(performance.now() - started).to.be.below(5000);
    expect((await t.request('/v1/health')).status).to.equal(200);
  });

  it('campus import refuses both with their messages (exit 1, in Korean by default and in --json)', async () => {
    const bomb = join(dir, 'bomb.xlsx');
    const far = join(dir, 'wide.xlsx');
    await writeFile(bomb, entryBomb);
    await writeFile(far, wide);
    const env = { MONGODB_URI: db.uri };
    const refusedBomb = await runCampus(env, ['import', 'students', bomb]);
    expect(refusedBomb.code, refusedBomb.stderr).to.equal(1);
    expect(refusedBomb.stdout + refusedBomb.stderr).to.include('xl/worksheets/sheet1.xml');
    const refusedWide = await runCampus(env, ['import', 'students', far, '--json']);
    expect(refusedWide.code, refusedWide.stderr).to.equal(1);
    const body = JSON.parse(refusedWide.stdout) as { issues: { code: string; params: Record<string, unknown> }[] };
    expect(body.issues.map((i) => [i.code, i.params])).to.deep.equal([['TOO_WIDE', { last: 'XFD', max: 34, lastMax: 'AH' }]]);
  });
});
