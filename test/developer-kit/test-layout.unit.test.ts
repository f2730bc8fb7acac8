import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { expect } from 'chai';

/**
 * The tests' layout as test/README.md declares it: a folder per feature (its table of folders and
 * title prefixes is the one source read here), each file's kind in its name, and the kinds the
 * ones `npm run test:suite` (package.json) runs, so no test file is left out of the suite. No database.
 */

const TESTS = 'test';
const SHARED = ['README.md', 'helpers'];

/** The folders and their features from test/README.md's table: | `neis/` | `NEIS` | what | */
function featureFolders(readme: string): Map<string, string> {
  return new Map([...readme.matchAll(/^\| `([a-z-]+)\/` \| `([^`]+)` \|/gm)].map((row) => [row[1] ?? '', row[2] ?? '']));
}

/** The kinds test:suite names, in its order (each of its globs ends in `.<kind>.test.ts`). */
function suiteKinds(script: string): string[] {
  return [...script.matchAll(/'test\/\*\*\/\*\.([a-z]+)\.test\.ts'/g)].map((glob) => glob[1] ?? '');
}

/** Every file under test/ but the shared ones, as paths relative to test/. */
function testFiles(): string[] {
  return readdirSync(TESTS, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => posix.relative(TESTS, posix.join(entry.parentPath, entry.name)))
    .filter((file) => !SHARED.some((shared) => file === shared || file.startsWith(`${shared}/`)));
}

/** The titles of a file's top-level describes (the ones that start a line). */
function topLevelTitles(source: string): string[] {
  return [...source.matchAll(/^describe(?:\.\w+)?\((['"`])(.*?)\1/gm)].map((call) => call[2] ?? '');
}

/** What is wrong with one file's place, name and titles; nothing when it is where it belongs. */
function misplaced(file: string, source: string, folders: Map<string, string>, kinds: readonly string[]): string[] {
  const [folder = '', name = '', ...deeper] = file.split('/');
  const feature = folders.get(folder);
  if (feature === undefined || deeper.length > 0) return [`${file}: not in a feature folder of test/README.md`];
  const kind = /^[a-z0-9-]+\.([a-z]+)\.test\.ts$/.exec(name)?.[1];
  if (kind === undefined || !kinds.includes(kind)) return [`${file}: its name does not end in .<${kinds.join('|')}>.test.ts`];
  const titles = topLevelTitles(source);
  if (titles.length === 0) return [`${file}: no top-level describe`];
  return titles.filter((title) => !title.startsWith(`${feature}: `)).map((title) => `${file}: '${title}' is not '${feature}: …'`);
}

describe('developer kit: the layout of test/ (test/README.md), a folder per feature and the kind in the name', () => {
  const folders = featureFolders(readFileSync(posix.join(TESTS, 'README.md'), 'utf8'));
  const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const kinds = suiteKinds(packageJson.scripts['test:suite'] ?? '');

  it("reads the eleven features from test/README.md and the four kinds, longest first, from package.json's test:suite", () => {
    expect([...folders.keys()]).to.have.length(11);
    expect(folders.get('neis')).to.equal('NEIS');
    expect(folders.get('accounts')).to.equal('accounts and sign-in');
    expect(kinds).to.deep.equal(['browser', 'integration', 'http', 'unit']);
  });

  it("every test file is <feature folder>/<what>.<kind>.test.ts and its top-level describes are its folder's feature", () => {
    const files = testFiles();
    expect(files).to.include('developer-kit/test-layout.unit.test.ts');
    expect(files.flatMap((file) => misplaced(file, readFileSync(posix.join(TESTS, file), 'utf8'), folders, kinds))).to.deep.equal([]);
  });

  it('every feature folder of test/README.md has tests', () => {
    const used = new Set(testFiles().map((file) => file.split('/')[0]));
    expect([...folders.keys()].filter((folder) => !used.has(folder))).to.deep.equal([]);
  });

  it('names what is out of place: a file without a kind, outside a feature folder, or of another feature', () => {
    const two = new Map([
      ['neis', 'NEIS'],
      ['pages', 'pages'],
    ]);
    const kindsHere = ['unit', 'http'];
    expect(
      misplaced('neis/sync.http.test.ts', "describe('NEIS: sync', () => {});\ndescribe('NEIS: more', () => {});", two, kindsHere),
    ).to.deep.equal([]);
    expect(misplaced('neis/sync.test.ts', "describe('NEIS: sync', () => {});", two, kindsHere)).to.deep.equal([
      'neis/sync.test.ts: its name does not end in .<unit|http>.test.ts',
    ]);
    expect(misplaced('neis/sync.browser.test.ts', "describe('NEIS: sync', () => {});", two, kindsHere)).to.deep.equal([
      'neis/sync.browser.test.ts: its name does not end in .<unit|http>.test.ts',
    ]);
    expect(misplaced('http/sync.http.test.ts', "describe('NEIS: sync', () => {});", two, kindsHere)).to.deep.equal([
      'http/sync.http.test.ts: not in a feature folder of test/README.md',
    ]);
    expect(misplaced('neis/deep/sync.http.test.ts', "describe('NEIS: sync', () => {});", two, kindsHere)).to.deep.equal([
      'neis/deep/sync.http.test.ts: not in a feature folder of test/README.md',
    ]);
    expect(
      misplaced(
        'pages/x.unit.test.ts',
        "describe('pages: a', () => {\n  describe('NEIS: inner', () => {});\n});\ndescribe(\"NEIS: b\", () => {});",
        two,
        kindsHere,
      ),
    ).to.deep.equal(["pages/x.unit.test.ts: 'NEIS: b' is not 'pages: …'"]);
    expect(misplaced('pages/x.unit.test.ts', "it('pages: alone', () => {});", two, kindsHere)).to.deep.equal([
      'pages/x.unit.test.ts: no top-level describe',
    ]);
  });
});
