// The cast of the media test files: tenants A and B (staffed), a global admin,
// two authors assigned to A's site, and service accounts of A that read media,
// write media, or have no media scope at all.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../core/config.ts';
import { binaries } from '../../worker/media/binaries.ts';
import { withTemporaryDir } from '../../worker/media/ffmpeg.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from './app.ts';
import { startFakeProviders, type FakeProviders } from './fake-providers.ts';
import { giveCredits } from './jobs.ts';
import { serviceAccount, signedIn, type Caller } from './factories.ts';
import { globalAdmin, staffedTenant, type Auth, type Staffed } from './identity.ts';

export type MediaCast = {
  a: Staffed;
  b: Staffed;
  admin: Caller;
  author: Caller;
  otherAuthor: Caller;
  reader: Auth;
  writer: Auth;
  noMediaScope: Auth;
};

export async function mediaCast(t: TestApp): Promise<MediaCast> {
  const a = await staffedTenant(t);
  const b = await staffedTenant(t);
  return {
    a,
    b,
    admin: await globalAdmin(t),
    author: await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] }),
    otherAuthor: await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] }),
    reader: (await serviceAccount(t, a.tenant, ['sites:read', 'media:read'], a.admin)).auth,
    writer: (await serviceAccount(t, a.tenant, ['sites:read', 'media:read', 'media:write'], a.admin)).auth,
    noMediaScope: (await serviceAccount(t, a.tenant, ['sites:read'], a.admin)).auth,
  };
}

/** What the media job test files share: fake providers, an app, the cast (A's editor holding 1,000 credits), and a worker slot emptied after each test. */
export type MediaSuite = { t: TestApp; cast: MediaCast; fake: FakeProviders; worker: WorkerHandle | undefined };

export function mediaSuite(env: (fake: FakeProviders) => Record<string, string> = () => ({})): MediaSuite {
  const suite = { worker: undefined } as MediaSuite;
  beforeAll(async () => {
    suite.fake = await startFakeProviders();
    suite.t = await startTestApp({ env: env(suite.fake) });
    suite.cast = await mediaCast(suite.t);
    await giveCredits(suite.t, suite.cast.a.site, 1000, suite.cast.a.editor.user.id);
  });
  afterEach(async () => {
    await suite.worker?.stop();
    suite.worker = undefined;
  });
  afterAll(async () => {
    await suite.worker?.stop();
    await stopTestApp(suite.t);
    await suite.fake.close();
  });
  return suite;
}

/** An H.264 MP4 of ffmpeg's test pattern: a real video that ffprobe reads. */
export async function testClip(config: Config, seconds: number, size = '320x240'): Promise<Buffer> {
  return withTemporaryDir(async (dir) => {
    const file = path.join(dir, 'clip.mp4');
    const args = [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc=duration=${seconds}:size=${size}:rate=10`,
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      file,
    ];
    await promisify(execFile)(binaries(config).ffmpeg, args);
    return readFile(file);
  });
}
