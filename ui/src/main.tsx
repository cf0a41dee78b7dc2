import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { preferences } from './preferences';
import { applyTheme } from './useTheme';
import './styles.css';

applyTheme(preferences.theme());

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root to render into');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
