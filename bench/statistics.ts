// What counting requests for the site statistics costs: the authenticated
// single-row read (GET /sites/{slug}) loaded on two API processes of the same
// build, one counting and one started with STATS_COUNTING=false, in
// interleaved rounds; the figure is the counting one's throughput as a share
// of the other's (the issue asks that it lose at most 5%).
import { interleaved, rate, ratio } from './compare.ts';
import { benchSite } from './http.ts';
import type { ApiLauncher } from './request-path.ts';

export async function countingFigures(
  _apiUrl: string,
  token: string,
  databaseUrl: string,
  launchApi: ApiLauncher,
): Promise<[string, string][]> {
  const counting = await launchApi(databaseUrl, {});
  const silent = await launchApi(databaseUrl, { STATS_COUNTING: 'false' });
  try {
    const site = await benchSite(counting.url, token, 'Counting bench');
    const headers = { Authorization: `Bearer ${token}` };
    const loads = await interleaved(
      {
        off: { url: `${silent.url}/sites/${site.slug}`, headers },
        on: { url: `${counting.url}/sites/${site.slug}`, headers },
      },
      4,
      5,
    );
    return [
      [
        'Counting: load client',
        '32 connections; 4 interleaved rounds of 5 s after one unrecorded warm-up round; medians (ranges of the rounds’ ratios)',
      ],
      ['GET /sites/{slug} with a token, counting off', rate(loads.off)],
      [
        'GET /sites/{slug} with a token, counting on',
        `${rate(loads.on)}; ${ratio(loads.on, loads.off)} of counting off (target ≥ 0.95)`,
      ],
    ];
  } finally {
    await Promise.all([counting.stop(), silent.stop()]);
  }
}
