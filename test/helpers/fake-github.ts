// The parts of GitHub an OAuth sign-in uses, on 127.0.0.1: the token endpoint
// and the user and e-mail API. Codes are minted by `issueCode`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

type Account = {
  id: number;
  login: string;
  name: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
};

export type FakeGitHub = { url: string; issueCode(account: Account): string; close(): Promise<void> };

export async function startFakeGitHub(clientId: string, clientSecret: string): Promise<FakeGitHub> {
  const codes = new Map<string, Account>();
  const tokens = new Map<string, Account>();
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(body);
      const account = codes.get(form.get('code') ?? '');
      const authorized =
        form.get('client_id') === clientId && form.get('client_secret') === clientSecret && form.get('code_verifier');
      if (!account || !authorized) return json(400, { error: 'bad_verification_code' });
      codes.delete(form.get('code') ?? '');
      const token = randomBytes(16).toString('hex');
      tokens.set(token, account);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const account = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!account) return json(401, { message: 'Bad credentials' });
    if (url.pathname === '/user') return json(200, { id: account.id, login: account.login, name: account.name });
    if (url.pathname === '/user/emails') return json(200, account.emails);
    return json(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    issueCode(account) {
      const code = randomBytes(8).toString('hex');
      codes.set(code, account);
      return code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
