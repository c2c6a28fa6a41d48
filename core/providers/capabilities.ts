// What the platform asks of an AI provider, one small interface per
// capability. A vendor's adapter is one module per capability that
// implements it (core/providers/<vendor>/<capability>.ts): it turns the
// request into the vendor's call and the answer into a result, and talks to
// the vendor and nothing else — no SQL, no job state; core/providers/chain.ts
// and the job handlers do the rest. It fails by throwing a JobError
// (core/jobs/errors.ts): transient for what may pass (unreachable, timed out,
// 5xx, 429 — with `retryAfterMs` when the vendor named a wait, and `status`),
// permanent for what asking again would not change (the vendor refused the
// input, answered garbage, a key is missing).
//
// Vendors that finish work later (Replicate, fal) answer `Pending` with their
// id for the work; their signed webhook then reaches the platform, which
// verifies it with the vendor's `webhooks` (./webhooks.ts) and, once the job
// resumes, hands the delivered output to the adapter's `collect`.

export const capabilities = ['image', 'image_edit', 'video', 'speech', 'text', 'embeddings'] as const;
export type Capability = (typeof capabilities)[number];

/** One call: the model it is for (one the operator allows), and the job's signal (canceled: stop, abort the call). */
export type Call = {
  model: string;
  signal: AbortSignal;
  /**
   * Where an asynchronous vendor posts its webhook for this work (our job is
   * named in it, so a delivery that comes before its id was recorded is
   * still placed). Only given to adapters whose vendor sends webhooks.
   */
  webhookUrl?: string | undefined;
};

/** Work a vendor took on and will report by webhook: its id for it. */
export type Pending = { pending: true; ref: string };

export const isPending = (value: unknown): value is Pending =>
  typeof value === 'object' && value !== null && (value as Pending).pending === true;

/** A file a vendor made, as bytes. */
export type File = { bytes: Buffer; contentType?: string | undefined };

// ---- image ----------------------------------------------------------------

export type ImageGeneration = {
  prompt: string;
  count: number;
  /** Pixels asked for; the model's catalog entry (./models.ts) says which it makes, checked at submit. */
  width: number;
  height: number;
  quality?: 'low' | 'medium' | 'high' | 'auto' | undefined;
  background?: 'transparent' | 'opaque' | 'auto' | undefined;
  format: 'png' | 'jpeg' | 'webp';
  seed?: number | undefined;
};

export type ImageGenerator = {
  generate(request: ImageGeneration, call: Call): Promise<File[] | Pending>;
  /** The images a webhook delivered (`output` as the vendor sent it), fetched where they are URLs. */
  collect?(output: unknown, call: Call): Promise<File[]>;
};

// ---- image edit -----------------------------------------------------------

export type ImageEdit = {
  instruction: string;
  image: File;
  /** Where to edit: transparent pixels mark it (OpenAI's convention). */
  mask?: File | undefined;
  count: number;
  width?: number | undefined;
  height?: number | undefined;
  format: 'png' | 'jpeg' | 'webp';
};

export type ImageEditor = {
  edit(request: ImageEdit, call: Call): Promise<File[] | Pending>;
  collect?(output: unknown, call: Call): Promise<File[]>;
};

// ---- video ----------------------------------------------------------------

export type VideoGeneration = {
  prompt: string;
  /** Seconds asked for; the model's catalog entry says which it makes. */
  seconds: number;
  width: number;
  height: number;
  seed?: number | undefined;
  /** A first frame, when the request names an image. */
  image?: File | undefined;
};

export type VideoGenerator = {
  generate(request: VideoGeneration, call: Call): Promise<File | Pending>;
  collect?(output: unknown, call: Call): Promise<File>;
};

// ---- speech ---------------------------------------------------------------

export type SpeechSynthesis = {
  text: string;
  /** The vendor's voice id or name (our neutral names mapped by the adapter: default, female, male). */
  voice: string;
  /** BCP 47. */
  language: string;
  /** 0.5–2; an adapter whose vendor cannot change the tempo says so with speedApplied: false. */
  speed: number;
};

/** Audio in any format ffmpeg reads. `characters`: what the vendor bills, when it bills by characters. */
export type Speech = { audio: Buffer; speedApplied: boolean; characters?: number | undefined };

export type SpeechSynthesizer = {
  synthesize(request: SpeechSynthesis, call: Call): Promise<Speech | Pending>;
  collect?(output: unknown, call: Call): Promise<Speech>;
};

// ---- text (chat, with tools) ----------------------------------------------

export type ToolCall = { id: string; name: string; /** JSON text, as the model wrote it. */ arguments: string };

/** A part of a user's message: text, or a picture the model looks at (vision models). */
export type ContentPart = { type: 'text'; text: string } | { type: 'image'; image: File };

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] | undefined }
  | { role: 'tool'; toolCallId: string; content: string };

export type ToolDefinition = { name: string; description: string; /** JSON Schema */ parameters: object };

export type ChatRequest = {
  messages: ChatMessage[];
  tools?: ToolDefinition[] | undefined;
  /** auto (default with tools), none, required, or one tool by name. */
  toolChoice?: 'auto' | 'none' | 'required' | { name: string } | undefined;
  temperature?: number | undefined;
  /** Ask for one JSON object as the answer. */
  json?: boolean | undefined;
  maxOutputTokens?: number | undefined;
  /**
   * Hears the answer's text as the model writes it, piece by piece (an
   * agent run's events): the adapter then asks for a streamed answer. The
   * answer it returns is the same whole answer either way.
   */
  onText?: ((delta: string) => void) | undefined;
};

export type ChatAnswer = {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** Tokens as the vendor reports them; estimated by the caller when absent. */
  usage?: { inputTokens: number; outputTokens: number } | undefined;
};

export type ChatModel = {
  chat(request: ChatRequest, call: Call): Promise<ChatAnswer>;
};

// ---- embeddings -----------------------------------------------------------

export type Embeddings = { vectors: number[][]; tokens: number | null };

export type Embedder = {
  embed(texts: string[], call: Call & { dimensions?: number | undefined }): Promise<Embeddings>;
};

// ---- what each capability's adapter is --------------------------------------

export type AdapterOf = {
  image: ImageGenerator;
  image_edit: ImageEditor;
  video: VideoGenerator;
  speech: SpeechSynthesizer;
  text: ChatModel;
  embeddings: Embedder;
};

/** How to reach a vendor: its key and base URL (every one overridable, for compatible servers and fakes). */
export type VendorSettings = {
  apiKey: string | undefined;
  baseUrl: string;
  /** Per call, the answer's body included. */
  timeoutMs: number;
};
