import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config/index.js';
import { ServiceUnavailableError } from '../errors/index.js';
import type { Logger } from '../logger.js';

/** One mail: Korean first, English below (src/oauth/mail-texts.ts). */
export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  /** The text with its one-time code masked: what the development log shows. */
  readonly loggableText: string;
}

/** A mail kept in the development outbox. */
export interface OutboxEntry {
  readonly at: Date;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** How many mails the development outbox keeps (the newest). */
export const OUTBOX_SIZE = 50;

/** The development outbox: the last mails, in memory, newest first (src/surfaces/accounts/outbox.ts shows them). */
export class Outbox {
  private readonly entries: OutboxEntry[] = [];

  add(entry: OutboxEntry): void {
    this.entries.unshift(entry);
    this.entries.length = Math.min(this.entries.length, OUTBOX_SIZE);
  }

  list(): readonly OutboxEntry[] {
    return [...this.entries];
  }
}

/** Sends the service's mails. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
  /** Present only without SMTP_URL (development and tests): where the mails went. */
  readonly outbox: Outbox | undefined;
  close(): Promise<void>;
}

/** Seconds the SMTP conversation may take at each step before the send fails (and the caller gets a 503). */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/**
 * SMTP through nodemailer when SMTP_URL is set; otherwise (development and tests only: the
 * configuration refuses production without SMTP_URL) the outbox, with each mail written to the
 * log with its code masked. The SMTP URL (it holds the server's password) is never logged.
 */
export function createMailer(config: Config, logger: Logger, now: () => Date = () => new Date()): Mailer {
  return config.mail.smtpUrl
    ? new SmtpMailer(config.mail.smtpUrl, config.mail.from, logger, config.isProduction)
    : new OutboxMailer(logger, now);
}

class SmtpMailer implements Mailer {
  readonly outbox = undefined;
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
    private readonly logger: Logger,
    isProduction: boolean,
  ) {
    // smtp:// upgrades with STARTTLS when the server offers it; someone on the path can strip
    // the offer and read the codes. In production the upgrade is required (the mail fails
    // instead of going out in clear); smtps:// is TLS from the first byte.
    const requireTLS = isProduction && url.startsWith('smtp://');
    this.transport = nodemailer.createTransport({ url, ...SMTP_TIMEOUTS, ...(requireTLS ? { requireTLS: true } : {}) });
  }

  async send(mail: Mail): Promise<void> {
    try {
      // Quoted-printable keeps the digits of a code readable in the raw message.
      const info = await this.transport.sendMail({
        from: this.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        textEncoding: 'quoted-printable',
      });
      this.logger.info({ event: 'mail.sent', messageId: info.messageId }, 'mail sent');
    } catch (err) {
      // nodemailer's errors name the server's reply, never the message; only the code and reply are kept.
      const reason = err instanceof Error ? { name: err.name, code: 'code' in err ? err.code : undefined } : {};
      this.logger.warn({ event: 'mail.failed', reason }, 'could not send mail');
      throw new ServiceUnavailableError('The mail server could not be reached; try again in a few minutes.', err, 60);
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

class OutboxMailer implements Mailer {
  readonly outbox = new Outbox();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  async send(mail: Mail): Promise<void> {
    this.outbox.add({ at: this.now(), to: mail.to, subject: mail.subject, text: mail.text });
    this.logger.info(
      { event: 'mail.outbox', to: mail.to, subject: mail.subject, text: mail.loggableText },
      'mail not sent (no SMTP_URL): kept in the development outbox, /dev/outbox on this machine',
    );
  }

  async close(): Promise<void> {}
}
