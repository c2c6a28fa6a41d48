// The npm espeak-ng package ships no types: the Emscripten module factory, as used here.
declare module 'espeak-ng' {
  type FileSystem = { writeFile(path: string, data: Uint8Array): void; readFile(path: string): Uint8Array };
  type Options = {
    arguments: string[];
    preRun?: ((module: { FS: FileSystem }) => void)[];
    print?: (line: string) => void;
    printErr?: (line: string) => void;
  };
  export default function ESpeakNg(options: Options): Promise<{ FS: FileSystem }>;
}
