import { afterAll, beforeAll, beforeEach } from "vitest";
import { startMockProvider, type MockProvider } from "../server.js";

/** The API key the mock provider of a test file accepts. */
export const TEST_KEY = "sk-mock-test-key";

/**
 * The mock provider of one test file: started before its tests, back to normal behaviour
 * (and its recorded requests forgotten) before each, closed after them. The object returned
 * is filled in by `beforeAll`, so a file holds it in a `const`.
 */
export function providerPerFile(): MockProvider {
  const provider = {} as MockProvider;
  beforeAll(async () => {
    Object.assign(provider, await startMockProvider({ apiKey: TEST_KEY }));
  });
  afterAll(() => provider.close?.());
  beforeEach(() => provider.reset());
  return provider;
}
