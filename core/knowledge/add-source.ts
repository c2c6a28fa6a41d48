// Adding a web page or a PDF to an agent's knowledge base: a document made
// without its text, and its rag_index job, in one transaction (a 402 leaves
// neither). The job's first run fetches the page or reads the upload with the
// post importers' code (worker/knowledge/extract.ts), writes the text on the
// document, and indexes it. The caller pays as for compute-rag-index: what
// the source may hold at most is reserved (./source.ts), the tokens embedded
// are charged. Who may: as for any document (./access.ts), checked before a
// PDF's first byte is stored.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId, type Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import type { Job } from '../jobs/model.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { locale } from '../tenancy/sites.ts';
import type { JobWebhook } from '../webhooks/request.ts';
import { requireAssigned, requireVisibleAgent, requireWriter } from './access.ts';
import { submitIndex } from './submit-index.ts';

const siteIdentifier = z
  .string()
  .min(1)
  .max(100)
  .describe('The site (id or slug) the document belongs to: a site of a tenant the agent is assigned to');

const localeField = locale.describe(
  'Its language, for full-text indexing (stemming); default: the page’s language when the site has it, else the site’s default',
);

export const fromUrlBody = z.strictObject({
  site_identifier: siteIdentifier,
  url: z
    .url({ protocol: /^https?$/, error: 'an http(s) URL' })
    .max(2000)
    .describe('The page; fetched by the job, never from a private, local or reserved address'),
  title: z.string().trim().min(1).max(300).optional().describe('Default: the article’s title'),
  locale: localeField.optional(),
});
export type FromUrlBody = z.output<typeof fromUrlBody>;

/** Where a PDF's document goes: in the query, so access is checked before the upload is read. */
export const fromPdfQuery = z.strictObject({ site_identifier: siteIdentifier });

/** The form fields beside the file. */
export const fromPdfFields = z.strictObject({
  title: z.string().trim().min(1).max(300).optional().describe('Default: the PDF’s title, else its first heading'),
  locale: locale.optional().describe('Its language, for full-text indexing; default: the site’s default'),
  max_pages: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .describe('Most pages to read (and to reserve the embedding of); default and ceiling PDF_MAX_PAGES'),
});
export type FromPdfFields = z.output<typeof fromPdfFields>;

/** The caller on the site the document is for, as one who may add it (404, 403, 409 when the agent does not serve it). */
export async function sourceTarget(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  siteIdentifier: string,
): Promise<SiteAccess> {
  await requireVisibleAgent(db, actor, agentId);
  const access = await requireWriter(db, actor, siteIdentifier);
  await requireAssigned(db, agentId, access.site.tenant_id);
  return access;
}

const inserted = z.object({ id: z.uuid() });

type NewSourceDocument = {
  kind: 'url' | 'pdf';
  /** Given, else a stand-in (the URL, the file's name) until the source's own replaces it. */
  title: string | undefined;
  stand_in: string;
  locale: string | undefined;
  source_url: string | null;
  file_name: string | null;
};

async function addSource(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  agentId: string,
  document: NewSourceDocument,
  options: {
    webhook: JobWebhook | null;
    priority?: number | undefined;
    upload?: { fileKey: string; maxPages: number };
  },
): Promise<Job> {
  const { site, actor } = access;
  return db.transaction(async (tx) => {
    const id = await tx.oneFirst(sql.type(inserted)`
      insert into knowledge_documents (agent_id, tenant_id, site_id, kind, title, locale, body, body_format, source_url,
                                       file_name, text_pending, title_from_source, locale_from_source, created_by)
      values (${agentId}, ${site.tenant_id}, ${site.id}, ${document.kind},
              ${(document.title ?? document.stand_in).slice(0, 300)}, ${document.locale ?? site.default_locale}, '', 'html',
              ${document.source_url}, ${document.file_name}, true, ${document.title === undefined},
              ${document.kind === 'url' && document.locale === undefined}, ${actorUserId(actor)})
      returning id`);
    return submitIndex(tx, config, access, id, undefined, options);
  });
}

/** A page's document and its job. */
export function addUrl(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  agentId: string,
  body: FromUrlBody,
  submit: { webhook: JobWebhook | null; priority?: number | undefined },
): Promise<Job> {
  const document = {
    kind: 'url' as const,
    title: body.title,
    stand_in: body.url,
    locale: body.locale,
    source_url: body.url,
    file_name: null,
  };
  return addSource(db, config, access, agentId, document, submit);
}

/** A PDF's document and its job, which reads the stored upload. */
export function addPdf(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  agentId: string,
  upload: {
    file: { key: string; fileName: string };
    fields: FromPdfFields;
    webhook: JobWebhook | null;
    priority?: number | undefined;
  },
): Promise<Job> {
  const { file, fields } = upload;
  const maxPages = fields.max_pages ?? config.pdf.maxPages;
  if (maxPages > config.pdf.maxPages)
    throw new Problem(422, `At most ${config.pdf.maxPages} pages are read.`, {
      errors: [{ path: 'body.max_pages', message: `must be at most ${config.pdf.maxPages}` }],
    });
  // Kept as a label only: the stored key never comes from it.
  const fileName = file.fileName.replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(0, 255) || 'upload.pdf';
  const document = {
    kind: 'pdf' as const,
    title: fields.title,
    stand_in: fileName,
    locale: fields.locale,
    source_url: null,
    file_name: fileName,
  };
  return addSource(db, config, access, agentId, document, {
    webhook: upload.webhook,
    priority: upload.priority,
    upload: { fileKey: file.key, maxPages },
  });
}
