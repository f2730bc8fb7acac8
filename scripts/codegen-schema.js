// The schema graphql-codegen reads: schema/*.graphql in file-name order, as one document.
// codegen's own glob loader merges the files in the order they finish loading, which changes
// the order of the generated types from run to run (and `codegen:check` would fail at random).
import { readFileSync, readdirSync } from 'node:fs';
import { buildSchema } from 'graphql';

export default function loadSchema() {
  const dir = new URL('../schema/', import.meta.url);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort();
  return buildSchema(files.map((f) => readFileSync(new URL(f, dir), 'utf8')).join('\n'));
}
