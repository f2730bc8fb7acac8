import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { NGINX_SITE, renderOperations } from '../../scripts/readme-tables.js';
import { loadConfig } from '../../src/config/index.js';
import { KEEP_ALIVE_TIMEOUT_MS } from '../../src/http/drain.js';

/**
 * The nginx configuration of docs/operations.md is deploy/nginx/campus.conf, copied in by `npm
 * run docs` (scripts/readme-tables.ts): the restart test runs that file, so the page shows what
 * was tested. Its timings and the service's must stay in step (docs/operations.md, "11. Restarts
 * and rolling upgrades"): a process restarted a moment ago is back before the other stops
 * accepting, and nginx closes an idle connection before the process would.
 */
describe('operations: the nginx configuration of docs/operations.md (deploy/nginx/campus.conf)', () => {
  const page = readFileSync('docs/operations.md', 'utf8');
  const site = readFileSync(NGINX_SITE, 'utf8');

  it('docs/operations.md shows deploy/nginx/campus.conf as it is (run `npm run docs` when this fails)', () => {
    expect(renderOperations(page) === page, 'docs/operations.md differs from `npm run docs`').to.equal(true);
    expect(page).to.include(`<!-- nginx-site -->\n\`\`\`nginx\n${site}\`\`\`\n<!-- /nginx-site -->`);
  });

  it('a changed file makes the page out of date; a page without its markers is refused', () => {
    expect(renderOperations(page, `${site}# one more line\n`)).to.not.equal(page);
    expect(() => renderOperations(page.replace('<!-- nginx-site -->', ''))).to.throw(/exactly one place for the nginx configuration/);
  });

  it("nginx's fail_timeout is shorter than the default drain, and its idle upstream connections close before the service's", () => {
    const failTimeouts = [...site.matchAll(/^\s*server 127\.0\.0\.1:\d+ max_fails=1 fail_timeout=(\d+)s;$/gm)].map((m) => Number(m[1]));
    expect(failTimeouts).to.have.length(2);
    const drainMs = loadConfig({}).shutdown.drainMs;
    for (const seconds of failTimeouts) expect(seconds * 1000).to.be.lessThan(drainMs);
    const keepalive = /^\s*keepalive_timeout (\d+)s;$/m.exec(site)?.[1];
    expect(Number(keepalive) * 1000).to.be.lessThan(KEEP_ALIVE_TIMEOUT_MS);
  });

  it('retries only what never reached a process, and never a POST that did', () => {
    expect(site).to.match(/^\s*proxy_next_upstream error timeout http_502 http_503;$/m);
    expect(site.match(/^\s*proxy_next_upstream\b/gm)).to.have.length(1);
  });
});
