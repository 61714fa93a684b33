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
}

export interface Mailer {
  readonly kind: "smtp" | "development";
  send(mail: Mail): Promise<void>;
}

/** Without SMTP: log the message and keep it in `mail_outbox`, so development and tests can follow links. */
function developmentMailer(sql: Sql, log: Logger): Mailer {
  return {
    kind: "development",
    async send(mail) {
      await sql`
        INSERT INTO mail_outbox (recipient, subject, body, link)
        VALUES (${mail.to}, ${mail.subject}, ${mail.text}, ${mail.link ?? null})`;
      log.info("mail kept in outbox (no SMTP configured)", { to: mail.to, subject: mail.subject, link: mail.link });
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

export function createMailer(config: Pick<Config, "SMTP_URL" | "MAIL_FROM">, sql: Sql, log: Logger): Mailer {
  return config.SMTP_URL ? smtpMailer(config.SMTP_URL, config.MAIL_FROM, log) : developmentMailer(sql, log);
}
