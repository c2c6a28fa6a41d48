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

/** Images processed by the platform (upload + media_process job: size, colour, WebP widths) beside sharp making the same thumbnails alone. */
export async function thumbnailFigures(url: string, token: string): Promise<Row[]> {
  const { default: sharp } = await import('sharp');
  const photo = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: { r: 90, g: 140, b: 60 } } }).jpeg().toBuffer();
  const count = 24;
  let began = performance.now();
  for (let i = 0; i < count; i++) {
    for (const width of [320, 640, 1280]) await sharp(photo).resize({ width }).webp({ quality: 80 }).toBuffer();
  }
  const alone = count / ((performance.now() - began) / 1000);

  const me = await call<{ id: string }>(`${url}/auth/currentuser`, token, 'GET');
  const tenant = await call<{ id: string }>(`${url}/admin/tenants/`, token, 'POST', { name: 'Thumbnail bench' });
  await call(`${url}/admin/tenants/${tenant.id}/users/${me.id}`, token, 'POST', { role: 'admin' });
  const site = await call<{ slug: string }>(`${url}/sites/`, token, 'POST', { tenant_id: tenant.id, name: 'Thumbs', slug: `thumbs-${Date.now()}` });
  began = performance.now();
  const jobs: string[] = [];
  for (let i = 0; i < count; i++) {
    const form = new FormData();
    form.append('file', new Blob([photo], { type: 'image/jpeg' }), 'photo.jpg');
    const res = await fetch(`${url}/${site.slug}/media/`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form });
    if (res.status !== 201) throw new Error(`upload answered ${res.status}`);
    jobs.push(((await res.json()) as { job_id: string }).job_id);
  }
  for (const id of jobs) {
    const job = await call<{ status: string }>(`${url}/admin/jobs/${id}`, token, 'GET');
    if (job.status === 'succeeded') continue;
    const done = await fetch(`${url}/${site.slug}/jobs/${id}`, { headers: { Authorization: `Bearer ${token}`, Prefer: 'wait=55' } });
    if (((await done.json()) as { status: string }).status !== 'succeeded') throw new Error('a processing job did not succeed');
  }
  const platform = count / ((performance.now() - began) / 1000);
  return [
    ['Thumbnails with sharp alone (1600×1200 JPEG → 3 WebP widths), one at a time', `${alone.toFixed(1)} images/s`],
    [`The same through the platform (upload + processing job, ${count} images, worker of 4)`, `${platform.toFixed(1)} images/s (${(platform / alone).toFixed(2)}× sharp alone)`],
  ];
}
