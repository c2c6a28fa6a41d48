// What a job costs in credits: whole credits, rounded up, but never a credit
// more for a float's rounding error; tokens read and written each at their
// price; a model priced by the operator before the catalog.
import { costAt } from '../../core/credits/prices.ts';
import { dearestTokenPrice, modelPrice, tokenCost } from '../../core/providers/prices.ts';

describe('costAt', () => {
  it.each([
    [2, 1.5, 3],
    [0.5, 3, 2],
    [0.001, 1, 1],
    // 0.1 × 30 is 3.0000000000000004 in floating point: still 3 credits, not 4.
    [0.1, 30, 3],
    [0.07, 100, 7],
  ])('charges %s credits per unit for %s units as %s', (price, units, credits) => {
    expect(costAt(price, units)).toBe(credits);
  });
});

describe('tokenCost', () => {
  it('prices tokens read and tokens written each at their own price, per 1,000', () => {
    expect(tokenCost({ unit_price: 2, output_unit_price: 6 }, { inputTokens: 1500, outputTokens: 500 })).toBe(6);
  });

  it('prices tokens written as those read when the model has one price', () => {
    expect(tokenCost({ unit_price: 2 }, { inputTokens: 1000, outputTokens: 1000 })).toBe(4);
  });

  it('reserves at the dearer of the two prices', () => {
    expect(dearestTokenPrice({ unit_price: 2, output_unit_price: 6 })).toBe(6);
    expect(dearestTokenPrice({ unit_price: 2 })).toBe(2);
  });
});

describe('modelPrice', () => {
  const none = { prices: {}, outputPrices: {} };

  it('takes the price the operator configured before the catalog', () => {
    const configured = { prices: { openai: { speech: { 'tts-1': 9 } } }, outputPrices: {} };
    expect(modelPrice(configured, 'speech', 'openai', 'tts-1')).toMatchObject({ unit_price: 9, source: 'configured' });
  });

  it('bills a model the catalog does not know, when priced, in the unit usual for its capability', () => {
    const configured = { prices: { openai: { text: { 'local-llm': 0.5 } } }, outputPrices: {} };
    expect(modelPrice(configured, 'text', 'openai', 'local-llm')).toEqual({
      unit: '1k_tokens',
      unit_price: 0.5,
      source: 'configured',
    });
  });

  it('knows no price for a model neither the operator nor the catalog prices', () => {
    expect(modelPrice(none, 'text', 'openai', 'local-llm')).toBeUndefined();
  });
});
