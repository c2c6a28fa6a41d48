-- An agent that searches its knowledge base with a run's input before the
-- run's first model call, the passages handed to the model with their markers
-- (worker/agents/loop.ts); off by default, when the model decides with its
-- knowledge_search tool.
alter table agents add column knowledge_first boolean not null default false;
