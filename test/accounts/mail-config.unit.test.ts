import { expect } from 'chai';
import { Writable } from 'node:stream';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { createMailer } from '../../src/oauth/mail.js';
import { TestMailServer } from '../helpers/smtp.js';

/** The variables of self-service accounts: the sign-up domain and the mail server. */
describe('accounts and sign-in: configuration of sign-up and mail', () => {
  const production = {
    NODE_ENV: 'production',
    MONGODB_URI: 'mongodb://db/campus',
    AUTH_URL: 'https://auth.example.kr',
    USERINFO_URL: 'https://me.example.kr',
    BASE_URL: 'https://api.example.kr',
    OAUTH_JWKS: '{"keys":[]}',
    OAUTH_COOKIE_KEYS: 'cookie-key-one-that-is-long-enough-32',
  };

  it('production refuses to start without SMTP_URL (codes are sent by mail)', () => {
    expect(() => loadConfig(production))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['SMTP_URL: required in production (sign-up and password-reset codes are sent by email)']);
    expect(loadConfig({ ...production, SMTP_URL: 'smtps://mailer:pw@smtp.example.kr:465' }).mail.smtpUrl).to.equal(
      'smtps://mailer:pw@smtp.example.kr:465',
    );
  });

  it('development runs without SMTP_URL (the outbox); defaults: gsm.hs.kr and a no-reply sender of that domain', () => {
    const config = loadConfig({});
    expect(config.mail).to.deep.equal({ smtpUrl: undefined, from: '"캠퍼스 데이터 서비스 (Campus Data Service)" <no-reply@gsm.hs.kr>' });
    expect(config.schoolEmailDomain).to.equal('gsm.hs.kr');
    const other = loadConfig({ SCHOOL_EMAIL_DOMAIN: ' School.Example.KR ', MAIL_FROM: 'Campus <campus@school.example.kr>' });
    expect(other.schoolEmailDomain).to.equal('school.example.kr');
    expect(other.mail.from).to.equal('Campus <campus@school.example.kr>');
  });

  it('names a malformed SMTP_URL or domain', () => {
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example.kr', SCHOOL_EMAIL_DOMAIN: '@gsm.hs.kr' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['SCHOOL_EMAIL_DOMAIN: must be a domain name such as gsm.hs.kr', 'SMTP_URL: must start with smtp:// or smtps://']);
  });

  it('in production an smtp:// server must upgrade to TLS (STARTTLS): without it the mail fails instead of going out in clear', async () => {
    const server = await TestMailServer.start(); // offers no STARTTLS
    const logger = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
    const mail = { to: 'a@gsm.hs.kr', subject: 's', text: 'code 12345678', loggableText: 'code ········' };
    try {
      const prod = createMailer(loadConfig({ ...production, SMTP_URL: server.url }), logger);
      const refused = await prod.send(mail).catch((e: unknown) => e);
      expect(refused).to.be.an('error').with.property('status', 503);
      expect(server.mails).to.have.length(0);
      await prod.close();
      const dev = createMailer(loadConfig({ SMTP_URL: server.url }), logger);
      await dev.send(mail);
      expect(server.mails).to.have.length(1);
      await dev.close();
    } finally {
      await server.close();
    }
  });
});
