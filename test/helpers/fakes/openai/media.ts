// Real files for the fake's answers, so a client that decodes them (sharp,
// ffmpeg) is tested on what OpenAI sends: pictures of the size and format
// asked, and audio in each of the speech endpoint's formats.
import { spawn } from 'node:child_process';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import sharp from 'sharp';

export type PictureFormat = 'png' | 'jpeg' | 'webp';

/** A plain picture of this size and format. */
export const picture = (width: number, height: number, format: PictureFormat) =>
  sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .toFormat(format)
    .toBuffer();

/**
 * OpenAI's `pcm`: 24 kHz, 16-bit signed little-endian samples, one channel, no
 * header (OpenAI's text-to-speech guide, "Supported output formats"). The
 * other formats are made from the same samples.
 */
const rate = 24_000;

export function tonePcm(seconds: number): Buffer {
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 330 * i) / rate) * 6000), i * 2);
  return data;
}

/** The samples in a RIFF/WAVE file (a 44-byte header, then the data). */
export function wav(pcm: Buffer): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // one channel
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes a second
  header.writeUInt16LE(2, 32); // bytes a frame
  header.writeUInt16LE(16, 34); // bits a sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

export type AudioFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

// ffmpeg's muxer and encoder for each compressed format (opus in Ogg, aac in ADTS).
const encoders: Record<'mp3' | 'opus' | 'aac' | 'flac', string[]> = {
  mp3: ['-c:a', 'libmp3lame', '-f', 'mp3'],
  opus: ['-c:a', 'libopus', '-f', 'ogg'],
  aac: ['-c:a', 'aac', '-f', 'adts'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
};

const encoded = new Map<string, Promise<Buffer>>();

/** A short tone in this format; encoded once per format and kept, as ffmpeg takes a moment. */
export function audio(format: AudioFormat): Promise<Buffer> {
  const samples = tonePcm(0.5);
  if (format === 'pcm') return Promise.resolve(samples);
  if (format === 'wav') return Promise.resolve(wav(samples));
  let result = encoded.get(format);
  if (!result) {
    result = encode(wav(samples), encoders[format]);
    encoded.set(format, result);
  }
  return result;
}

function encode(input: Buffer, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg.path, ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', ...args, 'pipe:1']);
    const chunks: Buffer[] = [];
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`ffmpeg failed (${code}): ${errors}`)),
    );
    child.stdin.end(input);
  });
}
