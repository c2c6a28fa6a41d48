// Loads every task in worker/tasks/: the file name is the task identifier
// (`area__action`), the default export its definition.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TaskList } from 'graphile-worker';
import { toGraphileTask, type TaskDefinition, type TaskDeps } from './task.ts';

export const tasksDir = path.join(import.meta.dirname, 'tasks');

export async function loadTaskDefinitions(dir = tasksDir): Promise<Map<string, TaskDefinition>> {
  const definitions = new Map<string, TaskDefinition>();
  const files = readdirSync(dir)
    .filter((name) => /^[a-z0-9_]+\.ts$/.test(name))
    .sort();
  for (const file of files) {
    const module = (await import(pathToFileURL(path.join(dir, file)).href)) as { default?: TaskDefinition };
    if (!module.default?.payload || !module.default.run) {
      throw new Error(`worker/tasks/${file} must export default defineTask({ payload, run })`);
    }
    definitions.set(path.basename(file, '.ts'), module.default);
  }
  return definitions;
}

export function toTaskList(definitions: Map<string, TaskDefinition>, deps: TaskDeps): TaskList {
  return Object.fromEntries(
    [...definitions].map(([identifier, definition]) => [identifier, toGraphileTask(identifier, definition, deps)]),
  );
}
