// Examples written by hand for the operations a newcomer meets first (sign in,
// submit a job, make a type, an element, a page, a post, give credits), one
// story across them: the harbour bakery's site. By `METHOD path` as in the
// document; each is checked against its schema (test/api/openapi-examples.test.ts).
// What is not here is built from the schema (./openapi-examples.ts).

type Written = { request?: unknown; responses?: Record<string, unknown> };

const ids = {
  site: '5b7c1f0e-2d4a-4e8b-9c3f-7a1d2e3f4a5b',
  user: '8d2e4f6a-1b3c-4d5e-8f7a-9b0c1d2e3f4a',
  job: 'c3a9e2f1-7b6d-4c5e-a8f9-0d1e2f3a4b5c',
  media: '1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b',
};

const speechJob = {
  id: ids.job,
  site_id: ids.site,
  user_id: ids.user,
  kind: 'speech',
  status: 'queued',
  progress: 0,
  stage: 'Waiting for a worker',
  input: { text: 'Fresh bread every morning at the harbour bakery.', voice: 'female', format: 'mp3' },
  output: null,
  error: null,
  attempts: 0,
  max_attempts: 3,
  priority: 0,
  credits_reserved: 5,
  credits_charged: 0,
  provider: null,
  test_mode: false,
  media_id: null,
  media_ids: [],
  webhook: null,
  webhook_events: [],
  created_at: '2026-03-01T09:30:00.000Z',
  started_at: null,
  waiting_at: null,
  finished_at: null,
  canceled_at: null,
  updated_at: '2026-03-01T09:30:00.000Z',
};

export const writtenExamples: Record<string, Written> = {
  'POST /auth/login': {
    // The e-mail address goes in `username` (the OAuth 2.0 password grant's name for it).
    request: { username: 'ada@example.com', password: 'correct horse battery staple' },
    responses: {
      200: {
        access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI4ZDJlIn0.c2lnbmF0dXJl',
        token_type: 'bearer',
        expires_in: 900,
        refresh_token: 'rt_3q2-QyJ0bXlK8sV1o0nW4g',
      },
    },
  },
  'POST /auth/token': {
    request: { grant_type: 'client_credentials', client_id: 'sa_7Hc2kq9Lm', client_secret: 'sas_Jx8v2N4pQ7rT1wZ5' },
  },
  'POST /{site_identifier}/media/tts': {
    request: {
      text: 'Fresh bread every morning at the harbour bakery.',
      voice: 'female',
      format: 'mp3',
      webhook: 'https://bakery.example.com/hooks/jobs',
      webhook_events: ['completed'],
    },
    responses: { 202: speechJob },
  },
  'GET /{site_identifier}/jobs/{job_id}': {
    // The speech job above, done: its audio is the media item `media_id` names.
    responses: {
      200: {
        ...speechJob,
        status: 'succeeded',
        progress: 1,
        stage: 'Done',
        output: { duration_seconds: 3.2, format: 'mp3', size_bytes: 51234, characters: 48, provider: 'openai' },
        attempts: 1,
        credits_charged: 5,
        provider: 'openai',
        media_id: ids.media,
        media_ids: [ids.media],
        started_at: '2026-03-01T09:30:01.000Z',
        finished_at: '2026-03-01T09:30:04.000Z',
        updated_at: '2026-03-01T09:30:04.000Z',
      },
    },
  },
  'POST /{site_identifier}/media/generate': {
    request: { prompt: 'A lighthouse at dusk above a harbour bakery, in watercolour', size: '1024x1024' },
    responses: {
      202: {
        ...speechJob,
        kind: 'image',
        input: { prompt: 'A lighthouse at dusk above a harbour bakery, in watercolour', size: '1024x1024' },
        credits_reserved: 20,
      },
    },
  },
  'POST /{site_identifier}/seo/generatetext': {
    // One source: the text itself here, or a post, page or media item of the site by id.
    request: { kind: 'title', text: 'Fresh bread every morning, and a new cake each Friday, at the harbour.' },
  },
  'POST /{site_identifier}/contenttypes/': {
    request: {
      name: 'Recipe',
      api_id: 'recipe',
      description: 'A recipe of the bakery',
      fields: [
        { id: 'title', label: 'Title', type: 'text', required: true },
        { id: 'minutes', label: 'Baking time (minutes)', type: 'integer' },
        { id: 'photo', label: 'Photo', type: 'media' },
      ],
    },
  },
  'POST /{site_identifier}/elements/': {
    // `type` names the content type by its api_id (or id); `data` holds a value per field id.
    request: { type: 'recipe', name: 'Sourdough loaf', data: { title: 'Sourdough loaf', minutes: 45 } },
  },
  'POST /{site_identifier}/pages/': {
    request: {
      slug: 'about',
      title: 'About the bakery',
      status: 'draft',
      seo: { title: 'About the harbour bakery', description: 'Who bakes, and since when' },
    },
  },
  'POST /{site_identifier}/posts/': {
    request: {
      title: 'Spring opening hours',
      body: '# Spring opening hours\n\nFrom March we open at **7 a.m.**, Monday to Saturday.',
      tags: ['news'],
      status: 'published',
    },
  },
  'POST /mcp': {
    // The Model Context Protocol's own messages, as JSON-RPC 2.0: here, asking for the tools.
    request: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  },
  'POST /payments/webhook': {
    // Stripe's event, as Stripe sends it (signed with Stripe-Signature); only the fields read are listed.
    request: { id: 'evt_1PqRsTuVwXyZ', type: 'checkout.session.completed', data: { object: { id: 'cs_test_a1B2c3' } } },
  },
  'POST /{site_identifier}/transactions/credits/add': {
    request: { user_id: ids.user, amount: 500, reason: 'Welcome credits' },
  },
  'POST /{site_identifier}/transactions/credits/allocate-from-tenant': {
    request: { user_id: ids.user, amount: 200, reason: 'March speech budget' },
  },
};
