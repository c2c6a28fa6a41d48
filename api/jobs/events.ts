// A job's changes as server-sent events: the current state at once, then one
// `job` event per change of state or progress, until the job ends (or the
// client leaves, or the endpoint's timeout passes). A comment every 15 s keeps
// proxies from closing a quiet stream.
import type { Response } from 'express';
import { isFinished, type Job } from '../../core/jobs/model.ts';
import { rereadJob } from '../../core/jobs/queries.ts';
import { withJobFileUrls } from '../../core/media/urls.ts';
import type { SiteNeed } from '../../core/tenancy/site-access.ts';
import { fileLinks } from '../media/urls.ts';
import type { ContextFor } from '../route.ts';

const keepAliveMs = 15_000;

export async function streamJobEvents(context: ContextFor<SiteNeed>, res: Response, first: Job): Promise<void> {
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  });
  res.flushHeaders();
  let sent = 0;
  let last = '';
  const links = fileLinks(context);
  const send = (job: Job) => {
    // Two notifications may carry the same state; the client hears each state once.
    const data = JSON.stringify(withJobFileUrls(links, context.site, job));
    if (data === last) return;
    last = data;
    res.write(`id: ${++sent}\nevent: job\ndata: ${data}\n\n`);
  };
  send(first);
  if (isFinished(first.status)) {
    res.end();
    return;
  }
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
  try {
    await context.services.jobEvents.waitUntil(
      first.id,
      async () => {
        const job = await rereadJob(context.db, first.id);
        send(job);
        return isFinished(job.status);
      },
      Math.max(0, context.deadline - Date.now() - 500),
      context.signal,
    );
  } finally {
    clearInterval(keepAlive);
    res.end();
  }
}
