import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, beforeEach } from 'vitest';
import { NO_PREFERENCES, adoptPreferences } from '../preferences';

// Each test starts as a first launch: no preferences read yet (the module keeps them between renders).
beforeEach(() => adoptPreferences(NO_PREFERENCES));
afterEach(() => cleanup());
