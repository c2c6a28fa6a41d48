// Media figures for npm run bench: a 200 MB upload streamed through the API
// (throughput, and how much the API process's memory grows meanwhile).
import { readFileSync } from 'node:fs';
import { toneHeader } from '../core/media/wav.ts';
import { api, benchSite } from './http.ts';

type Row = [string, string];

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** A multipart body around a WAV of `bytes` bytes, produced as it is sent. */
async function* multipart(boundary: string, bytes: number) {
  yield Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
  );
  yield toneHeader(bytes);
  const chunk = Buffer.alloc(1024 * 1024, 0x10);
  for (let sent = 0; sent < bytes; sent += chunk.length)
    yield sent + chunk.length <= bytes ? chunk : chunk.subarray(0, bytes - sent);
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

export async function uploadFigures(url: string, token: string, apiPid: number): Promise<Row[]> {
  const site = await benchSite(url, token, 'Upload bench');
  const bytes = 200 * 1024 * 1024;
  const boundary = `bench${Date.now()}`;
  const baseline = rssMb(apiPid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(apiPid))), 50);
  const began = performance.now();
  const res = await fetch(`${url}/${site.slug}/media/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body: multipart(boundary, bytes),
    duplex: 'half',
  });
  const seconds = (performance.now() - began) / 1000;
  clearInterval(sampler);
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  return [
    [
      'Upload of 200 MB (multipart, streamed to local storage)',
      `${(bytes / 1024 / 1024 / seconds).toFixed(0)} MB/s (${seconds.toFixed(1)} s)`,
    ],
    [
      'API process RSS during that upload: before → peak',
      `${baseline.toFixed(0)} → ${peak.toFixed(0)} MB (+${(peak - baseline).toFixed(0)} MB)`,
    ],
  ];
}

/** Images processed by the platform (upload + media_process job: size, colour, blurhash, EXIF, WebP and AVIF widths) beside sharp making the same thumbnails alone. */
export async function thumbnailFigures(url: string, token: string): Promise<Row[]> {
  const { default: sharp } = await import('sharp');
  const photo = await sharp({
    create: { width: 1600, height: 1200, channels: 3, background: { r: 90, g: 140, b: 60 } },
  })
    .jpeg()
    .toBuffer();
  const count = 24;
  let began = performance.now();
  for (let i = 0; i < count; i++) {
    // What processing makes of it: three widths, each in WebP and AVIF.
    for (const width of [320, 640, 1280]) {
      const resized = await sharp(photo).resize({ width }).raw().toBuffer({ resolveWithObject: true });
      await sharp(resized.data, { raw: resized.info }).webp({ quality: 80 }).toBuffer();
      await sharp(resized.data, { raw: resized.info }).avif({ quality: 50, effort: 0 }).toBuffer();
    }
  }
  const alone = count / ((performance.now() - began) / 1000);

  const site = await benchSite(url, token, 'Thumbnail bench');
  began = performance.now();
  const jobs: string[] = [];
  for (let i = 0; i < count; i++) {
    const form = new FormData();
    form.append('file', new Blob([photo], { type: 'image/jpeg' }), 'photo.jpg');
    const res = await fetch(`${url}/${site.slug}/media/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: form,
    });
    if (res.status !== 201) throw new Error(`upload answered ${res.status}`);
    jobs.push(((await res.json()) as { job_id: string }).job_id);
  }
  for (const id of jobs) {
    const job = await api<{ status: string }>(`${url}/admin/jobs/${id}`, token, 'GET');
    if (job.status === 'succeeded') continue;
    const done = await fetch(`${url}/${site.slug}/jobs/${id}`, {
      headers: { Authorization: `Bearer ${token}`, Prefer: 'wait=55' },
    });
    if (((await done.json()) as { status: string }).status !== 'succeeded')
      throw new Error('a processing job did not succeed');
  }
  const platform = count / ((performance.now() - began) / 1000);
  return [
    [
      'Thumbnails with sharp alone (1600×1200 JPEG → 3 widths in WebP and AVIF), one at a time',
      `${alone.toFixed(1)} images/s`,
    ],
    [
      `The same through the platform (upload + processing job, ${count} images, worker of 4)`,
      `${platform.toFixed(1)} images/s (${(platform / alone).toFixed(2)}× sharp alone)`,
    ],
  ];
}

/** A narrated video of four scenes at 1280×720 composed by the local back end: how long it takes beside how long it lasts. */
export async function videoFigures(url: string, token: string): Promise<Row[]> {
  const site = await benchSite(url, token, 'Video bench', 10_000);
  const prompt =
    'A lighthouse stands on the rocks. Waves break below it. At night its lamp turns slowly. Ships pass safely by.';
  const began = performance.now();
  const res = await fetch(`${url}/${site.slug}/media/generatevideo`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Prefer: 'wait=280' },
    body: JSON.stringify({ prompt, size: '1280x720' }),
  });
  const job = (await res.json()) as { status: string; output?: { duration_seconds: number } };
  const seconds = (performance.now() - began) / 1000;
  if (job.status !== 'succeeded' || !job.output) throw new Error(`the video job ended ${job.status}`);
  const lasts = job.output.duration_seconds;
  return [
    [
      'Video, 4 narrated scenes at 1280×720 (local back end, one job)',
      `${lasts.toFixed(1)} s of video in ${seconds.toFixed(1)} s (${(lasts / seconds).toFixed(2)}× real time)`,
    ],
  ];
}
