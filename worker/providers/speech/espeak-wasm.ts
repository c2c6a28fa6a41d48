// Runs the WebAssembly build of espeak-ng (GPL-3) as a separate process, as
// the system binary would be run: text on stdin, WAV on stdout.
// Usage: node espeak-wasm.ts <voice> <words-per-minute>
import ESpeakNg from 'espeak-ng';

const [voice = 'en', wpm = '175'] = process.argv.slice(2);
const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
let errors = '';
const espeak = await ESpeakNg({
  arguments: ['-v', voice, '-s', wpm, '-w', '/out.wav', '-f', '/in.txt'],
  preRun: [
    (module: { FS: { writeFile(path: string, data: Uint8Array): void } }) =>
      module.FS.writeFile('/in.txt', Buffer.concat(chunks)),
  ],
  print: () => {},
  printErr: (line: string) => {
    errors += `${line}\n`;
  },
});
let wav: Uint8Array;
try {
  wav = espeak.FS.readFile('/out.wav');
} catch {
  process.stderr.write(errors || 'espeak-ng produced no audio\n');
  process.exit(1);
}
process.stdout.write(wav);
