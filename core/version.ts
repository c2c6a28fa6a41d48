import { readFileSync } from 'node:fs';
import path from 'node:path';

const pkg = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

export const service = { name: pkg.name, version: pkg.version, startedAt: Date.now() };

export const uptimeSeconds = () => Math.round((Date.now() - service.startedAt) / 1000);
