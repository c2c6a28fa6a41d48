// A tone as real audio, for fakes and tests that need sound ffmpeg and
// ffprobe can read without a speech engine.
import { toneHeader } from '../../core/media/wav.ts';

/** A mono 16-bit PCM WAV of a 440 Hz tone. */
export function toneWav(seconds: number, rate = 22_050): Buffer {
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 8000), i * 2);
  return Buffer.concat([toneHeader(data.length, rate), data]);
}
