import { defineCommand, UsageError } from "../command.ts";

interface KeptMail {
  recipient: string;
  subject: string;
  link: string | null;
  created_at: Date;
}

/** Mail the development transport kept (no SMTP_URL): how a developer follows sign-in links. */
export const mailCommands = [
  defineCommand({
    words: ["mail", "list"],
    summary: "print mail kept in the outbox when no SMTP server is configured, newest first",
    options: {
      to: { type: "string", description: "only mail to this address" },
      limit: { type: "string", description: "how many (default 20, at most 1000)" },
    },
    async run(sql, o) {
      const limit = o.limit === undefined ? 20 : Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError("--limit must be 1–1000");
      const to = typeof o.to === "string" ? o.to.trim().toLowerCase() : undefined;
      return sql<KeptMail[]>`
        SELECT recipient, subject, link, created_at FROM mail_outbox
        ${to === undefined ? sql`` : sql`WHERE recipient = ${to}`}
        ORDER BY created_at DESC LIMIT ${limit}`;
    },
    describe: (mails) =>
      mails.length === 0
        ? "no mail kept"
        : mails
            .map((m) => `${m.created_at.toISOString()}  ${m.recipient}  ${m.subject}${m.link ? `\n  ${m.link}` : ""}`)
            .join("\n"),
  }),
];
