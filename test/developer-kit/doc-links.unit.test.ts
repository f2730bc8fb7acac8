import { expect } from 'chai';
import {
  anchorsOf,
  brokenLinks,
  brokenPathReferences,
  diskTree,
  documentationPages,
  githubSlug,
  linksOf,
  sourceFiles,
  type FileTree,
} from '../../scripts/doc-links.js';

/**
 * The README is a front door and the reference lives in docs/: a link between them that names a
 * missing file or heading fails here (scripts/doc-links.ts), and so does a path that a comment
 * of src/ cites and that does not exist. No database.
 */
describe('developer kit: the links of the README, docs/ and test/README.md', () => {
  const repository = diskTree();

  it('every relative link of README.md, docs/*.md and test/README.md names an existing file, and every #anchor a heading of it', () => {
    const pages = documentationPages(repository);
    expect(pages).to.include.members(['README.md', 'docs/README.md', 'docs/data-api.md', 'docs/school-writes.md', 'test/README.md']);
    expect(brokenLinks(pages, repository)).to.deep.equal([]);
  });

  it('every repository path named in src/ and web/ (comments citing docs/*.md, src/..., test/...) exists', () => {
    const files = sourceFiles(repository);
    expect(files).to.include.members(['src/config/index.ts', 'web/assets/web.js']);
    expect(brokenPathReferences(files, repository)).to.deep.equal([]);
  });

  it("docs/README.md and the README's map of the docs list every page of docs/", () => {
    const pages = documentationPages(repository).filter((page) => page.startsWith('docs/') && page !== 'docs/README.md');
    const linked = (file: string, prefix: string): string[] =>
      linksOf(repository.read(file) ?? '').map((link) => `docs/${link.target.slice(prefix.length)}`);
    expect(
      pages.filter((page) => !linked('docs/README.md', '').includes(page)),
      'missing from docs/README.md',
    ).to.deep.equal([]);
    expect(
      pages.filter((page) => !linked('README.md', 'docs/').includes(page)),
      'missing from README.md',
    ).to.deep.equal([]);
  });
});

describe('developer kit: the link checker (scripts/doc-links.ts)', () => {
  it("makes GitHub's anchors: lower case, spaces to '-', punctuation dropped, Korean kept", () => {
    expect(githubSlug('Start it: two commands')).to.equal('start-it-two-commands');
    expect(githubSlug('The `campus` command')).to.equal('the-campus-command');
    expect(githubSlug('Node.js')).to.equal('nodejs');
    expect(githubSlug('Log in with the school: OAuth 2.0 and userinfo')).to.equal('log-in-with-the-school-oauth-20-and-userinfo');
    expect(githubSlug('GET /v1/changes (any of `STUDENT_READ`, `CLUB_READ`): events')).to.equal(
      'get-v1changes-any-of-student_read-club_read-events',
    );
    expect(githubSlug('The admin console (`/admin`)')).to.equal('the-admin-console-admin');
    expect(githubSlug('3. Database and Redis')).to.equal('3-database-and-redis');
    expect(githubSlug('첫 앱 만들기 (Build your first app)')).to.equal('첫-앱-만들기-build-your-first-app');
    expect(githubSlug('다음 (Next)')).to.equal('다음-next');
    expect(githubSlug('A [linked](x.md) heading — with a dash')).to.equal('a-linked-heading--with-a-dash');
  });

  it('numbers repeated headings -1, -2, and ignores "headings" inside code blocks', () => {
    const page = ['# Mail', '', '## Mail', '', '```sh', '# Mail (a shell comment)', '```', '', '### Mail', '<a id="kept"></a>'].join('\n');
    expect([...anchorsOf(page)]).to.deep.equal(['mail', 'mail-1', 'mail-2', 'kept']);
  });

  it('finds links, images and HTML targets with their lines, but not in code', () => {
    const page = [
      'See [the API](data-api.md#rate-limits) and ![a button](../web/kit/a.svg).',
      '`[not a link](nowhere.md)`',
      '```md',
      '[not a link either](nowhere.md)',
      '```',
      'A link over [two',
      'lines](cli.md) and <img src="../web/kit/b.svg">.',
    ].join('\n');
    expect(linksOf(page)).to.deep.equal([
      { line: 1, target: 'data-api.md#rate-limits' },
      { line: 1, target: '../web/kit/a.svg' },
      { line: 6, target: 'cli.md' },
      { line: 7, target: '../web/kit/b.svg' },
    ]);
  });

  it('fails on a link to a missing file, a missing heading, or outside the repository; passes the rest', () => {
    const tree = memoryTree({
      'README.md': [
        '# Campus',
        '## Start it',
        '[ok](docs/a.md#rate-limits) [ok](#start-it) [ok](docs/a.md) [ok](src/) [ok](https://example.com/x.md#nope)',
        '[gone](docs/b.md) [moved](#rate-limits) [renamed](docs/a.md#limits) [out](../elsewhere.md)',
        '[line](src/x.ts#L3) [not markdown](src/x.ts#top)',
      ].join('\n'),
      'docs/a.md': '# A\n\n## Rate limits\n\n[back](../README.md#start-it) [broken](../README.md#start)\n',
      'src/x.ts': '// see docs/a.md and docs/b.md and src/x.ts:3\n',
    });
    expect(brokenLinks(['README.md', 'docs/a.md'], tree)).to.deep.equal([
      'README.md:4: docs/b.md: docs/b.md does not exist',
      'README.md:4: #rate-limits: README.md has no heading with the anchor #rate-limits',
      'README.md:4: docs/a.md#limits: docs/a.md has no heading with the anchor #limits',
      'README.md:4: ../elsewhere.md: points outside the repository',
      'README.md:5: src/x.ts#top: src/x.ts is not a Markdown page, so it has no #top',
      'docs/a.md:5: ../README.md#start: README.md has no heading with the anchor #start',
    ]);
  });

  it('fails on a path named in source that does not exist, globs included', () => {
    const tree = memoryTree({
      'src/a.ts': "// docs/spec.md, docs/gone.md (src/b/) and src/b/c.ts.\nconst url = '/docs/assets/x';\n",
      'src/b/c.ts': '/* test/neis/*.http.test.ts, test/neis/*.unit.test.ts, src/**/c.ts */\n',
      'docs/spec.md': '# Spec\n',
      'test/neis/one.http.test.ts': '',
    });
    expect(brokenPathReferences(['src/a.ts', 'src/b/c.ts'], tree)).to.deep.equal([
      'src/a.ts:1: docs/gone.md does not exist',
      'src/b/c.ts:1: test/neis/*.unit.test.ts does not exist',
    ]);
  });
});

/** A repository of a few files, for the checker's own tests. */
function memoryTree(files: Readonly<Record<string, string>>): FileTree {
  const paths = Object.keys(files);
  const isDirectory = (path: string): boolean => paths.some((file) => file.startsWith(`${path.replace(/\/$/, '')}/`));
  return {
    read: (path) => files[path],
    exists: (path) => path in files || isDirectory(path),
    filesUnder: (directory) => paths.filter((file) => file.startsWith(directory)),
  };
}
