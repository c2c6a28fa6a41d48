// The one place that drives ffmpeg (through fluent-ffmpeg, which is archived
// upstream: keep it behind this adapter). Work happens on temporary files that
// are removed afterwards; an abort kills the ffmpeg process.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ffmpeg from 'fluent-ffmpeg';
import type { Config } from '../../core/config.ts';
import { binaries } from './binaries.ts';

export const audioFormats = {
  mp3: { mimeType: 'audio/mpeg', codec: 'libmp3lame', options: ['-b:a 96k'] },
  wav: { mimeType: 'audio/wav', codec: 'pcm_s16le', options: [] },
  ogg: { mimeType: 'audio/ogg', codec: 'libvorbis', options: ['-q:a 4'] },
} as const;

export type AudioFormat = keyof typeof audioFormats;

export type Probe = {
  durationSeconds: number;
  formatName: string;
  codec: string | null;
  sampleRate: number | null;
  width: number | null;
  height: number | null;
  hasAudio: boolean;
};

export async function withTemporaryDir<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cap-media-'));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// No encode of ours takes this long; a hung ffmpeg must not hold its job forever.
const ffmpegTimeoutMs = 10 * 60_000;

/** Runs the command into `output`; an abort (or `timeoutMs`) kills ffmpeg. */
export function run(
  command: ffmpeg.FfmpegCommand,
  output: string,
  jobSignal: AbortSignal,
  timeoutMs = ffmpegTimeoutMs,
): Promise<void> {
  const signal = AbortSignal.any([jobSignal, AbortSignal.timeout(timeoutMs)]);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const abort = () => command.kill('SIGKILL');
    signal.addEventListener('abort', abort, { once: true });
    command
      .on('end', () => {
        signal.removeEventListener('abort', abort);
        resolve();
      })
      .on('error', (error: Error) => {
        signal.removeEventListener('abort', abort);
        reject(signal.aborted ? (signal.reason ?? error) : error);
      })
      .save(output);
  });
}

/** Encodes any audio ffmpeg reads into the format asked for; `tempo` changes the speed without the pitch. */
export async function encodeAudio(
  config: Config,
  input: Buffer,
  format: AudioFormat,
  signal: AbortSignal,
  tempo = 1,
): Promise<Buffer> {
  const { ffmpeg: ffmpegPath } = binaries(config);
  return withTemporaryDir(async (dir) => {
    const source = path.join(dir, 'source');
    const target = path.join(dir, `out.${format}`);
    await writeFile(source, input);
    const spec = audioFormats[format];
    const command = ffmpeg(source)
      .setFfmpegPath(ffmpegPath)
      .noVideo()
      .audioCodec(spec.codec)
      .outputOptions([...spec.options]);
    // atempo accepts 0.5–2 per filter; speeds are validated within that range.
    if (tempo !== 1) command.audioFilters(`atempo=${tempo}`);
    await run(command, target, signal);
    return readFile(target);
  });
}

export async function probe(config: Config, file: string): Promise<Probe> {
  const { ffprobe } = binaries(config);
  const data = await new Promise<ffmpeg.FfprobeData>((resolve, reject) => {
    ffmpeg.setFfprobePath(ffprobe);
    ffmpeg.ffprobe(file, (error: Error | null, result: ffmpeg.FfprobeData) =>
      error ? reject(error) : resolve(result),
    );
  });
  const video = data.streams.find((candidate) => candidate.codec_type === 'video');
  const stream = video ?? data.streams.find((candidate) => candidate.codec_type === 'audio');
  return {
    durationSeconds: Number(data.format.duration ?? 0),
    formatName: data.format.format_name ?? '',
    codec: stream?.codec_name ?? null,
    sampleRate: stream?.sample_rate ? Number(stream.sample_rate) : null,
    width: video?.width ?? null,
    height: video?.height ?? null,
    hasAudio: data.streams.some((candidate) => candidate.codec_type === 'audio'),
  };
}

export async function probeBuffer(config: Config, data: Buffer): Promise<Probe> {
  return withTemporaryDir(async (dir) => {
    const file = path.join(dir, 'probe');
    await writeFile(file, data);
    return probe(config, file);
  });
}

/** A JPEG of the video's frame at `atSeconds` (or its first frame, for a shorter video): its poster. */
export async function posterFrame(
  config: Config,
  file: string,
  atSeconds: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const { ffmpeg: ffmpegPath } = binaries(config);
  return withTemporaryDir(async (dir) => {
    const target = path.join(dir, 'poster.jpg');
    const command = ffmpeg(file)
      .setFfmpegPath(ffmpegPath)
      .seekInput(atSeconds)
      .outputOptions(['-frames:v 1', '-q:v 3']);
    await run(command, target, signal);
    return readFile(target);
  });
}
