// Which ffmpeg, ffprobe and espeak-ng to run: a configured path first, then
// the system's (Debian's are current), then the copies shipped in npm packages
// so that a machine with only Node works too.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Config } from '../../core/config.ts';

const require = createRequire(import.meta.url);

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function packaged(name: '@ffmpeg-installer/ffmpeg' | '@ffprobe-installer/ffprobe'): string | undefined {
  try {
    return (require(name) as { path: string }).path;
  } catch {
    return undefined;
  }
}

export type Binaries = {
  ffmpeg: string;
  ffprobe: string;
  /** null: use the WebAssembly build of espeak-ng in a child process. */
  espeak: string | null;
};

let found: Binaries | undefined;

export function binaries(config: Config): Binaries {
  if (found) return found;
  const ffmpeg = config.binaries.ffmpeg ?? onPath('ffmpeg') ?? packaged('@ffmpeg-installer/ffmpeg');
  const ffprobe = config.binaries.ffprobe ?? onPath('ffprobe') ?? packaged('@ffprobe-installer/ffprobe');
  if (!ffmpeg || !ffprobe)
    throw new Error('ffmpeg/ffprobe not found: install them or set FFMPEG_PATH and FFPROBE_PATH');
  found = { ffmpeg, ffprobe, espeak: config.binaries.espeak ?? onPath('espeak-ng') ?? null };
  return found;
}
