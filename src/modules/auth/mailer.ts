import nodemailer from "nodemailer";
import type { Config } from "../../config.ts";
import { problem } from "../../core/problem.ts";
import type { Sql } from "../../db/sql.ts";
import type { Logger } from "../../log.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The one link the message is about (sign-in, invite), kept apart so the CLI can print it. */
  link?: string;
  /** A bearer secret the text and link carry (a sign-in token): never logged, and kept only redacted. */
  secret?: string;
}

/** `text` with `secret` cut to its first characters: enough to tell links apart, never enough to use one. */
export function redactSecret(text: string, secret: string | undefined): string {
  return secret ? text.replaceAll(secret, `${secret.slice(0, 7)}…[redacted]`) : text;
}

export interface Mailer {
  readonly kind: "smtp" | "development";
  send(mail: Mail): Promise<void>;
}

/**
 * Without SMTP: log the message and keep it in `mail_outbox`. Secrets are
 * redacted in both unless `rawLinks` (MAIL_OUTBOX_RAW_LINKS, development only)
 * keeps them whole in the outbox, where a developer follows links from.
 */
function developmentMailer(sql: Sql, log: Logger, rawLinks: boolean): Mailer {
  if (rawLinks) {
    log.warn(
      "MAIL_OUTBOX_RAW_LINKS is on: usable sign-in links are kept in the mail_outbox table. For development only; never in production.",
    );
  }
  return {
    kind: "development",
    async send(mail) {
      const kept = (text: string) => (rawLinks ? text : redactSecret(text, mail.secret));
      const link = mail.link === undefined ? null : kept(mail.link);
      await sql`
        INSERT INTO mail_outbox (recipient, subject, body, link)
        VALUES (${mail.to}, ${mail.subject}, ${kept(mail.text)}, ${link})`;
      log.info("mail kept in outbox (no SMTP configured)", {
        to: mail.to,
        subject: mail.subject,
        link: mail.link === undefined ? undefined : redactSecret(mail.link, mail.secret),
      });
    },
  };
}

/** Through the configured SMTP server; a server that refuses or cannot be reached is a 503, never a 500. */
function smtpMailer(url: string, from: string, log: Logger): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    kind: "smtp",
    async send(mail) {
      try {
        await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
      } catch (error) {
        log.error("mail could not be sent", { to: mail.to, subject: mail.subject, error: String(error) });
        throw problem("mail_unavailable", "the e-mail could not be sent; try again later");
      }
    },
  };
}

export function createMailer(
  config: Pick<Config, "SMTP_URL" | "MAIL_FROM" | "MAIL_OUTBOX_RAW_LINKS">,
  sql: Sql,
  log: Logger,
): Mailer {
  return config.SMTP_URL
    ? smtpMailer(config.SMTP_URL, config.MAIL_FROM, log)
    : developmentMailer(sql, log, config.MAIL_OUTBOX_RAW_LINKS);
}
