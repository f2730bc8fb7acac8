// The operations graphql-codegen types: every `/* GraphQL */` template literal of the files a
// pointer such as `src/rest/operations/*.ts` names, in file-name order, as one document (codegen's
// own loaders merge files in the order they finish loading, which reorders the generated types).
import { readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Kind, parse } from 'graphql';

const TAGGED = /\/\* GraphQL \*\/ `([^`]*)`/g;

export default function loadDocuments(pointer) {
  const dir = dirname(pointer);
  const suffix = basename(pointer).replace(/^\*/, '');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort();
  const sources = files.flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(TAGGED)].map((m) => m[1]));
  // A pointer whose files hold no operation yet (a page without one) adds nothing.
  return sources.length > 0 ? parse(sources.join('\n')) : { kind: Kind.DOCUMENT, definitions: [] };
}
