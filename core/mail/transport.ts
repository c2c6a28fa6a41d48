// The SMTP transport (nodemailer), one per process, made on first use.
import nodemailer, { type Transporter } from 'nodemailer';

const transports = new Map<string, Transporter>();

export function smtpTransport(url: string): Transporter {
  let transport = transports.get(url);
  if (!transport) {
    transport = nodemailer.createTransport(url);
    transports.set(url, transport);
  }
  return transport;
}
