// Every kind of job the worker can run, by the `kind` stored on the job.
import agentRun from './agent_run.ts';
import type { JobHandler } from '../job.ts';
import image from './image.ts';
import imageEdit from './image_edit.ts';
import mediaMetadata from './media_metadata.ts';
import mediaProcess from './media_process.ts';
import pdfImport from './pdf_import.ts';
import ragIndex from './rag_index.ts';
import searchReindex from './search_reindex.ts';
import speech from './speech.ts';
import tenantClone from './tenant_clone.ts';
import text from './text.ts';
import urlImport from './url_import.ts';
import translation from './translation.ts';
import video from './video.ts';
import website from './website.ts';

export const jobKinds = new Map<string, JobHandler>([
  ['speech', speech],
  ['media_process', mediaProcess],
  ['image', image],
  ['image_edit', imageEdit],
  ['media_metadata', mediaMetadata],
  ['video', video],
  ['url_import', urlImport],
  ['pdf_import', pdfImport],
  ['text', text],
  ['translation', translation],
  ['search_reindex', searchReindex],
  ['website', website],
  ['rag_index', ragIndex],
  ['agent_run', agentRun],
  ['tenant_clone', tenantClone],
]);
