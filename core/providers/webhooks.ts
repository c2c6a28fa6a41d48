// What a vendor that finishes work later (Replicate, fal) offers besides its
// capabilities: its webhooks, verified by its own scheme before anything is
// read (Replicate signs the Standard Webhooks way with the account's secret;
// fal with ED25519 against its published keys), and a way to cancel work it
// holds. A delivery is told in one shape, whichever vendor sent it; core
// settles the job from it exactly once (core/media/webhook.ts).

/** A verified webhook, in one shape for every vendor. */
export type Delivery = {
  /** The vendor's id for this message: the same on a retry, so a duplicate is seen. */
  eventId: string;
  /** The vendor's id for the work (Pending.ref). */
  ref: string;
  /** Only succeeded, failed and canceled end the work; running is progress (or a late event), acknowledged and ignored. */
  state: 'running' | 'succeeded' | 'failed' | 'canceled';
  /** The vendor's output as sent, for the adapter's `collect`. */
  output: unknown;
  /** The vendor's own words for a failure, for the log; tenants read a plain sentence. */
  error?: string | undefined;
};

export type AsyncVendor = {
  /**
   * Verifies a webhook's signature (and freshness) over the raw body, and
   * reads it: throws a 401 Problem of type invalid-signature when it does not
   * verify, a 422 when it verifies but is not a delivery.
   */
  verify(headers: Record<string, string | undefined>, rawBody: Buffer, now?: number): Promise<Delivery>;
  /** Asks the vendor to stop work it holds; done when the vendor says it is canceled or already ended. */
  cancel(ref: string, signal: AbortSignal): Promise<void>;
};
