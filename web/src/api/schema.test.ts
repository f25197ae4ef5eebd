import openapiTS from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import got from './schema.d.ts?raw';

// The page's API types are generated from api/openapi.yaml; a changed document must be
// followed by `npm run gen:api`, or the page would compile against an old contract.
describe('schema.d.ts', () => {
  it('is what openapi-typescript writes for api/openapi.yaml now', async () => {
    const want = await openapiTS(new URL('../../../api/openapi.yaml', import.meta.url));
    expect(got === want, 'web/src/api/schema.d.ts is stale: run `npm run gen:api` in web/').toBe(true);
  });
});
