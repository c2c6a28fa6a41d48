// Agents in tests: made and assigned through HTTP by a global administrator.
import request from 'supertest';
import type { TestApp } from './app.ts';
import type { Caller } from './factories.ts';

export type AgentBody = { id: string; name: string; tools: string[]; avatar_media_id: string | null; status: string };

/** An agent made by `admin` with `body` (a name by default), assigned to `tenants`. */
export async function newAgent(
  t: TestApp,
  admin: Caller,
  body: Record<string, unknown> = {},
  tenants: string[] = [],
): Promise<AgentBody> {
  const res = await request(t.app)
    .post('/api/agents')
    .set(admin.auth)
    .send({ name: 'Helper', ...body })
    .expect(201);
  for (const tenant of tenants) {
    await request(t.app).post(`/api/agents/${res.body.id}/tenants/${tenant}`).set(admin.auth).expect(201);
  }
  return res.body as AgentBody;
}
