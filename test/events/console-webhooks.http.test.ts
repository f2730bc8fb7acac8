import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { EVENT_TYPE_TABLE, EVENT_TYPES, scopesReceiving } from '../../src/data/events/types.js';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../../src/data/events/webhooks.js';
import { WEBHOOK_SEND_LIMIT } from '../../src/limits.js';
import { escapeHtml } from '../../src/surfaces/web/html.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';
import { TestReceiver } from '../helpers/receiver.js';

/**
 * The developer console's webhooks over HTTP (src/surfaces/console/webhooks.ts): create
 * with the secret shown once, a test event and a redelivery to a real receiver (both verified with
 * the standardwebhooks package and recorded), pause and resume, a new secret, deletion only when
 * confirmed, the limit of 10, and another account's webhook reads as not found. The delivery worker
 * is not part of the in-process app (it runs in `campus serve`: test/events/webhooks*.integration.test.ts).
 */

function shownOnce(html: string): string {
  const value = /<code id="shown-once" class="secret-value">([^<]+)<\/code>/.exec(html)?.[1];
  if (!value) throw new Error('no value shown once on the page');
  return value;
}

describe('events and webhooks: /console/webhooks in the developer console', function () {
  this.timeout(120000);
  let t: TestApp;
  let a: ConsoleSession;
  let b: ConsoleSession;
  let receiver: TestReceiver;

  before(async () => {
    t = await buildTestApp('console_webhooks');
    const alice = { email: 'hooks.alice@school.test', password: 'alice keeps a garden' };
    const bob = { email: 'hooks.bob@school.test', password: 'bob rides a bicycle' };
    const aliceId = await createAccount(t.db, alice.email, alice.password);
    await createAccount(t.db, bob.email, bob.password);
    await new ApiKeyService(t.db, t.config.policy).issue({ scopes: ['CLUB_READ'], ownerAccountId: aliceId });
    a = await signInToConsole(t, alice);
    b = await signInToConsole(t, bob);
    receiver = await new TestReceiver().open();
  });
  after(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('creates a webhook, shows its secret once, sends a test event and redelivers it, each signed and logged', async () => {
    const created = await a.post('/console/webhooks', { url: receiver.url, events: ['club.*', 'batch.completed'] });
    expect(created.res.status).to.equal(303);
    const location = created.res.headers.get('location') ?? '';
    expect(location).to.match(/^\/console\/webhooks\/wh_[0-9a-f]{16}$/);
    const detail = await a.get(location);
    const secret = shownOnce(detail.html);
    expect(secret).to.match(/^whsec_/);
    expect(detail.html).to.include('웹훅을 만들었습니다.').and.include('club.*, batch.completed').and.include('보내는 중');
    expect((await a.get(location)).html).not.to.include(secret);
    expect(t.logText()).not.to.include(secret);

    const tested = await a.post(`${location}/test`, {});
    expect(tested.res.status).to.equal(303);
    expect((await a.get(location)).html).to.include('보냈습니다. 받는 쪽이 2xx로 답했습니다.');
    const [first] = receiver.received;
    expect(new Webhook(secret).verify(first?.body ?? '', first?.headers as Record<string, string>)).to.include({ type: 'webhook.test' });
    const page = (await a.get(location)).html;
    const deliveryId = /\/deliveries\/([^/]+)\/redeliver/.exec(page)?.[1] ?? '';
    expect(deliveryId).to.match(/^wh_[0-9a-f]{16}-test-[0-9a-f]{12}$/);
    expect((await a.post(`${location}/deliveries/${deliveryId}/redeliver`, {})).res.status).to.equal(303);
    expect(receiver.received).to.have.length(2);
    expect(receiver.received[1]?.headers['webhook-id']).to.equal(first?.headers['webhook-id']);
    const log = (await a.get(location)).html;
    expect(log.match(/<strong>200<\/strong>/g)).to.have.length(2);
    expect(log).to.include('직접');

    // Bob sees none of it.
    expect((await b.get(location)).res.status).to.equal(404);
    expect((await b.post(`${location}/test`, {})).res.status).to.equal(404);
    expect((await b.post(`${location}/deliveries/${deliveryId}/redeliver`, {})).res.status).to.equal(404);
    expect((await b.get('/console/webhooks')).html).to.include('아직 웹훅이 없습니다.');
  });

  it('pauses, resumes, issues a new secret, and deletes only when confirmed', async () => {
    const location = (await a.post('/console/webhooks', { url: receiver.url, events: ['student.*'] })).res.headers.get('location') ?? '';
    await a.post(`${location}/pause`, {});
    expect((await a.get(location)).html)
      .to.include('멈춤')
      .and.include('다시 시작');
    await a.post(`${location}/resume`, {});
    expect((await a.get(location)).html).to.include('보내는 중');
    const rotated = await a.post(`${location}/rotate`, {});
    const secret = shownOnce((await a.get(rotated.res.headers.get('location') ?? '')).html);
    await a.post(`${location}/test`, {});
    const last = receiver.received.at(-1);
    expect(new Webhook(secret).verify(last?.body ?? '', last?.headers as Record<string, string>)).to.include({ type: 'webhook.test' });
    const unconfirmed = await a.post(`${location}/delete`, {});
    expect(unconfirmed.res.status).to.equal(422);
    expect(unconfirmed.html).to.include('삭제하려면 확인란을 선택하세요.');
    const deleted = await a.post(`${location}/delete`, { confirm: 'yes' });
    expect(deleted.res.headers.get('location')).to.equal('/console/webhooks');
    expect((await a.get(location)).res.status).to.equal(404);
  });

  it(`test events and redeliveries together: at most ${WEBHOOK_SEND_LIMIT.points} a minute per account, then 429 with Retry-After on the webhook's page`, async () => {
    const carol = { email: 'hooks.carol@school.test', password: 'carol tests everything' };
    await createAccount(t.db, carol.email, carol.password);
    const c = await signInToConsole(t, carol);
    const csrf = await c.csrf();
    const location = (await c.post('/console/webhooks', { url: receiver.url, events: ['club.*'] }, csrf)).res.headers.get('location') ?? '';
    const received = receiver.received.length;
    const tests = WEBHOOK_SEND_LIMIT.points - 3;
    for (let i = 0; i < tests; i++) expect((await c.post(`${location}/test`, {}, csrf)).res.status).to.equal(303);
    const deliveryId = /\/deliveries\/([^/]+)\/redeliver/.exec((await c.get(location)).html)?.[1] ?? '';
    const redelivered = await Promise.all(
      Array.from({ length: 6 }, () => c.post(`${location}/deliveries/${deliveryId}/redeliver`, {}, csrf)),
    );
    expect(redelivered.map((r) => r.res.status).sort()).to.deep.equal([303, 303, 303, 429, 429, 429]);
    const refused = await c.post(`${location}/test`, {}, csrf);
    expect(refused.res.status).to.equal(429);
    const wait = Number(refused.res.headers.get('retry-after'));
    expect(wait).to.be.within(1, WEBHOOK_SEND_LIMIT.durationSeconds);
    expect(refused.html).to.include(`테스트 이벤트와 다시 보내기는 합쳐서 1분에 10번까지입니다. ${wait}초 뒤에 다시 보내세요.`);
    expect(refused.html).to.include('id="webhook-id"');
    const english = await c.post(`${location}/test?lang=en`, {}, csrf);
    expect(english.res.status).to.equal(429);
    expect(english.html).to.match(/At most 10 test events and deliveries sent again, together, every minute\. Try again in \d+ seconds?\./);
    // Only the sends let through reached the receiver; another account still sends.
    expect(receiver.received.length - received).to.equal(WEBHOOK_SEND_LIMIT.points);
    const other = (await b.post('/console/webhooks', { url: receiver.url, events: ['club.*'] })).res.headers.get('location') ?? '';
    expect((await b.post(`${other}/test`, {})).res.status).to.equal(303);
  });

  it('offers every type of the event table with its hint and the scopes that receive it, in Korean and English', async () => {
    for (const lang of ['ko', 'en'] as const) {
      const form = (await a.get(`/console/webhooks?lang=${lang}`)).html;
      const offered = [...form.matchAll(/name="events"\s+value="([^"]+)"/g)].map((m) => m[1]);
      expect(offered, lang).to.deep.equal(EVENT_TYPES);
      for (const type of EVENT_TYPES) {
        expect(form, `${lang} ${type}`).to.include(
          escapeHtml(`${EVENT_TYPE_TABLE[type].hint[lang]} · ${scopesReceiving(type).join(', ')}`),
        );
      }
    }
    // Single types, and groups the form does not show (neis.*: every prefix of a type is one).
    const created = await a.post('/console/webhooks', { url: receiver.url, events: ['neis.*', 'batch.completed'] });
    expect(created.res.status).to.equal(303);
    expect((await a.get(created.res.headers.get('location') ?? '')).html).to.include('neis.*, batch.completed');
  });

  it('refuses a bad address, no event type, and an eleventh webhook, at their fields (422)', async () => {
    const metadata = await a.post('/console/webhooks?lang=en', { url: 'http://169.254.169.254/latest', events: ['club.*'] });
    expect(metadata.res.status).to.equal(422);
    expect(metadata.html).to.include('This address cannot be used. 169.254.169.254 is a cloud metadata address.');
    const none = await a.post('/console/webhooks?lang=ko', { url: receiver.url });
    expect(none.res.status).to.equal(422);
    expect(none.html).to.include('받을 이벤트를 하나 이상 고르세요.');
    const have = ((await a.get('/console/webhooks')).html.match(/href="\/console\/webhooks\/wh_/g) ?? []).length;
    for (let i = have; i < MAX_WEBHOOKS_PER_ACCOUNT; i++)
      await a.post('/console/webhooks', { url: `${receiver.url}/${i}`, events: ['club.*'] });
    const eleventh = await a.post('/console/webhooks', { url: receiver.url, events: ['club.*'] });
    expect(eleventh.res.status).to.equal(422);
    expect(eleventh.html).to.include('웹훅은 10개까지입니다. 쓰지 않는 웹훅을 삭제한 뒤 만드세요.');
  });
});
