// The bench's calls to a running service: JSON in and out with the bench
// user's token, and a fresh tenant and site for each set of figures.

export async function api<T>(
  url: string,
  token: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** A new tenant administered by the bench user, with one site; `credits` given to the user on it. */
export async function benchSite(url: string, token: string, name: string, credits = 0): Promise<{ slug: string }> {
  const me = await api<{ id: string }>(`${url}/auth/currentuser`, token, 'GET');
  const tenant = await api<{ id: string }>(`${url}/admin/tenants/`, token, 'POST', { name });
  await api(`${url}/admin/tenants/${tenant.id}/users/${me.id}`, token, 'POST', { role: 'admin' });
  const slug = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Date.now()}`;
  const site = await api<{ slug: string }>(`${url}/sites/`, token, 'POST', { tenant_id: tenant.id, name, slug });
  if (credits)
    await api(`${url}/${site.slug}/transactions/credits/add`, token, 'POST', { user_id: me.id, amount: credits });
  return site;
}
