// The strict reader of Prometheus' text format that the /metrics tests rely on
// (test/helpers/prometheus-text.ts): it must refuse what Prometheus refuses,
// or a test passing through it proves nothing.
import { parsePrometheusText, sampleOf } from '../helpers/prometheus-text.ts';

const valid = `# HELP requests_total Requests, by route.
# TYPE requests_total counter
requests_total{route="GET /a",status="200"} 3
requests_total{route="say \\"hi\\"\\\\n",status="500",} 1 1700000000000
# TYPE wait_seconds histogram
wait_seconds_bucket{kind="x",le="0.5"} 1
wait_seconds_bucket{kind="x",le="+Inf"} 2
wait_seconds_sum{kind="x"} 1.5e0
wait_seconds_count{kind="x"} 2
# a comment
lag Nan
up +Inf
`;

describe('the Prometheus text reader of the tests', () => {
  it('reads families, labels (escapes and a trailing comma), values (NaN, Inf) and timestamps', () => {
    const read = parsePrometheusText(valid);
    expect(read.families.get('requests_total')).toMatchObject({ type: 'counter', help: 'Requests, by route.' });
    expect(read.families.get('wait_seconds')?.samples).toHaveLength(4);
    expect(sampleOf(read, 'requests_total', { status: '500' })?.labels.route).toBe('say "hi"\\n');
    expect(sampleOf(read, 'lag')?.value).toBeNaN();
    expect(sampleOf(read, 'up')?.value).toBe(Infinity);
    expect(read.families.get('lag')?.type).toBe('untyped');
  });

  it.each([
    ['no line feed at the end', 'a 1'],
    ['a bad metric name', '1a 1\n'],
    ['a value that is not a float', 'a one\n'],
    ['a bad timestamp', 'a 1 soon\n'],
    ['an unterminated label value', 'a{b="c} 1\n'],
    ['an unknown escape', 'a{b="\\t"} 1\n'],
    ['a label twice', 'a{b="1",b="2"} 1\n'],
    ['a reserved label name', 'a{__b="1"} 1\n'],
    ['an unknown type', '# TYPE a number\na 1\n'],
    ['two TYPE lines', '# TYPE a gauge\n# TYPE a gauge\na 1\n'],
    ['TYPE after the samples', 'a 1\n# TYPE a gauge\n'],
    ['a metric in two groups', 'a 1\nb 1\na{c="d"} 1\n'],
    ['one series twice', 'a{b="1"} 1\na{b="1"} 2\n'],
    ['a negative counter', '# TYPE a counter\na -1\n'],
    ['a histogram with no +Inf bucket', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
    [
      'a histogram whose +Inf bucket is not its count',
      '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n',
    ],
    [
      'buckets that are not cumulative',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
    ],
  ])('refuses %s', (_why, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
