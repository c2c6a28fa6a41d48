// A real SMTP server on 127.0.0.1 (smtp-server) that keeps what it receives.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export type ReceivedMail = { to: string[]; raw: string; text: string };

export type FakeSmtp = { url: string; messages: ReceivedMail[]; close(): Promise<void> };

/** Undoes quoted-printable soft line breaks and escapes, enough to read tokens out of bodies. */
const decodeQuotedPrintable = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

export async function startFakeSmtp(): Promise<FakeSmtp> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        messages.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          text: decodeQuotedPrintable(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function waitForMail(smtp: FakeSmtp, to: string, count = 1): Promise<ReceivedMail> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const mine = smtp.messages.filter((message) => message.to.includes(to));
    if (mine.length >= count) return mine[count - 1]!;
    if (Date.now() > deadline) throw new Error(`no mail for ${to} within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const tokenIn = (mail: ReceivedMail): string => {
  const match = /token: (\S+)/.exec(mail.text);
  if (!match?.[1]) throw new Error(`no token in:\n${mail.text}`);
  return match[1];
};
