// An agent run's events, published as they happen (core/agents/run-event-channel.ts)
// for the streams that follow the run. They are a view of what the run
// records, not a record: they go out in the job's background writes
// (worker/background.ts), in order and without the run waiting for them
// (those that pile up meanwhile go together, in one statement),
// and one that cannot be published is logged while the run goes on (a stream
// reads the durable ones from the record anyway). The job's end is announced
// only after all of them are out.
//
// The model's text is batched: a piece goes out every 100 ms, or sooner once
// 1,000 characters are waiting, so a fast model does not send a notification
// per token. A piece is at most 1,000 UTF-16 units, which JSON writes in at
// most 6,000 bytes (\uXXXX), below PostgreSQL's 8,000-byte notifications.
import { publishRunEvents } from '../../core/agents/run-event-channel.ts';
import { eventIds, type PlacedEvent } from '../../core/agents/run-events.ts';
import type { JobContext } from '../job.ts';

const batchMs = 100;
const pieceChars = 1000;

export class RunPublisher {
  readonly #context: Pick<JobContext, 'db' | 'job' | 'background'>;
  /** Events waiting for their turn: they go out together, in one statement. */
  #waiting: PlacedEvent[] = [];

  constructor(context: Pick<JobContext, 'db' | 'job' | 'background'>) {
    this.#context = context;
  }

  /** Publishes the event after those before it. */
  publish(placed: PlacedEvent): void {
    const { db, job, background } = this.#context;
    this.#waiting.push(placed);
    if (this.#waiting.length > 1) return;
    background.add('agent run events', () => {
      const events = this.#waiting;
      this.#waiting = [];
      return publishRunEvents(db, job.id, events);
    });
  }

  /** The text of model step `step`, as this attempt of the job hears it. */
  text(step: number): TextStream {
    return new TextStream(this, step, this.#context.job.attempts);
  }
}

/** One model step's text: heard piece by piece, published in batches. */
export class TextStream {
  readonly #publisher: RunPublisher;
  readonly #step: number;
  readonly #attempt: number;
  #waiting = '';
  /** Where the waiting text begins in the step's text. */
  #offset = 0;
  #pieces = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(publisher: RunPublisher, step: number, attempt: number) {
    this.#publisher = publisher;
    this.#step = step;
    this.#attempt = attempt;
  }

  /** For the model's adapter (ChatRequest.onText). */
  readonly hear = (delta: string): void => {
    this.#waiting += delta;
    if (this.#waiting.length >= pieceChars) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), batchMs);
  };

  /** The model is asked again for this step (the next provider): its text begins again at 0. */
  restart(): void {
    this.#flush();
    this.#offset = 0;
  }

  /** Publishes what is waiting: the step's text ends here. */
  end(): void {
    this.#flush();
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    let text = this.#waiting;
    this.#waiting = '';
    while (text) {
      let size = Math.min(pieceChars, text.length);
      // A surrogate pair is not cut in two.
      if (size < text.length && /[\uD800-\uDBFF]/.test(text[size - 1]!)) size -= 1;
      const piece = text.slice(0, size);
      text = text.slice(size);
      this.#publisher.publish({
        id: eventIds.text(this.#step, this.#attempt, ++this.#pieces),
        event: { type: 'text.delta', step: this.#step, offset: this.#offset, text: piece },
      });
      this.#offset += piece.length;
    }
  }
}
