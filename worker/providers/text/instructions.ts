// The system message of a text job: the system prompt of its kind that the
// job was submitted with (core/system-prompts/for-jobs.ts), else the
// built-in guidance, and then what this job asks — the item, its limits and
// language, and the JSON answer the job reads. A stored prompt replaces only
// the guidance: the job could not read an answer of another shape.
export function instructionsFor(systemPrompt: string | undefined, builtIn: string, asked: string[]): string {
  const task = asked.filter(Boolean).join(' ');
  if (systemPrompt) return `${systemPrompt}\n\n${task}`;
  return [builtIn, task].filter(Boolean).join(' ');
}
