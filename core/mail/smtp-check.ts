// The SMTP check behind GET /api/contact/test-smtp: a fresh connection to
// SMTP_URL (not the process's pooled transport), nodemailer's verify (DNS,
// connect, TLS, authentication), and with `sendTo` a test message. What
// failed is named by stage; the password never appears in the answer.
import nodemailer from 'nodemailer';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { Problem, problemType } from '../errors.ts';

export const smtpStages = ['dns', 'connect', 'tls', 'auth', 'send'] as const;
type Stage = (typeof smtpStages)[number];

export const smtpCheckSchema = z
  .object({
    ok: z.literal(true),
    host: z.string(),
    port: z.number().int(),
    secure: z.boolean().describe('TLS from the start (smtps://); otherwise STARTTLS when the server offers it'),
    user: z.string().nullable(),
    sent_to: z.string().nullable().describe('Where the test message went (send_to), if one was asked for'),
    message_id: z.string().nullable(),
    elapsed_ms: z.number().int(),
  })
  .meta({ id: 'SmtpCheck' });

/** nodemailer's error codes onto the stage that failed. */
function stageOf(error: { code?: string; message?: string }, sending: boolean): Stage {
  switch (error.code) {
    case 'EDNS':
      return 'dns';
    case 'EAUTH':
    case 'ENOAUTH':
      return 'auth';
    case 'ETLS':
      return 'tls';
    case 'ECONNECTION':
    case 'ETIMEDOUT':
    case 'ESOCKET':
    case 'ECONNREFUSED':
      return /ssl|tls|certificate|wrong version|handshake/i.test(error.message ?? '') ? 'tls' : 'connect';
    default:
      return sending ? 'send' : 'connect';
  }
}

export async function checkSmtp(config: Config, sendTo: string | undefined): Promise<z.infer<typeof smtpCheckSchema>> {
  const smtpUrl = config.mail.smtpUrl;
  if (!smtpUrl)
    throw new Problem(503, 'Mail is not configured: set SMTP_URL.', {
      type: problemType('mail-not-configured'),
      title: 'Mail not configured',
      extensions: { setting: 'SMTP_URL' },
    });
  // The same URL the mail job sends with (its query options, e.g. tls.rejectUnauthorized, apply),
  // with timeouts short enough for verify and a test message within the endpoint's 20 s.
  const url = new URL(smtpUrl);
  for (const [option, ms] of [
    ['connectionTimeout', '4000'],
    ['greetingTimeout', '4000'],
    ['socketTimeout', '5000'],
    ['dnsTimeout', '3000'],
  ] as const)
    if (!url.searchParams.has(option)) url.searchParams.set(option, ms);
  const secure = url.protocol === 'smtps:';
  const target = { host: url.hostname, port: Number(url.port) || (secure ? 465 : 587), secure };
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const user = url.username ? decode(url.username) : null;
  const secrets = [url.password, decode(url.password)].filter(Boolean);
  const transport = nodemailer.createTransport(url.toString());
  const started = performance.now();
  let sending = false;
  try {
    await transport.verify();
    sending = true;
    const info = sendTo
      ? ((await transport.sendMail({
          from: config.mail.from,
          to: sendTo,
          subject: 'SMTP test from the content platform',
          text: 'This message was sent by GET /api/contact/test-smtp. Mail is working.',
        })) as { messageId?: string })
      : null;
    return {
      ok: true,
      ...target,
      user,
      sent_to: sendTo ?? null,
      message_id: info?.messageId ?? null,
      elapsed_ms: Math.round(performance.now() - started),
    };
  } catch (error) {
    const failure = error as { code?: string; message?: string; responseCode?: number };
    const stage = stageOf(failure, sending);
    const detail = secrets.reduce((text, secret) => text.split(secret).join('***'), failure.message ?? 'unknown error');
    throw new Problem(502, `The SMTP check failed at ${stage}: ${detail}`, {
      type: problemType('smtp-check-failed'),
      title: 'SMTP check failed',
      extensions: { stage, code: failure.code ?? null, response_code: failure.responseCode ?? null, ...target, user },
    });
  } finally {
    transport.close();
  }
}
