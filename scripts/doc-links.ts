import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The docs' relative links, checked the way GitHub renders them (test/developer-kit/doc-links.unit.test.ts):
 * every link of README.md and docs/*.md names a file of the repository, and every `#anchor` a
 * heading of that page, so a section moved from one page to another cannot leave a link behind.
 * The repository paths that src/ names in its comments (`docs/decisions.md`, `src/data/platform/lease.ts`)
 * are checked the same way.
 */

/** The files links point into: the repository on disk, or a map in tests. Paths are relative to the repository, with `/`. */
export interface FileTree {
  /** The text of a file; undefined when there is no such file (a directory has none either). */
  read(path: string): string | undefined;
  exists(path: string): boolean;
  /** Every file under a directory, at any depth. */
  filesUnder(directory: string): readonly string[];
}

/** A problem found, as `file:line: what`. */
export type Problem = string;

/** The top folders of the repository whose paths comments name. */
const TOP_FOLDERS = ['docs', 'src', 'test', 'tools', 'scripts', 'bench', 'schema', 'examples', 'clients', 'web'];
const PATH_REFERENCE = new RegExp(`(?<![\\w./-])((?:${TOP_FOLDERS.join('|')})/[\\w.*/-]*[\\w*/])`, 'g');

/** The anchor GitHub gives a heading: its text lower-cased, punctuation dropped, each space a `-`. */
export function githubSlug(heading: string): string {
  return renderedText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replaceAll(' ', '-');
}

/** A heading as GitHub shows it: links as their text, code and emphasis without their marks, no HTML tags. */
function renderedText(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim();
}

/** The anchors of a Markdown page: one per heading (a repeated one gets -1, -2, ...), and any `<a id>` or `<a name>`. */
export function anchorsOf(markdown: string): ReadonlySet<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1] ?? '');
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const named of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(named[1] ?? '');
  }
  return anchors;
}

/** The page with every fenced code block blanked (line numbers kept): a `#` there is no heading. */
function outsideFences(markdown: string): string {
  let fence: string | undefined;
  const lines = markdown.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined) {
      if (marker) fence = marker;
      return marker ? '' : line;
    }
    if (marker?.startsWith(fence) && marker[0] === fence[0]) fence = undefined;
    return '';
  });
  return lines.join('\n');
}

/** The page without code, fenced or inline (line numbers kept): a link there is text. */
function outsideCode(markdown: string): string {
  return outsideFences(markdown).replace(/(`+)[^`]*?\1/g, '');
}

/** Where a page links to: inline links and images, reference definitions, HTML `href` and `src`; with their line. */
export function linksOf(markdown: string): { readonly line: number; readonly target: string }[] {
  const text = outsideCode(markdown);
  const patterns = [
    /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm,
    /\b(?:href|src)="([^"]+)"/g,
  ];
  return patterns
    .flatMap((pattern) => [...text.matchAll(pattern)].map((match) => ({ index: match.index, target: match[1] ?? '' })))
    .sort((a, b) => a.index - b.index)
    .map(({ index, target }) => ({ line: text.slice(0, index).split('\n').length, target }));
}

/** Every relative link of the pages that names a missing file, or a heading its page does not have. */
export function brokenLinks(pages: readonly string[], tree: FileTree): Problem[] {
  return pages.flatMap((page) =>
    linksOf(tree.read(page) ?? '').flatMap(({ line, target }) => {
      const problem = linkProblem(page, target, tree);
      return problem ? [`${page}:${line}: ${target}: ${problem}`] : [];
    }),
  );
}

/** Why a link of `page` does not lead where it says; undefined when it does (or leaves the repository by a scheme). */
function linkProblem(page: string, target: string, tree: FileTree): string | undefined {
  if (/^([a-z][a-z\d+.-]*:|\/\/)/i.test(target)) return undefined;
  const hash = target.indexOf('#');
  const pathPart = decoded(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? undefined : decoded(target.slice(hash + 1));
  const file = pathPart === '' ? page : resolved(page, pathPart);
  if (file.startsWith('../') || file === '..') return 'points outside the repository';
  if (!tree.exists(file)) return `${file} does not exist`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md')) return /^L\d+(-L\d+)?$/.test(anchor) ? undefined : `${file} is not a Markdown page, so it has no #${anchor}`;
  return anchorsOf(tree.read(file) ?? '').has(anchor) ? undefined : `${file} has no heading with the anchor #${anchor}`;
}

function resolved(page: string, path: string): string {
  return path.startsWith('/') ? posix.normalize(path.slice(1)) : posix.normalize(posix.join(posix.dirname(page), path));
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Every path of the repository that the files name (`docs/spec.md`, `src/data/`, `test/x/*.test.ts`) and that does not exist. */
export function brokenPathReferences(files: readonly string[], tree: FileTree): Problem[] {
  return files.flatMap((file) =>
    (tree.read(file) ?? '').split('\n').flatMap((text, index) =>
      [...text.matchAll(PATH_REFERENCE)]
        .map((match) => match[1] ?? '')
        .filter((path) => !referenceExists(path, tree))
        .map((path) => `${file}:${index + 1}: ${path} does not exist`),
    ),
  );
}

function referenceExists(path: string, tree: FileTree): boolean {
  if (!path.includes('*')) return tree.exists(path.replace(/\/$/, ''));
  const literal = path.slice(0, path.indexOf('*'));
  const pattern = globPattern(path);
  return tree.filesUnder(literal.slice(0, literal.lastIndexOf('/') + 1)).some((file) => pattern.test(file));
}

/** A glob as a pattern of file paths: `*` within one folder, `**` across folders; a folder matches the files under it. */
function globPattern(glob: string): RegExp {
  const body = glob
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}(/.*)?$`);
}

/** The pages whose links are checked: the README, every page of docs/, and test/README.md when there is one. */
export function documentationPages(tree: FileTree): string[] {
  const docs = tree.filesUnder('docs/').filter((file) => file.endsWith('.md'));
  return ['README.md', ...docs, ...(tree.exists('test/README.md') ? ['test/README.md'] : [])];
}

/** The files whose path references are checked: the source, and the pages' own scripts and styles (web/). */
export function sourceFiles(tree: FileTree): string[] {
  return [...tree.filesUnder('src/'), ...tree.filesUnder('web/')].filter((file) => /\.(ts|js|css|html)$/.test(file));
}

/** The repository on disk. */
export function diskTree(root: string = fileURLToPath(new URL('..', import.meta.url))): FileTree {
  const at = (path: string): string => posix.join(root, path);
  return {
    read: (path) => (existsSync(at(path)) && statSync(at(path)).isFile() ? readFileSync(at(path), 'utf8') : undefined),
    exists: (path) => existsSync(at(path)),
    filesUnder: (directory) =>
      existsSync(at(directory))
        ? readdirSync(at(directory), { recursive: true, withFileTypes: true })
            .filter((entry) => entry.isFile())
            .map((entry) => posix.relative(root, posix.join(entry.parentPath, entry.name)))
        : [],
  };
}
