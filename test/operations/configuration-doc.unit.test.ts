import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { z } from 'zod';
import { configurationTable, renderConfiguration } from '../../scripts/readme-tables.js';
import { envSchema } from '../../src/config/index.js';

/**
 * docs/configuration.md's table of variables is written from the config schema (src/config/index.ts)
 * by `npm run docs` (scripts/readme-tables.ts): this fails as soon as the page and the schema disagree.
 */
describe('operations: docs/configuration.md, written from the config schema', () => {
  const page = readFileSync('docs/configuration.md', 'utf8');

  it('docs/configuration.md is up to date with the config schema (run `npm run docs` when this fails)', () => {
    expect(renderConfiguration(page) === page, 'docs/configuration.md differs from `npm run docs`').to.equal(true);
  });

  it('has one row per variable of the schema, in its order', () => {
    const names = configurationTable()
      .split('\n')
      .slice(2, -1)
      .map((line) => /^\| `([A-Z_]+)` \|/.exec(line)?.[1]);
    expect(names).to.deep.equal(Object.keys(envSchema.shape));
  });

  it("renders each variable's default (or unset), its values and its description from the schema", () => {
    const lines = configurationTable().split('\n');
    expect(lines).to.include('| `PORT` | `8080` | 0 to 65,535 | The port `campus serve` listens on. |');
    expect(lines).to.include('| `RATE_LIMIT` | `100/60` |  | Default budget of one API key, `<requests>/<seconds>`. |');
    expect(lines).to.include('| `TRUSTED_PROXIES` | empty |  | ' + describedAs('TRUSTED_PROXIES') + ' |');
    expect(lines).to.include('| `SIGNUP_ALLOW_SUBADDRESSES` | `false` |  | ' + describedAs('SIGNUP_ALLOW_SUBADDRESSES') + ' |');
    expect(lines).to.include('| `ADMIN_MFA` | unset | `required`, `passkey`, `optional` | ' + describedAs('ADMIN_MFA') + ' |');
    expect(lines).to.include(
      '| `MONGODB_URI` | unset |  | The MongoDB (or FerretDB) to use. Unset: the embedded FerretDB in `DATA_DIR`. |',
    );
  });

  it('a changed default or description makes the page out of date', () => {
    const shape = { ...envSchema.shape, PORT: z.coerce.number().int().min(1).max(9999).default(9090).describe('Elsewhere.') };
    const rendered = renderConfiguration(page, shape);
    expect(rendered).to.not.equal(page);
    expect(rendered).to.include('| `PORT` | `9090` | 1 to 9,999 | Elsewhere. |');
  });

  it('a variable without a description, or a page without its markers, is refused', () => {
    const shape = { ...envSchema.shape, NEW_SETTING: z.string().optional() };
    expect(() => configurationTable(shape)).to.throw(/NEW_SETTING has no description/);
    expect(() => renderConfiguration(page.replace('<!-- configuration -->', ''))).to.throw(/exactly one table of variables/);
  });
});

function describedAs(name: keyof typeof envSchema.shape): string {
  return envSchema.shape[name].description ?? '';
}
