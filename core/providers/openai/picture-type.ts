// The type of a picture we send OpenAI, read from its bytes: OpenAI judges an
// upload by the type it is declared with (an edit's multipart part, a chat
// message's data URL) and refuses application/octet-stream. PNG, JPEG and WebP
// are what both take (SPEC CreateImageEditRequest.image).
const signatures: [type: string, matches: (bytes: Buffer) => boolean][] = [
  ['image/png', (bytes) => bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['image/jpeg', (bytes) => bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))],
  ['image/webp', (bytes) => bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP'],
];

/** image/png, image/jpeg or image/webp; undefined for anything else. */
export const pictureType = (bytes: Buffer): string | undefined => signatures.find(([, matches]) => matches(bytes))?.[0];
