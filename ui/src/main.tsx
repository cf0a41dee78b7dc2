import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { preferences } from './preferences';
import { applyTheme } from './shell/useTheme';
import './styles.css';

applyTheme(preferences.theme());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
