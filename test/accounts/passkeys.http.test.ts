import { expect } from 'chai';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import {
  CookieJar,
  ConsoleSession,
  createAccount,
  createClient,
  pkcePair,
  postJson,
  REDIRECT_URI,
  signInToConsole,
} from '../helpers/oauth.js';
import { buildLocalhostApp, SoftPasskey, type Gesture } from '../helpers/passkeys.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { MAX_PASSKEYS_PER_ACCOUNT } from '../../src/oauth/passkeys.js';
import { AccountStore } from '../../src/data/accounts/store.js';
import { UpdateRequests } from '../../src/data/school/update-requests.js';

/**
 * Passkeys over HTTP, with a software authenticator that answers as a browser would, and as no
 * honest browser would: adding one in /console/account (the password typed again, a name, the
 * browser's answer), signing in with one through an app's authorization (no account named before
 * the passkey: the options list no credential), the refusals (a replayed answer, another origin or
 * relying party, no user verification, an unknown passkey, a counter that went backwards, which
 * flags the passkey), removing one (the owner, staff at /admin/accounts/<id>, the operator's
 * `campus accounts passkeys`), each in the access log.
 */
describe('accounts and sign-in: passkeys (add, sign in through an app, refusals, removal)', function () {
  this.timeout(240000);
  let t: TestApp;
  const ids: Record<string, number> = {};
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);

  async function account(name: string, role: 'USER' | 'ADMIN' | 'ROOT' = 'USER'): Promise<{ email: string; password: string }> {
    const user = { email: `${name}@gsm.hs.kr`, password: `${name} has a long password` };
    ids[name] = await createAccount(t.db, user.email, user.password);
    if (role !== 'USER') await t.db.models.accounts.updateOne({ _id: ids[name] }, { $set: { role } });
    return user;
  }

  function flashOf(html: string): string {
    return /<p class="flash (?:ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  }

  function unescape(text: string): string {
    return text
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  }

  /** Adds a passkey in /console/account: the name and password, then the authenticator's answer to the page's options. */
  async function addPasskey(
    session: ConsoleSession,
    user: { password: string },
    name: string,
    passkey: SoftPasskey,
    gesture?: Partial<Gesture>,
  ) {
    const started = await session.post('/console/account/passkeys', { name, current: user.password });
    expect(started.res.status, started.html.slice(-400)).to.equal(200);
    const options = JSON.parse(
      unescape(/data-options-json="([^"]+)"/.exec(started.html)?.[1] ?? ''),
    ) as PublicKeyCredentialCreationOptionsJSON;
    const csrf = /name="csrf" value="([^"]+)"/.exec(started.html)?.[1];
    const response = passkey.register(options, { origin: t.url, ...gesture });
    const done = await session.post('/console/account/passkeys/verify', { response }, csrf);
    return { options, response, done, csrf };
  }

  /** An app's authorization up to our login page: its cookies, address, form token. */
  async function loginPage(clientId: string) {
    const jar = new CookieJar();
    const { verifier, challenge } = pkcePair();
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'self:read',
      state: 'st-passkey',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const start = await fetch(`${t.url}/v1/oauth/authorize?${query}`, { redirect: 'manual' });
    jar.store(start);
    const url = new URL(start.headers.get('location') ?? '', t.url).href;
    const res = await fetch(url, { headers: { cookie: jar.header() } });
    jar.store(res);
    const html = await res.text();
    return { jar, url, html, verifier, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
  }

  type LoginPage = Awaited<ReturnType<typeof loginPage>>;

  function post(page: LoginPage, path: string, fields: Record<string, string>) {
    return fetch(`${page.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.jar.header(), origin: t.url },
      body: new URLSearchParams({ csrf: page.csrf, ...fields }).toString(),
    });
  }

  async function signInOptions(page: LoginPage): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const res = await post(page, '/passkey/options', {});
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    return (await res.json()) as PublicKeyCredentialRequestOptionsJSON;
  }

  /** Follows same-origin redirects from `res` (answering the consent page with Allow) to the app's redirect address. */
  async function toTheApp(page: LoginPage, first: Response): Promise<{ location: URL; pages: string[] }> {
    const pages: string[] = [];
    let res = first;
    let url = page.url;
    for (let hop = 0; hop < 10; hop++) {
      page.jar.store(res);
      const location = res.headers.get('location');
      if (location) {
        await res.arrayBuffer();
        const target = new URL(location, url);
        if (target.origin !== t.url) return { location: target, pages };
        url = target.href;
        res = await fetch(url, { headers: { cookie: page.jar.header() }, redirect: 'manual' });
        continue;
      }
      const html = await res.text();
      pages.push(html);
      expect(res.status, html.slice(-600)).to.equal(200);
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
      url = new URL(action, t.url).href;
      res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.jar.header(), origin: t.url },
        body: new URLSearchParams({ csrf, decision: 'allow' }).toString(),
      });
    }
    throw new Error('too many redirects');
  }

  /** Signs in to our consoles with a passkey alone: /web/signin, the login page's passkey, the callback, `next`. */
  async function consoleWithPasskey(
    passkey: SoftPasskey,
    next: string,
    from: { jar: CookieJar; path: string } = { jar: new CookieJar(), path: `/web/signin?next=${encodeURIComponent(next)}` },
  ): Promise<ConsoleSession> {
    const jar = from.jar;
    const start = await fetch(`${t.url}${from.path}`, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(start);
    const authorizeRes = await fetch(new URL(start.headers.get('location') ?? '', t.url), {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    jar.store(authorizeRes);
    const url = new URL(authorizeRes.headers.get('location') ?? '', t.url).href;
    const res = await fetch(url, { headers: { cookie: jar.header() } });
    jar.store(res);
    const html = await res.text();
    // The login page, even where the browser's sign-in at the authorization server is still alive (prompt=login).
    expect(html).to.include('data-passkey-offer').and.include('name="password"');
    const page: LoginPage = { jar, url, html, verifier: '', csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
    let answer = await post(page, '/passkey', { response: passkey.assert(await signInOptions(page), { origin: t.url }) });
    for (let hop = 0; hop < 10; hop++) {
      jar.store(answer);
      const location = answer.headers.get('location');
      expect(location, await answer.text()).to.be.a('string');
      const target = new URL(location ?? '', t.url);
      if (target.pathname === next) return new ConsoleSession(t, jar);
      answer = await fetch(target, { redirect: 'manual', headers: { cookie: jar.header() } });
    }
    throw new Error('too many redirects signing in with a passkey');
  }

  before(async () => {
    t = await buildLocalhostApp('passkeys_http', { env: { ADMIN_MFA: 'passkey' }, now });
  });
  after(async () => {
    await t?.close();
  });

  it('added after the password is typed again, named, listed with when it was added; in the access log; the same answer twice adds nothing', async () => {
    const user = await account('adder');
    const session = await signInToConsole(t, user, '/console/account');
    const before = await session.get('/console/account');
    expect(before.html).to.include('<h2 id="passkeys">패스키</h2>').and.include('아직 패스키가 없습니다.');
    expect(before.html).to.include('href="/console/account/passkeys/new"');
    // The password is asked again: a wrong one, and nothing starts.
    const wrong = await session.post('/console/account/passkeys', { name: '내 휴대폰', current: 'not the password at all' });
    expect(wrong.res.status).to.equal(422);
    expect(wrong.html).to.include('현재 비밀번호가 올바르지 않습니다');
    expect(await t.db.models.passkeyChallenges.countDocuments({ _id: `register:${ids['adder']}` })).to.equal(0);
    const unnamed = await session.post('/console/account/passkeys', { name: ' ', current: user.password });
    expect(unnamed.res.status).to.equal(422);
    expect(unnamed.html).to.include('패스키 이름을 입력하세요.');

    const passkey = new SoftPasskey();
    const { options, response, done, csrf } = await addPasskey(session, user, '내 휴대폰', passkey);
    // A discoverable credential with user verification, for the service's host name; never the password's account id as the handle.
    expect(options.rp).to.deep.equal({ name: 'Campus Data Service', id: 'localhost' });
    expect(options.authenticatorSelection).to.include({ residentKey: 'required', userVerification: 'required' });
    expect(options.user.name).to.equal(user.email);
    expect(options.user.id).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(options.timeout).to.equal(300000);
    expect(done.res.status).to.equal(303);
    expect(done.res.headers.get('location')).to.equal('/console/account#passkeys');
    const after = await session.get('/console/account');
    expect(flashOf(after.html)).to.equal('패스키를 추가했습니다: 내 휴대폰. 다음 로그인부터 “패스키로 로그인”을 쓸 수 있습니다.');
    expect(after.html).to.include('<th scope="row" data-label="이름" >내 휴대폰</th>').and.include('이 기기에만 있음');
    expect(after.html).to.include(`action="/console/account/passkeys/${passkey.id}/remove"`);
    const stored = await t.db.models.passkeys.findOne({ _id: passkey.id }).lean();
    expect(stored).to.include({ accountId: ids['adder'], name: '내 휴대폰', counter: 1, userHandle: options.user.id, flaggedAt: null });
    const [entry] = await t.db.models.accessAudit.find({ action: 'PASSKEY_ADDED', targetLabel: user.email }).lean();
    expect(entry).to.include({ actorKind: 'ACCOUNT', actorEmail: user.email, targetId: String(ids['adder']) });
    expect(entry?.detail).to.deep.equal({ name: '내 휴대폰' });

    // The same answer again: its challenge was used.
    const replayed = await session.post('/console/account/passkeys/verify', { response }, csrf);
    expect(replayed.res.status).to.equal(303);
    expect(flashOf((await session.get('/console/account')).html)).to.equal(
      '패스키 요청이 만료되었거나 이미 사용되었습니다. 다시 시도하세요.',
    );
    expect(await t.db.models.passkeys.countDocuments({ accountId: ids['adder'] })).to.equal(1);
  });

  it("refuses a passkey made at another origin or for another relying party, or without user verification; an account's 11th", async () => {
    const user = await account('refused-adder');
    const session = await signInToConsole(t, user, '/console/account');
    for (const gesture of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { userVerified: false }]) {
      const { done } = await addPasskey(session, user, 'bad', new SoftPasskey(), gesture);
      expect(done.res.status).to.equal(303);
      expect(flashOf((await session.get('/console/account')).html)).to.equal('패스키를 확인하지 못했습니다. 다시 시도하세요.');
    }
    expect(await t.db.models.passkeys.countDocuments({ accountId: ids['refused-adder'] })).to.equal(0);
    // Malformed answers are refused, never a 500.
    await session.post('/console/account/passkeys', { name: 'x', current: user.password });
    for (const response of ['', 'not json', '{"id":1}', JSON.stringify({ id: 'a', rawId: 'a', type: 'public-key', response: {} })]) {
      const done = await session.post('/console/account/passkeys/verify', { response });
      expect(done.res.status).to.equal(303);
    }
    // At most MAX_PASSKEYS_PER_ACCOUNT.
    const now = new Date();
    await t.db.models.passkeys.insertMany(
      Array.from({ length: MAX_PASSKEYS_PER_ACCOUNT }, (_, i) => ({
        _id: `full-${i}`,
        accountId: ids['refused-adder'],
        name: `key ${i}`,
        publicKey: 'AA',
        counter: 0,
        transports: [],
        userHandle: 'handle',
        multiDevice: false,
        backedUp: false,
        createdAt: now,
      })),
    );
    await t.db.versions.bumpAccount(ids['refused-adder'] ?? 0);
    const page = await session.get('/console/account');
    expect(page.html).to.include('10개 / 최대 10개').and.not.include('href="/console/account/passkeys/new"');
    const full = await session.post('/console/account/passkeys', { name: 'eleventh', current: user.password });
    expect(full.res.status).to.equal(422);
    expect(full.html).to.include('패스키는 계정마다 10개까지 둘 수 있습니다.');
  });

  it("signs in through an app's authorization with no password: options name no account, then consent and a code as usual", async () => {
    const user = await account('signer');
    const passkey = new SoftPasskey();
    await addPasskey(await signInToConsole(t, user, '/console/account'), user, '노트북', passkey);
    const app = await createClient(t.db, { name: '동아리 출석부' });

    const page = await loginPage(app.client.id);
    // The login page offers it (hidden until the script finds WebAuthn), with the scripts served by us.
    expect(page.html).to.include('<div class="passkey" data-passkey-offer hidden>');
    expect(page.html)
      .to.include('<script src="/assets/webauthn.js" defer></script>')
      .and.include('<script src="/assets/passkeys.js" defer></script>');
    expect(page.html).to.include('data-autofill="f-email"');
    const options = await signInOptions(page);
    // Nothing in them says whose passkeys exist: no credential is listed.
    expect(options).to.include({ rpId: 'localhost', userVerification: 'required', timeout: 300000 });
    expect(options.allowCredentials ?? []).to.deep.equal([]);
    const response = passkey.assert(options, { origin: t.url });
    const answer = await post(page, '/passkey', { response, remember: '' });
    expect(answer.status).to.equal(303);
    const { location, pages } = await toTheApp(page, answer);
    // The consent page as after a password, then the code.
    expect(pages).to.have.length(1);
    expect(pages[0]).to.match(/<form method="post" action="\/v1\/oauth\/interaction\/[^"]+\/confirm">/);
    expect(pages[0]).to.include('동아리 출석부');
    expect(location.origin + location.pathname).to.equal(REDIRECT_URI);
    expect(location.searchParams.get('state')).to.equal('st-passkey');
    const code = location.searchParams.get('code') ?? '';
    const token = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: app.client.id,
      client_secret: app.secret ?? '',
      code_verifier: page.verifier,
    });
    expect(token.status).to.equal(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const me = await t.request('/userinfo', { headers: { Authorization: `Bearer ${access_token}` } });
    expect(((await me.json()) as { email: string }).email).to.equal(user.email);
    const stored = await t.db.models.passkeys.findOne({ _id: passkey.id }).lean();
    expect(stored?.counter).to.equal(2);
    expect(stored?.lastUsedAt).to.be.instanceOf(Date);
    expect(t.logs.some((l) => l['event'] === 'login.succeeded' && l['passkey'] === true && l['accountId'] === ids['signer'])).to.equal(
      true,
    );

    // The same answer again, at a new login: its challenge is not this login's (and was used).
    const again = await loginPage(app.client.id);
    const replayed = await post(again, '/passkey', { response });
    expect(replayed.status).to.equal(400);
    expect(await replayed.text()).to.include('패스키 요청이 만료되었거나 이미 사용되었습니다.');
  });

  it('a data update the school asks comes after a passkey sign-in as after a password, then consent and the code', async () => {
    const user = await account('updater');
    await insertSchool(t.db, { students: [buildStudent({ _id: 41, email: user.email, name: '갱신학생', githubId: null })] });
    const passkey = new SoftPasskey();
    await addPasskey(await signInToConsole(t, user, '/console/account'), user, 'phone', passkey);
    await new UpdateRequests(t.db, new AccountStore(t.db)).create({
      selection: { kind: 'list', refs: [user.email] },
      fields: ['githubId'],
      actor: { kind: 'CLI' },
    });
    const app = await createClient(t.db);
    const page = await loginPage(app.client.id);
    const answer = await post(page, '/passkey', { response: passkey.assert(await signInOptions(page), { origin: t.url }) });
    expect(answer.status).to.equal(303);
    // Through the provider to the data update's page.
    let res = answer;
    let url = page.url;
    while (res.headers.get('location')) {
      page.jar.store(res);
      url = new URL(res.headers.get('location') ?? '', url).href;
      res = await fetch(url, { headers: { cookie: page.jar.header() }, redirect: 'manual' });
    }
    const html = await res.text();
    expect(html).to.include('<h1>정보 확인</h1>');
    const action = /<form method="post" action="([^"]+\/data-update)"/.exec(html)?.[1] ?? '';
    const update = await fetch(new URL(action, t.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.jar.header(), origin: t.url },
      body: new URLSearchParams({ csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '', githubId: 'updater-gh' }).toString(),
    });
    const { location, pages } = await toTheApp({ ...page, url: new URL(action, t.url).href }, update);
    expect(pages[0]).to.match(/action="\/v1\/oauth\/interaction\/[^"]+\/confirm"/);
    expect(location.searchParams.get('code')).to.match(/^[\w-]+$/);
    expect((await t.db.models.students.findOne({ _id: 41 }).lean())?.githubId).to.equal('updater-gh');
  });

  it('refuses an answer for another origin or relying party, without user verification, of an unknown passkey, or malformed; each uses its challenge up', async () => {
    const user = await account('refused-signer');
    const passkey = new SoftPasskey();
    await addPasskey(await signInToConsole(t, user, '/console/account'), user, 'phone', passkey);
    const app = await createClient(t.db);
    const cases: [Partial<Gesture>, SoftPasskey, number, string][] = [
      [{ origin: 'https://evil.example' }, passkey, 401, '패스키를 확인하지 못했습니다.'],
      [{ origin: 'http://127.0.0.1:1' }, passkey, 401, '패스키를 확인하지 못했습니다.'],
      [{ rpId: 'evil.example' }, passkey, 401, '패스키를 확인하지 못했습니다.'],
      [{ userVerified: false }, passkey, 401, '패스키를 확인하지 못했습니다.'],
      [{}, new SoftPasskey(), 401, '이 패스키는 이 계정이나 이 서비스에 등록되어 있지 않습니다.'],
    ];
    for (const [gesture, key, status, message] of cases) {
      const page = await loginPage(app.client.id);
      const response = key.assert(await signInOptions(page), { origin: t.url, ...gesture });
      const answer = await post(page, '/passkey', { response });
      expect(answer.status, JSON.stringify(gesture)).to.equal(status);
      const html = await answer.text();
      expect(html).to.include(message);
      // The login form again, the problem at the passkey's button.
      expect(html).to.include('href="#f-passkey"').and.include('name="password"');
      // Its challenge is gone: the right answer to it is refused too.
      const right = await post(page, '/passkey', {
        response: passkey.assert(
          JSON.parse(JSON.stringify({ challenge: challengeOf(response), rpId: 'localhost' })) as PublicKeyCredentialRequestOptionsJSON,
          { origin: t.url },
        ),
      });
      expect(right.status).to.equal(400);
    }
    const page = await loginPage(app.client.id);
    for (const response of [
      '',
      'x',
      '{}',
      '{"id":"a","rawId":"a","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"","signature":""}}',
    ]) {
      expect((await post(page, '/passkey', { response })).status, response).to.be.oneOf([401]);
    }
    expect((await t.db.models.passkeys.findOne({ _id: passkey.id }).lean())?.flaggedAt).to.equal(null);
  });

  it('a counter that goes backwards (a cloned authenticator) is refused and flags the passkey, which then signs in no more', async () => {
    const user = await account('cloned');
    const passkey = new SoftPasskey(10);
    const session = await signInToConsole(t, user, '/console/account');
    await addPasskey(session, user, 'security key', passkey);
    const app = await createClient(t.db);
    const first = await loginPage(app.client.id);
    expect(
      (await post(first, '/passkey', { response: passkey.assert(await signInOptions(first), { origin: t.url, counter: 11 }) })).status,
    ).to.equal(303);
    // A copy of the authenticator still at 11 (or behind) signs the next challenge.
    const clone = await loginPage(app.client.id);
    const refused = await post(clone, '/passkey', { response: passkey.assert(await signInOptions(clone), { origin: t.url, counter: 11 }) });
    expect(refused.status).to.equal(403);
    expect(await refused.text()).to.include('이 패스키는 복제되었을 수 있어 더는 로그인에 쓸 수 없습니다.');
    const stored = await t.db.models.passkeys.findOne({ _id: passkey.id }).lean();
    expect(stored?.flaggedAt).to.be.instanceOf(Date);
    expect(stored?.counter).to.equal(11);
    expect(t.logs.some((l) => l['event'] === 'login.passkey_cloned' && l['level'] === 'warn')).to.equal(true);
    // Flagged: even the real authenticator's next answer is refused, and the console says why.
    const next = await loginPage(app.client.id);
    expect(
      (await post(next, '/passkey', { response: passkey.assert(await signInOptions(next), { origin: t.url, counter: 12 }) })).status,
    ).to.equal(403);
    expect((await session.get('/console/account')).html).to.include('<span class="tag">사용 중지됨 (복제 의심)</span>');
    // A forged answer with a lower counter but a bad signature flags nothing.
    const honest = new SoftPasskey(5);
    await addPasskey(session, user, 'second key', honest);
    const forged = await loginPage(app.client.id);
    const options = await signInOptions(forged);
    const response = JSON.parse(honest.assert(options, { origin: t.url, counter: 1 })) as { response: { signature: string } };
    response.response.signature = Buffer.alloc(70, 1).toString('base64url');
    expect((await post(forged, '/passkey', { response: JSON.stringify(response) })).status).to.equal(401);
    expect((await t.db.models.passkeys.findOne({ _id: honest.id }).lean())?.flaggedAt).to.equal(null);
  });

  it('removed by its owner, it signs in no more; in the access log', async () => {
    const user = await account('remover');
    const passkey = new SoftPasskey();
    const session = await signInToConsole(t, user, '/console/account');
    await addPasskey(session, user, '옛 휴대폰', passkey);
    const removed = await session.post(`/console/account/passkeys/${passkey.id}/remove`, {});
    expect(removed.res.status).to.equal(303);
    expect(flashOf((await session.get('/console/account')).html)).to.equal('패스키를 삭제했습니다: 옛 휴대폰');
    expect((await session.post(`/console/account/passkeys/${passkey.id}/remove`, {})).res.status).to.equal(404);
    const app = await createClient(t.db);
    const page = await loginPage(app.client.id);
    const answer = await post(page, '/passkey', { response: passkey.assert(await signInOptions(page), { origin: t.url }) });
    expect(answer.status).to.equal(401);
    const [entry] = await t.db.models.accessAudit.find({ action: 'PASSKEY_REMOVED', targetLabel: user.email }).lean();
    expect(entry).to.include({ actorKind: 'ACCOUNT', actorEmail: user.email });
    expect(entry?.detail).to.deep.equal({ names: ['옛 휴대폰'] });
  });

  it("ADMIN_MFA=passkey: a staff sign-in with a passkey opens /admin; staff remove a person's passkeys there (audited); the operator lists and removes them", async () => {
    const root = await account('root-with-passkey', 'ROOT');
    const rootKey = new SoftPasskey();
    await addPasskey(await signInToConsole(t, root, '/console/account'), root, 'root key', rootKey);
    const stale = await consoleWithPasskey(rootKey, '/admin');
    expect((await stale.get('/admin')).res.status).to.equal(200);
    // 15 minutes on, the passkey is asked again (the login form, prompt=login), and a new sign-in with it opens /admin.
    offsetMs += 16 * 60 * 1000;
    const again = await stale.get('/admin');
    expect(again.res.status).to.equal(303);
    expect(again.res.headers.get('location')).to.equal('/web/signin?next=%2Fadmin&reauth=age');
    // The authorization server's clock is the real one (auth_time): the app's goes back to it before the new sign-in.
    offsetMs = 0;
    const staff = await consoleWithPasskey(rootKey, '/admin', { jar: stale.jar, path: again.res.headers.get('location') ?? '' });
    expect((await staff.get('/admin')).res.status).to.equal(200);

    const person = await account('lost-device');
    const lost = new SoftPasskey();
    await addPasskey(await signInToConsole(t, person, '/console/account'), person, '잃어버린 휴대폰', lost);
    const detail = await staff.get(`/admin/accounts/${ids['lost-device']}`);
    expect(detail.html).to.include('<h2 id="account-passkeys">패스키</h2>').and.include('잃어버린 휴대폰');
    expect(detail.html).to.include(`action="/admin/accounts/${ids['lost-device']}/passkeys/remove"`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(detail.html)?.[1];
    const removed = await staff.post(`/admin/accounts/${ids['lost-device']}/passkeys/remove`, {}, csrf);
    expect(removed.res.status).to.equal(303);
    expect(flashOf((await staff.get(`/admin/accounts/${ids['lost-device']}`)).html)).to.equal(
      'lost-device@gsm.hs.kr의 패스키 1개를 삭제했습니다.',
    );
    const [entry] = await t.db.models.accessAudit.find({ action: 'PASSKEY_REMOVED', targetLabel: person.email }).lean();
    expect(entry).to.include({ actorKind: 'ACCOUNT', actorEmail: root.email });
    expect(entry?.detail).to.deep.equal({ names: ['잃어버린 휴대폰'] });
    // Nobody removes their own this way.
    const own = await staff.post(`/admin/accounts/${ids['root-with-passkey']}/passkeys/remove`, {}, csrf);
    expect(flashOf((await staff.get(own.res.headers.get('location') ?? '/admin')).html)).to.equal(
      '자신의 계정은 사용 중지하거나 삭제할 수 없습니다.',
    );

    // The operator's command, on the same database.
    const uri = new URL(testDatabaseUri('unused'));
    uri.pathname = `/${t.db.name}`;
    const env = { MONGODB_URI: uri.href, AUTH_URL: t.url };
    const listed = await runCampus(env, ['accounts', 'passkeys', 'list', root.email, '--json']);
    expect(listed.code, listed.stderr).to.equal(0);
    const list = JSON.parse(listed.stdout) as { email: string; passkeys: { id: string; name: string; flaggedAt: null; synced: boolean }[] };
    expect(list.email).to.equal(root.email);
    expect(list.passkeys.map((p) => [p.id, p.name, p.flaggedAt, p.synced])).to.deep.equal([[rootKey.id, 'root key', null, false]]);
    expect((await runCampus(env, ['accounts', 'passkeys', 'remove', root.email])).stderr).to.include(
      'Give exactly one of --id <id> and --all.',
    );
    const none = await runCampus(env, ['accounts', 'passkeys', 'remove', root.email, '--id', 'nope']);
    expect(none.code).to.equal(1);
    const gone = await runCampus(env, ['accounts', 'passkeys', 'remove', root.email, '--id', rootKey.id, '--json']);
    expect(gone.code, gone.stderr).to.equal(0);
    expect(JSON.parse(gone.stdout)).to.deep.include({ email: root.email });
    const [cli] = await t.db.models.accessAudit.find({ action: 'PASSKEY_REMOVED', targetLabel: root.email }).lean();
    expect(cli).to.include({ actorKind: 'CLI' });
    // Its passkey gone, the staff sign-in it made holds no privilege any more.
    expect((await staff.get('/admin')).res.status).to.equal(403);
    expect((await runCampus(env, ['accounts', 'passkeys', 'list', 'nobody@gsm.hs.kr'])).stderr).to.include(
      'No account has the email nobody@gsm.hs.kr.',
    );
  });

  it('at an address with no relying party (an IP address), the login page is as it was and offers no passkey', async () => {
    const plain = await buildTestApp('passkeys_ip', { db: t.db });
    try {
      const app = await createClient(t.db);
      const start = await plain.request(
        `/v1/oauth/authorize?${new URLSearchParams({ client_id: app.client.id, redirect_uri: REDIRECT_URI, response_type: 'code', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`,
        { redirect: 'manual' },
      );
      const jar = new CookieJar();
      jar.store(start);
      const url = new URL(start.headers.get('location') ?? '', plain.url).href;
      const res = await fetch(url, { headers: { cookie: jar.header() } });
      jar.store(res);
      const html = await res.text();
      expect(html).to.not.include('data-passkey').and.not.include('<script');
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const options = await fetch(`${url}/passkey/options`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header(), origin: plain.url },
        body: new URLSearchParams({ csrf }).toString(),
      });
      expect(options.status).to.equal(400);
    } finally {
      await plain.close();
    }
  });
});

/** The challenge an answer signed (from its client data). */
function challengeOf(response: string): string {
  const parsed = JSON.parse(response) as { response: { clientDataJSON: string } };
  return (JSON.parse(Buffer.from(parsed.response.clientDataJSON, 'base64url').toString()) as { challenge: string }).challenge;
}
