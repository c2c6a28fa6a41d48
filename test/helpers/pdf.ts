// PDFs made in code for the import tests, so no binary fixture comes from
// elsewhere: a page is a list of lines, each in its own font size (the
// importer takes large type for headings). Variants: an image-only page (a
// filled rectangle, no text operators), an encrypted file (a Standard
// security handler whose user password is not empty), broken bytes, and
// heavy pages (a deflated content stream of many text operators, or of one
// very long run of text: a few kB to upload, seconds of pdf.js's time and
// hundreds of MB of its heap to read).
import { deflateSync } from 'node:zlib';

export type PdfLine = { text: string; size?: number };
/** `runs` short runs of text, each its own operator; or `words` words in one run. */
export type HeavyPage = { runs: number } | { words: number };
export type PdfPage = PdfLine[] | 'no-text' | HeavyPage;

const escape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);

/** The content stream of a page: each line in Helvetica, top to bottom. */
function contentOf(page: PdfPage): string {
  if (page === 'no-text') return '0.2 0.4 0.8 rg 72 500 300 200 re f';
  if ('runs' in page) return `BT /F1 12 Tf 72 700 Td ${'(word) Tj '.repeat(page.runs)}ET`;
  if ('words' in page) return `BT /F1 12 Tf 72 700 Td (${'word '.repeat(page.words)}) Tj ET`;
  let y = 740;
  return page
    .map(({ text, size = 12 }) => {
      y -= size * 1.6;
      return `BT /F1 ${size} Tf 72 ${y} Td (${escape(text)}) Tj ET`;
    })
    .join('\n');
}

/** A valid PDF 1.4: catalog, page tree, one page object and content stream per page, one font, a correct xref. */
export function makePdf(pages: PdfPage[], options: { encrypted?: boolean } = {}): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body);
  const pageIds = pages.map((_, i) => 4 + i * 2);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`);
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  for (const [i, page] of pages.entries()) {
    const content = contentOf(page);
    add(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`,
    );
    if (Array.isArray(page) || page === 'no-text') {
      add(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`);
    } else {
      const deflated = deflateSync(Buffer.from(content, 'latin1')).toString('latin1');
      add(`<< /Length ${deflated.length} /Filter /FlateDecode >>\nstream\n${deflated}\nendstream`);
    }
  }
  if (options.encrypted) {
    // RC4 40-bit; O and U are arbitrary, so the empty user password does not open it.
    add(`<< /Filter /Standard /V 1 /R 2 /O <${'ab'.repeat(32)}> /U <${'cd'.repeat(32)}> /P -44 >>`);
  }
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  const encrypt = options.encrypted
    ? ` /Encrypt ${objects.length} 0 R /ID [<${'01'.repeat(16)}> <${'01'.repeat(16)}>]`
    : '';
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${encrypt} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A PDF cut short: the header and part of the first objects, nothing a reader can rebuild a page from. */
export const brokenPdf = () => makePdf([[{ text: 'Lost' }]]).subarray(0, 60);
