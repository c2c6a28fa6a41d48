// Media figures for npm run bench: a 200 MB upload streamed through the API
// (throughput, and how much the API process's memory grows meanwhile).
import { readFileSync } from 'node:fs';
import { toneHeader } from '../core/media/wav.ts';

type Row = [string, string];

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function call<T>(url: string, token: string, method: string, body?: unknown): Promise<T> {
  const res = await fetch(url, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** A multipart body around a WAV of `bytes` bytes, produced as it is sent. */
async function* multipart(boundary: string, bytes: number) {
  yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
  yield toneHeader(bytes);
  const chunk = Buffer.alloc(1024 * 1024, 0x10);
  for (let sent = 0; sent < bytes; sent += chunk.length) yield sent + chunk.length <= bytes ? chunk : chunk.subarray(0, bytes - sent);
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

export async function uploadFigures(url: string, token: string, apiPid: number): Promise<Row[]> {
  const me = await call<{ id: string }>(`${url}/auth/currentuser`, token, 'GET');
  const tenant = await call<{ id: string }>(`${url}/admin/tenants/`, token, 'POST', { name: 'Upload bench' });
  await call(`${url}/admin/tenants/${tenant.id}/users/${me.id}`, token, 'POST', { role: 'admin' });
  const site = await call<{ slug: string }>(`${url}/sites/`, token, 'POST', { tenant_id: tenant.id, name: 'Uploads', slug: `uploads-${Date.now()}` });
  const bytes = 200 * 1024 * 1024;
  const boundary = `bench${Date.now()}`;
  const baseline = rssMb(apiPid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(apiPid))), 50);
  const began = performance.now();
  const res = await fetch(`${url}/${site.slug}/media/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body: multipart(boundary, bytes) as unknown as RequestInit["body"],
    duplex: 'half',
  } as RequestInit);
  const seconds = (performance.now() - began) / 1000;
  clearInterval(sampler);
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  return [
    ['Upload of 200 MB (multipart, streamed to local storage)', `${((bytes / 1024 / 1024) / seconds).toFixed(0)} MB/s (${seconds.toFixed(1)} s)`],
    ['API process RSS during that upload: before → peak', `${baseline.toFixed(0)} → ${peak.toFixed(0)} MB (+${(peak - baseline).toFixed(0)} MB)`],
  ];
}
