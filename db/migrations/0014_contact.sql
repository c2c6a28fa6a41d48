-- Messages sent through the public contact form. Every message is kept, the
-- ones judged spam too (with why), so a false positive can be found again;
-- only the others are mailed (through email_outbox).
create table contact_messages (
  id uuid primary key default gen_random_uuid(),
  site_id uuid references sites (id) on delete set null,
  tenant_id uuid references tenants (id) on delete set null,
  name text not null,
  email text not null,
  subject text not null,
  message text not null,
  status text not null check (status in ('received', 'spam')),
  spam_reasons text[] not null default '{}',
  ip text,
  user_agent text,
  created_at timestamptz not null default now()
);
create index contact_messages_created_idx on contact_messages (created_at);
create index contact_messages_site_idx on contact_messages (site_id, created_at) where site_id is not null;
