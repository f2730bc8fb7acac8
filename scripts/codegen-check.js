// Fails when the committed generated files differ from what graphql-codegen makes of the schema.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const outputs = [
  'src/data/__generated__/enums.ts',
  'src/graphql/__generated__/resolvers.ts',
  'src/rest/__generated__/operations.ts',
  'src/surfaces/admin/__generated__/operations.ts',
];
const backup = mkdtempSync(join(tmpdir(), 'codegen-check-'));
const before = outputs.map((file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
});
outputs.forEach((file, i) => before[i] !== null && cpSync(file, join(backup, String(i))));
try {
  execFileSync('npx', ['graphql-codegen', '--config', 'codegen.yml', '--silent'], { stdio: 'inherit' });
  const stale = outputs.filter((file, i) => readFileSync(file, 'utf8') !== before[i]);
  if (stale.length > 0) {
    console.error(`codegen check failed: ${stale.join(', ')} differ from the schema. Run \`npm run codegen\` and commit.`);
    process.exitCode = 1;
  } else {
    console.log('codegen check: generated files match the schema.');
  }
} finally {
  // Leave the working tree as it was, so the check never edits what the developer committed.
  outputs.forEach((file, i) => before[i] !== null && cpSync(join(backup, String(i)), file));
  rmSync(backup, { recursive: true, force: true });
}
