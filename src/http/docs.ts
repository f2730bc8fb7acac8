import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { printSchema, type GraphQLSchema } from 'graphql';
import { matchesIfNoneMatch } from './compression.js';
import type { AppContext, AppMiddleware } from './context.js';

/**
 * The API reference: the OpenAPI document as JSON (GET /v1/openapi.json) and a page around
 * Swagger UI (GET /docs) whose scripts and styles all come from this server: swagger-ui-dist's
 * files out of node_modules, and our own small script and stylesheet below, so the page's
 * Content-Security-Policy allows no inline code and no other origin. Mounted by
 * src/surfaces/data.ts.
 */

export const OPENAPI_PATH = '/v1/openapi.json';
/** The GraphQL schema as SDL, for graphql-codegen and editors (production turns introspection off). */
export const SCHEMA_PATH = '/graphql/schema.graphql';
export const DOCS_PATH = '/docs';
const ASSETS_PATH = `${DOCS_PATH}/assets`;
/** The login button kit (web/kit, docs/login-button.md): its images, snippet and stylesheet. */
export const KIT_PATH = `${DOCS_PATH}/kit`;
const KIT_DIR = new URL('../../web/kit/', import.meta.url); // from src/http/ and dist/http/ alike
export const KIT_IMAGES = ['ko-light', 'ko-dark', 'en-light', 'en-dark'].map((variant) => `login-button-${variant}.svg`);

/** GET /v1/openapi.json: public, cacheable for five minutes, revalidated by its ETag. */
export function openApiJson(document: object): AppMiddleware {
  const body = Buffer.from(JSON.stringify(document));
  const etag = `"${digest(body)}"`;
  return (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    sendCacheable(ctx, etag, 'application/json; charset=utf-8', () => body);
    return Promise.resolve();
  };
}

/**
 * GET /graphql/schema.graphql: the executed schema printed as SDL (graphql's printSchema), public
 * like the OpenAPI document, cacheable for five minutes and revalidated by its ETag. Plain text,
 * so a browser shows it and codegen's URL loader reads it as SDL.
 */
export function graphqlSdl(schema: GraphQLSchema): AppMiddleware {
  const body = Buffer.from(`${printSchema(schema)}\n`);
  const etag = `"${digest(body)}"`;
  return (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    sendCacheable(ctx, etag, 'text/plain; charset=utf-8', () => body);
    return Promise.resolve();
  };
}

/** Where the docs page links to: the front door and the consoles (with the authorization server, maybe at another address). */
export interface DocsLinks {
  readonly home: string;
  readonly console: string;
  readonly admin: string;
}

/** GET /docs: the page. */
export function docsPage(links: DocsLinks): AppMiddleware {
  const body = Buffer.from(page(links));
  const etag = `"${digest(body)}"`;
  return (ctx) => {
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'public, max-age=300');
    sendCacheable(ctx, etag, 'text/html; charset=utf-8', () => body);
    return Promise.resolve();
  };
}

/**
 * The page's only code and styles, each from this server: no inline script or style, no
 * framing; Swagger UI fetches the document (and "Try it out" calls the API) from the same
 * origin; its icons are data: images in its stylesheet.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** One file the page loads, served at /docs/assets/<name>. */
export interface DocsAsset {
  readonly path: string;
  readonly handler: AppMiddleware;
}

/** Resolves installed packages' files, from src/ under tsx and from dist/ alike. */
const packageFiles = createRequire(import.meta.url);

/** The files of the page: the few of swagger-ui-dist it needs, and ours. */
export function docsAssets(): DocsAsset[] {
  const fromPackage = (file: string) => () => readFile(packageFiles.resolve(`swagger-ui-dist/${file}`));
  const ours = (text: string) => () => Promise.resolve(Buffer.from(text));
  return [
    asset('swagger-ui-bundle.js', JAVASCRIPT, fromPackage('swagger-ui-bundle.js')),
    asset('swagger-ui.css', CSS, fromPackage('swagger-ui.css')),
    asset('favicon-32x32.png', 'image/png', fromPackage('favicon-32x32.png')),
    asset('docs.js', JAVASCRIPT, ours(INIT_SCRIPT)),
    asset('docs.css', CSS, ours(STYLE)),
    ...KIT_IMAGES.map((name) => asset(name, 'image/svg+xml', () => readFile(new URL(name, KIT_DIR)), KIT_PATH)),
    asset('login-button.css', CSS, () => readFile(new URL('login-button.css', KIT_DIR)), KIT_PATH),
    asset('login-button.html', 'text/plain; charset=utf-8', () => readFile(new URL('login-button.html', KIT_DIR)), KIT_PATH),
  ];
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/**
 * A file read (and gzipped: Swagger UI's bundle is 1.7 MB, about a quarter of that compressed,
 * which matters on a phone) on first request and kept in memory; cached by browsers for an hour
 * and revalidated by its ETag. The ETag is weak because the bytes differ by encoding.
 */
function asset(name: string, type: string, read: () => Promise<Buffer>, base: string = ASSETS_PATH): DocsAsset {
  let loaded: Promise<{ plain: Buffer; gzipped: Buffer; etag: string }> | undefined;
  const load = async () => {
    const plain = await read();
    return { plain, gzipped: await promisify(gzip)(plain), etag: `W/"${digest(plain)}"` };
  };
  return {
    path: `${base}/${name}`,
    handler: async (ctx) => {
      loaded ??= load().catch((err: unknown) => {
        loaded = undefined;
        throw err;
      });
      const file = await loaded;
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.vary('Accept-Encoding');
      const compressed = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
      if (compressed) ctx.set('Content-Encoding', 'gzip');
      sendCacheable(ctx, file.etag, type, () => (compressed ? file.gzipped : file.plain));
    },
  };
}

/**
 * Answers 304 when the request's If-None-Match names the ETag (weak comparison, as the REST
 * endpoints do: not Koa's `ctx.fresh`, which calls stale every request carrying the
 * `Cache-Control: no-cache` that fetch() adds to a conditional request), else the body.
 */
function sendCacheable(ctx: AppContext, etag: string, type: string, body: () => Buffer): void {
  ctx.set('ETag', etag);
  ctx.status = 200;
  if (matchesIfNoneMatch(ctx.get('If-None-Match'), etag)) {
    ctx.status = 304;
    ctx.remove('Content-Encoding');
    return;
  }
  ctx.type = type;
  ctx.body = body();
}

function digest(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('base64url').slice(0, 32);
}

/**
 * Swagger UI reads the document; the plain layout (no top bar: it would offer to load other
 * documents). Three things make its page meet WCAG 2.2 AA, as every page of ours does
 * (test/data-api/docs-page.browser.test.ts runs axe-core on it):
 * - an operation's path is a deep link inside the button that opens the operation: a control in a
 *   control (4.1.2) and a 19 px target (2.5.8). The path is rendered without the link (Swagger UI's
 *   plugin API, wrapComponents); deep linking itself stays: opening an operation still puts it in
 *   the address, and an address naming one opens it;
 * - some of its controls have no name or a name without their visible words (4.1.2, 2.5.3: the
 *   parameter selects, the dialog's close button; "Authorize" named "Apply credentials", "Logout"
 *   "Remove authorization"), and its long examples scroll without being reachable by keyboard
 *   (2.1.1): a watcher of the rendered page names each select after its parameter, names the close
 *   button, leaves the two buttons their visible words, and lets the keyboard reach each example;
 * - its syntax colours: the `tomorrow-night` theme's all have 4.5:1 against its background (1.4.3).
 * The other colours it gets wrong (1.4.3) are in the stylesheet below.
 */
const INIT_SCRIPT = `// The reference page's own script (src/http/docs.ts says why each part is here): the page allows no inline script.
const pathsWithoutLinks = () => ({
  wrapComponents: {
    OperationSummaryPath: (Original, system) => (props) =>
      system.React.createElement(Original, { ...props, operationProps: props.operationProps.set('isDeepLinkingEnabled', false) }),
  },
});
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  plugins: [pathsWithoutLinks],
  layout: 'BaseLayout',
  deepLinking: true,
  defaultModelsExpandDepth: -1,
  displayRequestDuration: true,
  validatorUrl: null,
  syntaxHighlight: { theme: 'tomorrow-night' },
});
function nameAndReach() {
  for (const select of document.querySelectorAll('tr[data-param-name] select:not([aria-label])'))
    select.setAttribute('aria-label', select.closest('tr').dataset.paramName);
  for (const close of document.querySelectorAll('button.close-modal:not([aria-label])')) close.setAttribute('aria-label', '닫기 (Close)');
  for (const button of document.querySelectorAll('.auth-btn-wrapper button[aria-label]')) button.removeAttribute('aria-label');
  for (const code of document.querySelectorAll('.highlight-code pre:not([tabindex]), pre.curl:not([tabindex])')) code.setAttribute('tabindex', '0');
}
new MutationObserver(nameAndReach).observe(document.getElementById('swagger-ui'), { childList: true, subtree: true });
`;

const STYLE = `.intro{box-sizing:border-box;max-width:1460px;margin:0 auto;padding:1.25rem 20px 0;font-family:sans-serif;color:#3b4151;line-height:1.5}
.intro h1{font-size:1.6rem;margin:0 0 .5rem}
.intro h1 span{display:block;font-size:1.05rem;font-weight:400;color:#555}
.intro p{margin:.25rem 0}
.intro a{color:#1d4ed8}
.kit h2{font-size:1.15rem;margin:1rem 0 .25rem}.kit h2 span{font-weight:400;color:#555}.kit ul{margin:.25rem 0;padding-left:1.25rem}
.kit .buttons{display:flex;flex-wrap:wrap;gap:.75rem;padding:.75rem;margin:.5rem 0;background:#fff;border:1px solid #e5e7eb;border-radius:8px}
.kit .buttons.dark{background:#374151}.kit .buttons img{max-width:100%;height:auto}
.intro nav ul{list-style:none;margin:0 0 .75rem;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1.25rem}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.swagger-ui .info .title small{background:#555e6b}
.swagger-ui .info .title small.version-stamp{background:#3f6e00}
.swagger-ui .info .url,.swagger-ui .info a{color:#1d4ed8}
.swagger-ui .btn.authorize{color:#137a45;border-color:#137a45}.swagger-ui .btn.authorize svg{fill:#137a45}
.swagger-ui .opblock.opblock-get .opblock-summary-method,.swagger-ui .btn.execute{background:#1d63b8;border-color:#1d63b8}
.swagger-ui .parameter__in{color:#595959}
.swagger-ui .btn.cancel{color:#b42318;border-color:#b42318}
.swagger-ui .download-contents{background:#555e6b}
@media (max-width:640px){
.intro{padding:1rem 12px 0}
.intro h1{font-size:1.3rem}
.swagger-ui .wrapper{padding:0 12px}
.swagger-ui .info{margin:24px 0}
.swagger-ui .info .title{font-size:1.5rem}
.swagger-ui .opblock .opblock-summary{flex-wrap:wrap}
.swagger-ui .opblock .opblock-summary-path{max-width:none;flex:1 1 auto}
.swagger-ui .opblock .opblock-summary-description{flex:1 1 100%;margin-top:4px}
.swagger-ui table.parameters td,.swagger-ui table.parameters th{display:block;width:auto;padding:6px 0}
.swagger-ui .responses-table td{display:block;padding:6px 0}
}
`;

/** One image of the login button kit, named as it reads. */
const kitImage = (name: string) =>
  `<img src="${KIT_PATH}/${name}" alt="${name.includes('-ko-') ? '학교 계정으로 로그인' : 'Sign in with school account'}" width="${name.includes('-ko-') ? 212 : 300}" height="44">`;

/** The page: Korean first, then English, like every page; its links lead back to the front door and the consoles. */
const page = (links: DocsLinks) => `<!DOCTYPE html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>데이터 API 문서 · Data API reference</title>
<link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-32x32.png">
<link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css">
<link rel="stylesheet" href="${ASSETS_PATH}/docs.css">
<script defer src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
<script defer src="${ASSETS_PATH}/docs.js"></script>
</head>
<body>
<main>
<header class="intro">
<nav aria-label="사이트 메뉴 (Site)"><ul>
<li><a href="${links.home}">처음 <span lang="en">(Home)</span></a></li>
<li><a href="${links.console}">개발자 콘솔 <span lang="en">(Developer console)</span></a></li>
<li><a href="${links.admin}">관리자 콘솔 <span lang="en">(Admin console)</span></a></li>
</ul></nav>
<h1>데이터 API 문서 <span lang="en">Data API reference</span></h1>
<p>학교 데이터 REST API의 참조 문서입니다. 원본 문서: <a href="${OPENAPI_PATH}">OpenAPI 3.1 JSON</a></p>
<p lang="en">The reference of the school's REST data API. The document behind it: <a href="${OPENAPI_PATH}">OpenAPI 3.1 JSON</a></p>
<p>GraphQL 스키마 <span lang="en">(GraphQL schema, for graphql-codegen)</span>: <a href="${SCHEMA_PATH}">schema.graphql</a></p>
<section class="kit" aria-labelledby="kit-title">
<h2 id="kit-title">개발자 도구 <span lang="en">Developer kit</span></h2>
<p>저장소에 있는 것 <span lang="en">(in the service's repository; <code>docs/developer-kit.md</code>)</span>:</p>
<ul>
<li>TypeScript 클라이언트 <code>clients/typescript</code> <span lang="en">(typed calls for every endpoint, OAuth helpers)</span></li>
<li>예제 <code>examples/login-with-school</code> (학교 계정으로 로그인 <span lang="en">login example</span>), <code>examples/meals-today</code> (오늘의 급식 <span lang="en">today's meals</span>): <code>npm install &amp;&amp; npm start</code></li>
<li>로그인 버튼 <span lang="en">(login button)</span>: <a href="${KIT_PATH}/login-button.html">HTML</a>, <a href="${KIT_PATH}/login-button.css">CSS</a>, 규칙 <span lang="en">(rules)</span> <code>docs/login-button.md</code></li>
</ul>
<div class="buttons">${KIT_IMAGES.filter((name) => name.endsWith('light.svg'))
  .map(kitImage)
  .join('')}</div>
<div class="buttons dark">${KIT_IMAGES.filter((name) => name.endsWith('dark.svg'))
  .map(kitImage)
  .join('')}</div>
</section>
<noscript><p>이 페이지는 JavaScript가 필요합니다. <span lang="en">This page needs JavaScript; the document itself is plain JSON (link above).</span></p></noscript>
</header>
<div id="swagger-ui"></div>
</main>
</body>
</html>
`;
