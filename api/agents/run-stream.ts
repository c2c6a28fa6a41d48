// An agent run's events as server-sent events (core/agents/run-events.ts):
// first what its record holds (its start, its recorded tool calls, and its
// citations and end once it has ended), then each event as the worker
// publishes it, until the run ends — or the client leaves, or the endpoint's
// timeout is near, when the client comes back with Last-Event-ID and hears
// the rest. Nothing at or before that id is sent again.
//
// What it hears is handled one notice at a time, in the order heard, so an
// event never overtakes one published before it. The record is read again
// only when the job ends (its last events are the record's), when a notice
// was too large to carry its event, and when notifications may have been
// missed (the listening connection came back): never on a mere change of
// progress, whose read could run ahead of text still waiting its turn.
import type { Response } from 'express';
import type { RunNotice } from '../../core/agents/run-event-channel.ts';
import { comesAfter, eventPlace, recordedEvents, type PlacedEvent } from '../../core/agents/run-events.ts';
import { runSteps } from '../../core/agents/run-steps.ts';
import { isFinished, type Job } from '../../core/jobs/model.ts';
import { rereadJob } from '../../core/jobs/queries.ts';
import type { RouteContext } from '../route.ts';

const keepAliveMs = 15_000;
/** Time kept back from the endpoint's timeout to end the stream cleanly. */
const endMarginMs = 500;

export async function streamRunEvents(
  context: RouteContext,
  res: Response,
  run: Job,
  lastEventId: string | undefined,
): Promise<void> {
  const { db, services } = context;
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  });
  res.flushHeaders();

  let last = eventPlace(lastEventId);
  const send = ({ id, event }: PlacedEvent) => {
    const place = eventPlace(id);
    if (!place || (last && !comesAfter(place, last))) return;
    last = place;
    res.write(`id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  };

  let ended = false;
  let end = () => {};
  const over = new Promise<void>((resolve) => (end = resolve));
  const finish = () => {
    ended = true;
    end();
  };
  let turn = Promise.resolve();
  const inTurn = (work: () => void | Promise<void>) => {
    turn = turn
      .then(() => (ended ? undefined : work()))
      .catch((error: unknown) => {
        context.log.warn({ err: error, job_id: run.id }, 'agent run event stream stopped');
        finish();
      });
  };
  /** The record's events, those up to `upTo` when given; the stream ends with the run. */
  const catchUp = async (upTo?: number[]) => {
    const [job, steps] = [await rereadJob(db, run.id), await runSteps(db, run.id)];
    for (const placed of recordedEvents(job, steps))
      if (!upTo || !comesAfter(eventPlace(placed.id)!, upTo)) send(placed);
    if (!upTo && isFinished(job.status)) finish();
  };
  const heard = (notice: RunNotice) =>
    inTurn(() => {
      if (notice.id && notice.event) send({ id: notice.id, event: notice.event });
      else return catchUp(eventPlace(notice.id) ?? undefined);
    });

  const unsubscribe: (() => void)[] = [];
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
  const timeout = setTimeout(finish, Math.max(0, context.deadline - Date.now() - endMarginMs));
  context.signal.addEventListener('abort', finish);
  try {
    unsubscribe.push(await services.runEvents.subscribe(run.id, heard));
    unsubscribe.push(
      await services.jobEvents.subscribe(run.id, (change) => {
        // 'unknown': the connection came back, and what was notified meanwhile is lost.
        if (change.status === 'unknown' || isFinished(change.status as Job['status'])) inTurn(() => catchUp());
      }),
    );
    inTurn(() => catchUp());
    await over;
  } finally {
    for (const stop of unsubscribe) stop();
    clearInterval(keepAlive);
    clearTimeout(timeout);
    context.signal.removeEventListener('abort', finish);
    res.end();
  }
}
