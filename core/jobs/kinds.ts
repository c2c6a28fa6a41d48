// The kinds of job the platform runs, by name: what WORKER_KINDS and the
// queue's pauses name. worker/jobs/kinds.ts maps each to its handler
// (test/worker/pools.test.ts checks the two lists agree).
export const jobKindNames = [
  'speech',
  'media_process',
  'image',
  'image_edit',
  'media_metadata',
  'video',
  'url_import',
  'pdf_import',
  'text',
  'translation',
  'search_reindex',
  'website',
  'rag_index',
  'agent_run',
  'tenant_clone',
] as const;
