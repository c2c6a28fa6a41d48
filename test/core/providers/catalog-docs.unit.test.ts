// docs/providers.md lists every model of the catalog with its unit and price(s),
// so the page an operator reads cannot drift from what the platform checks.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { allModels } from '../../../core/providers/catalog.ts';

const page = readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'docs', 'providers.md'), 'utf8');
const rows = page
  .split('\n')
  .filter((line) => line.startsWith('| '))
  .map((line) => line.split('|').map((cell) => cell.trim()));

it.each(
  allModels()
    .filter((spec) => spec.vendor !== 'local')
    .map((spec) => [spec.vendor, spec.model, spec] as const),
)('lists %s %s with its unit and price', (vendor, model, spec) => {
  const row = rows.find((cells) => cells[1] === vendor && cells[2] === spec.capability && cells[3] === `\`${model}\``);
  expect(row).toBeDefined();
  expect(row![4]).toBe(spec.unit);
  // A chat model's two prices, for the tokens it reads and those it writes: `0.08 / 0.45`.
  const [read, written] = row![5]!.split('/').map(Number);
  expect(read).toBe(spec.defaultPrice);
  expect(written).toBe(spec.outputPrice);
});
