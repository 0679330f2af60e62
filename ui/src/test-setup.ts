import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// findBy*/waitFor wait for an event (an answer rendered, a button enabled) and fail only when it never
// comes: 5 s instead of Testing Library's 1 s default, so a loaded machine (npm run test:loaded) slows
// them down without failing them.
configure({ asyncUtilTimeout: 5_000 });

afterEach(() => {
  cleanup();
  sessionStorage.clear();
});
