// Scenes into an H.264 MP4. Each scene is a still image moved over for its
// length (a slow zoom or pan; the motions alternate so that cuts read as
// cuts) with its narration or silence, encoded as its own segment; the
// segments share size, frame rate and codecs, so they are joined without
// encoding again. A scene per segment is what lets the job report progress
// per scene.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import ffmpeg from 'fluent-ffmpeg';
import type { Config } from '../../core/config.ts';
import { binaries } from './binaries.ts';
import { run } from './ffmpeg.ts';

export const videoFps = 25;

/** A scene to encode: `image` is larger than the frame (the motion crops it), `audio` any file ffmpeg reads. */
export type SceneClip = {
  image: string;
  audio: string | null;
  seconds: number;
  width: number;
  height: number;
  motion: number;
};

type Motion = (frames: number) => { z: string; x: string; y: string };

const centre = { x: 'iw/2-(iw/zoom/2)', y: 'ih/2-(ih/zoom/2)' };
const motions: Motion[] = [
  (frames) => ({ z: `1+0.15*on/${frames}`, ...centre }),
  (frames) => ({ z: '1.15', x: `(iw-iw/zoom)*on/${frames}`, y: centre.y }),
  (frames) => ({ z: `1.15-0.15*on/${frames}`, ...centre }),
  (frames) => ({ z: '1.15', x: `(iw-iw/zoom)*(1-on/${frames})`, y: centre.y }),
];

export async function renderScene(
  config: Config,
  clip: SceneClip,
  output: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<void> {
  const frames = Math.max(1, Math.round(clip.seconds * videoFps));
  const motion = motions[clip.motion % motions.length]!(frames);
  const command = ffmpeg()
    .setFfmpegPath(binaries(config).ffmpeg)
    .input(clip.image)
    .inputOptions(['-loop 1', `-framerate ${videoFps}`]);
  if (clip.audio) command.input(clip.audio);
  else command.input('anullsrc=r=44100:cl=mono').inputFormat('lavfi');
  command
    .complexFilter([
      `[0:v]zoompan=z='${motion.z}':x='${motion.x}':y='${motion.y}':d=1:s=${clip.width}x${clip.height}:fps=${videoFps},format=yuv420p,setsar=1[v]`,
      // Narration shorter than the scene is followed by silence.
      '[1:a]aresample=44100,aformat=channel_layouts=mono,apad[a]',
    ])
    .outputOptions(['-map [v]', '-map [a]', `-frames:v ${frames}`, `-t ${(frames / videoFps).toFixed(3)}`])
    .outputOptions([
      '-c:v libx264',
      '-preset veryfast',
      '-crf 23',
      '-pix_fmt yuv420p',
      `-r ${videoFps}`,
      '-c:a aac',
      '-b:a 96k',
      '-ar 44100',
      '-ac 1',
    ]);
  await run(command, output, signal, timeoutMs);
}

/** Joins segments made by renderScene into one MP4 that can start playing before it has all arrived. */
export async function joinSegments(
  config: Config,
  segments: string[],
  output: string,
  signal: AbortSignal,
): Promise<void> {
  const list = path.join(path.dirname(output), 'segments.txt');
  await writeFile(list, segments.map((segment) => `file '${segment.replaceAll("'", "'\\''")}'\n`).join(''));
  const command = ffmpeg(list)
    .setFfmpegPath(binaries(config).ffmpeg)
    .inputFormat('concat')
    .inputOptions(['-safe 0'])
    .outputOptions(['-c copy', '-movflags +faststart']);
  await run(command, output, signal);
}
