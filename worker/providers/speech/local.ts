// Speech on this machine with espeak-ng: the system binary when there is one
// (about 10 ms a call), else its WebAssembly build (about 250 ms). Either runs
// as a separate process, which keeps its GPL at arm's length and lets an
// abort kill it. Output is 22 kHz mono WAV.
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../../core/config.ts';
import { binaries } from '../../media/binaries.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import type { Speech, SpeechSynthesis } from '../../../core/providers/capabilities.ts';

const wasmRunner = path.join(import.meta.dirname, 'espeak-wasm.ts');

// espeak-ng's variants for our neutral voice names; other names must be espeak variants.
const variants: Record<string, string> = { default: '', female: '+f3', male: '+m3' };

/** `en-US` → `en-us`, plus the variant: espeak's voice argument. */
export function espeakVoice(request: SpeechSynthesis): string {
  const variant = variants[request.voice] ?? `+${request.voice}`;
  return `${request.language.toLowerCase()}${variant}`;
}

// espeak-ng speaks 5,000 characters in well under a minute; a hung one is killed.
const espeakTimeoutMs = 2 * 60_000;

function collect(command: string, args: string[], input: string, jobSignal: AbortSignal): Promise<Buffer> {
  const signal = AbortSignal.any([jobSignal, AbortSignal.timeout(espeakTimeoutMs)]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { signal, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', (error) => reject(signal.aborted ? (signal.reason ?? error) : error));
    child.on('close', (code) => {
      const audio = Buffer.concat(out);
      // espeak-ng reports an unknown voice on stderr and may still exit 0 with no audio.
      if (code === 0 && audio.length > 44) resolve(audio);
      else
        reject(
          permanent(
            'speech_failed',
            `espeak-ng could not speak this: ${err.trim().slice(0, 200) || `exit code ${code}`}`,
          ),
        );
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** The local stand-in: speech made here, in the interface of the vendors' (core/providers/capabilities.ts). */
export function localSpeech(config: Config): {
  synthesize(request: SpeechSynthesis, signal: AbortSignal): Promise<Speech>;
} {
  return {
    async synthesize(request, signal) {
      const voice = espeakVoice(request);
      const wpm = String(Math.round(175 * request.speed));
      const system = binaries(config).espeak;
      const audio = system
        ? await collect(system, ['-v', voice, '-s', wpm, '--stdout', '--stdin'], request.text, signal)
        : await collect(process.execPath, [wasmRunner, voice, wpm], request.text, signal);
      return { audio, speedApplied: true };
    },
  };
}
