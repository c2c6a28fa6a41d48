// The access line is built by hand for speed (core/logger.ts accessLog): it
// must read exactly as the line pino itself would write, and obey the level.
import { pino } from 'pino';
import { accessLog } from '../../core/logger.ts';

function capture(level: string) {
  const lines: string[] = [];
  const logger = pino(
    { level, base: { pid: process.pid, process: 'api' }, timestamp: pino.stdTimeFunctions.isoTime },
    { write: (line: string) => void lines.push(line) },
  );
  return { logger, lines };
}

const withoutTime = (line: string) => {
  const { time, ...rest } = JSON.parse(line) as { time: string };
  expect(new Date(time).toISOString()).toBe(time);
  return rest;
};

describe('accessLog', () => {
  it('writes the line pino would, field for field, escaping what the URL holds', () => {
    const { logger, lines } = capture('info');
    const line = {
      id: 'req-1',
      method: 'GET',
      url: '/public/a/pages?q="quoted"\\\n\u2028é',
      status: 200,
      responseTime: 3,
    };
    accessLog(logger)('info', line, 'request completed');
    logger.info(
      { req: { id: line.id, method: line.method, url: line.url }, res: { status: 200 }, responseTime: 3 },
      'request completed',
    );
    expect(lines).toHaveLength(2);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(withoutTime(lines[0]!)).toEqual(withoutTime(lines[1]!));
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual(Object.keys(JSON.parse(lines[1]!)));
  });

  it('writes nothing below the logger’s level', () => {
    const { logger, lines } = capture('error');
    const access = accessLog(logger);
    const line = { id: 'req-2', method: 'POST', url: '/x', status: 404, responseTime: 1 };
    access('info', line, 'request completed');
    access('warn', line, 'request completed');
    expect(lines).toHaveLength(0);
    access('error', { ...line, status: 500 }, 'request errored');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, res: { status: 500 }, msg: 'request errored' });
  });
});
